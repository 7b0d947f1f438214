"""The elastic policy's per-period step, the same for the simulator and the Spark runner.

Each engine measures its pool in its own way (the simulator counts its processors; the
Spark runner asks Spark which executors are registered) and its capacity in processor
seconds per second. :class:`PoolControl` takes the steps both engines take: the job's
usage u, the policy's step (a resize when one is due: the engine's pool follows
``policy.target``), the record of every action, and the shed fractions bounded to what
scaling cannot cover (spec §5; :mod:`spark_runner.core.elastic`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spark_runner.control.period import rounded
from spark_runner.core.elastic import (
    ScalingParams,
    ScalingPolicy,
    bounded_shed,
    job_thresholds,
    job_usage,
)
from spark_runner.core.params import build_params
from spark_runner.core.thresholds import Thresholds

log = logging.getLogger(__name__)


class PoolControl:
    """The policy of one run's pool, its actions and its last usage."""

    def __init__(self, params: ScalingParams) -> None:
        self.params = params
        self.policy = ScalingPolicy(params, params.min_executors)
        self.actions: list[dict[str, Any]] = []
        self.usage = 0.0

    def retune(self, per_class: Iterable[Thresholds]) -> None:
        """A live configuration changed the classes' thresholds: the job's follow."""
        thresholds = job_thresholds(per_class)
        if thresholds:
            self.params = build_params(ScalingParams, thresholds, base=self.params)
            self.policy.params = self.params

    @property
    def target(self) -> int:
        """The size the pool should have (the engine's pool follows it)."""
        return self.policy.target

    def step(
        self,
        t_s: float,
        loads: Mapping[str, float],
        capacity: float,
        executors: int,
        free_executors: int,
        shed: Mapping[str, float],
        order: Sequence[str],
    ) -> dict[str, float]:
        """One period: ``loads`` offered per class and the pool's ``capacity`` (both s/s)
        with ``executors`` serving and ``free_executors`` more available; ``shed`` the
        managers' fractions, ``order`` the classes highest priority first. Returns the
        fractions to apply."""
        usage = self.usage = job_usage(loads, capacity)
        action = self.policy.step(t_s, usage, executors, free_executors)
        if action is not None:
            log.info(
                "%s: u %.2f past %.2f for %.0f s, executors %d -> %d",
                action.rule,
                usage,
                action.threshold,
                action.held_s,
                action.executors_before,
                action.executors_after,
            )
            self.actions.append(dataclasses.asdict(action))
        bound = self.policy.shed_bound(usage, executors, free_executors)
        return dict(shed) if bound is None else bounded_shed(shed, loads, bound, order)

    def sample(self, executors: int) -> dict[str, Any]:
        """A series entry's pool fields."""
        return {
            "executors": executors,
            "executors_requested": self.target,
            "usage": rounded(self.usage),
        }


def scaling_summary(
    params: ScalingParams | None, pool: PoolControl | None, reason: str | None = None
) -> dict[str, Any] | None:
    """The results' ``scaling`` part (None: the scenario asks no elasticity)."""
    if params is None:
        return None
    return {
        "enabled": pool is not None,
        "reason": reason,
        "params": dataclasses.asdict(pool.params if pool is not None else params),
        "actions": pool.actions if pool is not None else [],
    }

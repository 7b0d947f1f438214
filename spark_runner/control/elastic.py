"""The elastic policy's per-period step, the same for the simulator and the Spark runner.

Each engine measures its pool in its own way (the simulator counts its processors; the
Spark runner asks Spark which executors are registered) and its capacity in processor
seconds per second. :class:`PoolControl` takes the steps both engines take: the job's
usage u, the policy's step (a resize when one is due: the engine's pool follows
``policy.target``; the engine's action log records it), and the shed fractions bounded
to what scaling cannot cover (spec §5; :mod:`spark_runner.core.elastic`). A cluster
coordinator may cap the pool (``cap``: :mod:`spark_runner.core.coordinator`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from spark_runner.control.period import rounded
from spark_runner.core.elastic import (
    ScalingAction,
    ScalingParams,
    ScalingPolicy,
    bounded_shed,
    job_usage,
)

log = logging.getLogger(__name__)


class PoolControl:
    """The policy of one run's pool, its actions and its last usage."""

    def __init__(self, params: ScalingParams) -> None:
        self.params = params
        self.policy = ScalingPolicy(params, params.min_executors)
        self.last_action: ScalingAction | None = None
        self.usage = 0.0
        self.cap: int | None = None
        """The cluster coordinator's allocation: the most executors the pool may hold
        (None: only ``max_executors`` bounds it)."""

    @property
    def limit(self) -> int:
        """The most executors the pool may hold now."""
        most = self.params.max_executors
        return most if self.cap is None else min(most, self.cap)

    def retune(self, params: ScalingParams) -> None:
        """A live configuration changed the settings (or the classes' thresholds, which
        are the job's): they hold from the next period."""
        self.params = self.policy.params = params

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
        fractions to apply; ``last_action`` is the resize asked this period (or None)."""
        usage = self.usage = job_usage(loads, capacity)
        # a cap the coordinator lowered takes back what the pool asked beyond it
        self.policy.target = min(self.policy.target, self.limit)
        action = self.last_action = self.policy.step(t_s, usage, executors, free_executors)
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
        bound = self.policy.shed_bound(t_s, usage, executors, free_executors)
        return dict(shed) if bound is None else bounded_shed(shed, loads, bound, order)

    def sample(self, executors: int) -> dict[str, Any]:
        """A series entry's pool fields."""
        return {
            "executors": executors,
            "executors_requested": self.target,
            "usage": rounded(self.usage),
        }


def scaling_changes(old: ScalingParams, new: ScalingParams) -> str:
    """What differs between two settings, for the log: ``hold_out_s 10 -> 5, ...``."""
    before, after = dataclasses.asdict(old), dataclasses.asdict(new)
    return ", ".join(f"{k} {before[k]} -> {v}" for k, v in after.items() if before[k] != v)


def scaling_summary(
    params: ScalingParams | None, pool: PoolControl | None, reason: str | None = None
) -> dict[str, Any] | None:
    """The results' ``scaling`` part (None: the scenario asks no elasticity); the resizes
    are in the results' ``actions`` with the other control actions."""
    if params is None:
        return None
    return {
        "enabled": pool is not None,
        "reason": reason,
        "params": dataclasses.asdict(pool.params if pool is not None else params),
    }

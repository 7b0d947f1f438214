"""The control plane the simulator drives each control period, built from the core.

Modes (``control.mode``):

- ``none``: every class gets the core's "none" manager (never sheds); quotas stay at the
  priority shares.
- ``per_class``: one manager per class (its ``manager``), fixed WRR quotas — the core's
  :class:`DilosController` with redistribution disabled ("no synergy").
- ``dilos``: the same plus capacity redistribution every ``redistribution_every`` periods
  (Eq. 6.1 headroom resets included).
- ``common``: one manager (``control.common_manager``) for the whole system: it sees the
  sum of the class loads and the outputs of all classes, and its shed fraction applies at
  every class's shedding points. Quotas stay at the priority shares.

Nothing here simulates: it turns observations into shed fractions and quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from spark_runner.core.class_scheduler import original_shares
from spark_runner.core.dilos import DilosController, DilosParams, StaleRule
from spark_runner.core.load_model import LoadModel
from spark_runner.core.managers.base import LoadManager
from spark_runner.core.managers.registry import make_manager
from spark_runner.core.observation import Decision, Observation, ResponseTimeStats
from spark_runner.scenario.compose import class_control
from spark_runner.scenario.models import Scenario


@dataclass(frozen=True)
class ControlResult:
    """What one control step decided.

    Attributes:
        shed: shed fraction per class for the next period.
        quotas: share of each scheduler round per class for the next period (sum 1).
        decisions: each class's manager decision (the common decision in ``common`` mode).
        headrooms: each class's capacity estimate (s/s), ``None`` without one.
        redistributed: quotas moved this step (``dilos``).
        stale: per class, which tuples queued at its shedding points to shed first
            (absent or ``None``: none).
    """

    shed: Mapping[str, float]
    quotas: Mapping[str, float]
    decisions: Mapping[str, Decision]
    headrooms: Mapping[str, float | None]
    redistributed: bool = False
    details: Mapping[str, Any] = field(default_factory=dict)
    stale: Mapping[str, StaleRule | None] = field(default_factory=dict)


class ControlPlane(Protocol):
    """One step per control period."""

    def initial_quotas(self) -> dict[str, float]: ...

    def priorities(self) -> dict[str, float]:
        """Each class's priority now (a live change applies at once)."""
        ...

    def own_shares(self) -> dict[str, float]:
        """The share of the processor each class keeps whatever the classes above it
        need: quota beyond it is lent by the classes above and goes back to them as soon
        as they have work (the simulator's scheduler), and the oracle serves these first,
        the rest by priority."""
        ...

    def step(self, observations: Mapping[str, Observation]) -> ControlResult: ...


class PerClassControl:
    """``none`` / ``per_class`` / ``dilos`` through the core's DILoS controller."""

    def __init__(self, scenario: Scenario, load_model: LoadModel) -> None:
        mode = scenario.control.mode
        # mode none: every class is managed by no manager (it never sheds)
        unmanaged = {"manager": "none", "manager_params": {}} if mode == "none" else {}
        specs = [
            class_control(qc).model_copy(update=unmanaged).spec(qc.name) for qc in scenario.classes
        ]
        params = DilosParams(
            redistribution_every=scenario.control.redistribution_every,
            policy=scenario.control.policy,
            redistribution_enabled=mode == "dilos",
            min_share=scenario.control.min_share,
            hold_infeasible=scenario.control.hold_infeasible,
        )
        self.controller = DilosController(specs, params, load_model)

    def initial_quotas(self) -> dict[str, float]:
        return self.controller.quotas()

    def priorities(self) -> dict[str, float]:
        return self.controller.priorities

    def own_shares(self) -> dict[str, float]:
        """By DILoS's policy (:meth:`DilosController.guaranteed_shares`): under ``strict``
        none (a class is served only while no class above it has work), under
        ``absolute`` its quota's floor, under ``relative`` and fixed quotas its original
        share."""
        return self.controller.guaranteed_shares()

    def step(self, observations: Mapping[str, Observation]) -> ControlResult:
        result = self.controller.step(observations)
        return ControlResult(
            shed=result.shed_fractions,
            quotas={n: c.quota for n, c in result.classes.items()},
            decisions={n: c.decision for n, c in result.classes.items()},
            headrooms={n: c.headroom for n, c in result.classes.items()},
            redistributed=result.event is not None,
            stale={n: c.stale for n, c in result.classes.items()},
            details=(
                {
                    "reason": result.event.reason,
                    "before": dict(result.event.before),
                    "after": dict(result.event.after),
                }
                if result.event is not None
                else {}
            ),
        )


class CommonControl:
    """One manager for the whole system (the state of the art before DILoS)."""

    def __init__(self, scenario: Scenario) -> None:
        spec = scenario.control.common_manager
        target = spec.delay_target_s or min(c.delay_target_s for c in scenario.classes)
        self.delay_target_s = target
        self.manager: LoadManager[Any] = make_manager(
            spec.kind, {**spec.params, "delay_target_s": target}
        )
        self._priorities = {c.name: c.priority for c in scenario.classes}
        self._quotas = original_shares(self._priorities)

    def initial_quotas(self) -> dict[str, float]:
        return dict(self._quotas)

    def priorities(self) -> dict[str, float]:
        return dict(self._priorities)

    def own_shares(self) -> dict[str, float]:
        return dict(self._quotas)

    def step(self, observations: Mapping[str, Observation]) -> ControlResult:
        decision = self.manager.step(merge_observations(list(observations.values())))
        names = list(observations)
        return ControlResult(
            shed={n: decision.shed_fraction for n in names},
            quotas=dict(self._quotas),
            decisions={n: decision for n in names},
            headrooms={n: decision.headroom for n in names},
        )


def merge_observations(observations: list[Observation]) -> Observation:
    """The whole system seen as one class: loads and counts add, outputs pool."""
    outputs = sum(o.response_time.count for o in observations)
    if outputs:
        mean = sum(o.response_time.mean_s * o.response_time.count for o in observations) / outputs
        worst = max(o.response_time.max_s for o in observations if o.response_time.count)
        stats = ResponseTimeStats(mean_s=min(mean, worst), max_s=worst, count=outputs)
    else:
        stats = ResponseTimeStats()
    load = sum(o.load for o in observations)
    rate = sum(o.arrival_rate_per_s for o in observations)
    return Observation(
        period_s=observations[0].period_s,
        load=load,
        arrival_rate_per_s=rate,
        response_time=stats,
        queue_length=sum(o.queue_length for o in observations),
        queued_load_s=sum(o.queued_load_s for o in observations),
        arrived_count=sum(o.arrived_count for o in observations),
        processed_count=sum(o.processed_count for o in observations),
        shed_count=sum(o.shed_count for o in observations),
        cost_per_tuple_s=load / rate if rate > 0 else 0.0,
        transient=any(o.transient for o in observations),
    )


def make_control_plane(scenario: Scenario, load_model: LoadModel) -> ControlPlane:
    """The control plane of ``scenario.control.mode``."""
    if scenario.control.mode == "common":
        load_model.set_priorities({c.name: c.priority for c in scenario.classes})
        return CommonControl(scenario)
    return PerClassControl(scenario, load_model)

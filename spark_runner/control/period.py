"""One control period, the same for the simulator and the Spark runner.

Each engine measures what its classes did in a period in its own way (the simulator
counts its events; the Spark runner reads a batch's observed metrics and its offset
log) and hands it over as one :class:`ClassPeriod` per class. :class:`PeriodLoop` then
takes the steps both engines take, in one place: the load model's update, one
:class:`~spark_runner.core.observation.Observation` per class, the control plane's step
(shed fractions, quotas, redistribution), the oracle's account of the period, and the
class's fields of the series sample (:func:`class_sample`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from spark_runner.control.plane import ControlPlane, ControlResult
from spark_runner.core.load_model import ClassLoad, LoadModel
from spark_runner.core.observation import Observation, ResponseTimeStats
from spark_runner.core.oracle import MachineOracle


@dataclass(frozen=True)
class ClassPeriod:
    """What one class did in one control period, as an engine measured it.

    Attributes:
        arrived: tuples that arrived at its shedding points (before shedding).
        processed: input tuples it admitted and processed.
        shed: tuples it shed; ``stale_shed`` of them as stale (DILoS's rule).
        outputs: its answers; ``response_sum_s`` and ``response_max_s`` their response
            times' sum and maximum, s.
        busy_s: processor time its work took, s.
        floor_s: the least response time the engine serves it (None: unknown).
        mean_floor_s: the least mean response time it gets fully admitted (None:
            ``floor_s`` stands for it): below it the class is infeasible.
        oracle_floor_s: the least response time any admission could give it, where the
            engine's floor is more (None: ``floor_s``): the oracle's.
        stale_first: its stale tuples are shed first.
        idle_load, busy_load: idle and busy processor time per second of the period,
            where the engine measures them.
        slowdown: how much slower than its model the engine's last batches ran (≥ 1).
        stall: how much slower than its model the engine's last batch alone ran (≥ 1).
    """

    arrived: int
    processed: int
    shed: int
    outputs: int
    response_sum_s: float
    response_max_s: float
    busy_s: float
    floor_s: float | None = None
    mean_floor_s: float | None = None
    oracle_floor_s: float | None = None
    stale_shed: int = 0
    stale_first: bool = False
    idle_load: float = 0.0
    busy_load: float | None = None
    slowdown: float = 1.0
    stall: float = 1.0

    @property
    def response_time(self) -> ResponseTimeStats:
        if not self.outputs:
            return ResponseTimeStats()
        mean_s = min(self.response_sum_s / self.outputs, self.response_max_s)
        return ResponseTimeStats(mean_s=mean_s, max_s=self.response_max_s, count=self.outputs)

    def observation(self, load: ClassLoad, period_s: float) -> Observation:
        """The managers' view of this period, with the load model's estimate ``load``."""
        return Observation(
            period_s=period_s,
            load=load.load,
            arrival_rate_per_s=load.arrival_rate_per_s,
            response_time=self.response_time,
            queue_length=load.queue_length,
            queued_load_s=load.queued_load_s,
            arrived_count=self.arrived,
            processed_count=self.processed,
            shed_count=self.shed,
            cost_per_tuple_s=load.cost_per_tuple_s,
            transient=load.transient,
            idle_load=self.idle_load,
            busy_load=self.busy_load,
            floor_s=self.floor_s,
            mean_floor_s=self.mean_floor_s,
            stale_first=self.stale_first,
            stale_shed_count=self.stale_shed,
            slowdown=self.slowdown,
            stall=self.stall,
        )


@dataclass(frozen=True)
class PeriodOutcome:
    """A step's decisions and what the managers saw."""

    result: ControlResult
    observations: dict[str, Observation]


class PeriodLoop:
    """The per-period steps of both engines around one control plane and load model."""

    def __init__(
        self, control: ControlPlane, load_model: LoadModel, targets: Mapping[str, float]
    ) -> None:
        self.control = control
        self.load_model = load_model
        self.oracle = MachineOracle(targets)

    def step(
        self,
        period_s: float,
        classes: Mapping[str, ClassPeriod],
        machine_s: float,
        down_s: float = 0.0,
        **measured: Any,
    ) -> PeriodOutcome:
        """Feed the load model what the engine ``measured`` (``LoadModel.update``'s
        arguments), observe every class, step the control plane, account the oracle:
        the classes could have had ``machine_s`` of processor time in the period, none in
        its first ``down_s`` seconds (the engine not running yet)."""
        self.load_model.update(**measured)
        snapshot = self.load_model.snapshot()
        observations = {
            name: period.observation(snapshot[name], period_s) for name, period in classes.items()
        }
        # the oracle shares the machine as the policy in force when the period began
        guaranteed = self.control.own_shares()
        priorities = self.control.priorities()
        result = self.control.step(observations)
        offered = {name: obs.load * period_s for name, obs in observations.items()}
        floors = {
            name: (p.floor_s if p.oracle_floor_s is None else p.oracle_floor_s) or 0.0
            for name, p in classes.items()
        }
        order = sorted(classes, key=lambda name: -priorities[name])
        self.oracle.period(period_s, offered, machine_s, order, guaranteed, floors, down_s)
        return PeriodOutcome(result, observations)


def class_sample(
    name: str, period_s: float, period: ClassPeriod, outcome: PeriodOutcome
) -> dict[str, Any]:
    """The fields of a class's series sample that both engines write (results format)."""
    obs = outcome.observations[name]
    result = outcome.result
    decision = result.decisions[name]
    stats = obs.response_time
    return {
        "mean_response_time_s": rounded(stats.mean_s) if stats.count else None,
        "max_response_time_s": rounded(stats.max_s) if stats.count else None,
        "outputs": period.outputs,
        "arrival_rate_per_s": rounded(period.arrived / period_s),
        "load": rounded(obs.load),
        "admitted_load": rounded(obs.load * (1.0 - result.shed[name])),
        "headroom": rounded(result.headrooms[name]),
        "shed_fraction": rounded(result.shed[name]),
        "quota": rounded(result.quotas[name]),
        "busy_s": rounded(period.busy_s),
        "estimated_delay_s": rounded(decision.estimated_delay_s),
        "state": str(decision.state),
        "action": decision.action,
        "floor_s": rounded(obs.feasibility_floor_s),
    }


def rounded(value: float | None) -> float | None:
    """Round for the results file (6 significant digits)."""
    if value is None:
        return None
    if value == 0 or not math.isfinite(value):
        return value
    return float(f"{value:.6g}")

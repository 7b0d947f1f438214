"""Several elastic jobs on one simulated cluster, with or without the coordinator.

Each job is a scenario with elastic capacity, simulated as alone (its own processors,
its own DILoS), and the jobs advance side by side one control period at a time. The
cluster has ``executors`` processors. Without a coordinator each job may hold what its
scenario's ``max_executors`` says (a static split). With one, every period the
coordinator reads each job's classes (priority, and the load its last period measured)
and its pool's bounds, and its allocation caps each job's pool
(:attr:`~spark_runner.control.elastic.PoolControl.cap`): the job's own elastic policy
grows within the cap, and a job above a lowered cap releases the difference at once
(:mod:`spark_runner.core.coordinator`).

With classes held in standby (``standby``: per job, classes its scenario declares on the
same streams as the job that computes them, which it runs but computes none of), the
coordinator also moves a class off a job its executors cannot carry
(:func:`~spark_runner.core.class_moves.choose_move`), as the product's coordinator does:
from loads that are medians over :data:`~spark_runner.core.coordinator.LOAD_WINDOW_S`,
one move at a time, none before the last one's switch and none within ``min_interval_s``
of it. The class switches at the first instant of its window grid a period after the
choice: the origin takes its tuples before that instant, the target those from it on.
(What a window join reads past the switch on its right side, and the origin's last
windows, are not modelled: only each side's arrivals.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from spark_runner.control.elastic import PoolControl
from spark_runner.control.run import ClassTotals, RunOutput
from spark_runner.core.class_moves import ClassMove, choose_move
from spark_runner.core.coordinator import (
    LOAD_WINDOW_S,
    ClassLoad,
    Coordinator,
    JobReport,
    Reallocation,
)
from spark_runner.core.errors import ParameterError
from spark_runner.core.oracle import MachineOracle
from spark_runner.scenario.handoff import movable_issue, switch_grid_s
from spark_runner.scenario.models import Scenario
from spark_runner.sim.engine import Running, Simulation


@dataclass(frozen=True)
class Move:
    """A class the coordinator moved: chosen at ``at_s``, switched at ``switch_s``."""

    move: ClassMove
    at_s: float
    switch_s: float


@dataclass(frozen=True)
class ClusterOutput:
    """Each job's run, the coordinator's changes and class moves (none without one), and
    the classes each job held ready at the start."""

    jobs: Mapping[str, RunOutput]
    reallocations: tuple[Reallocation, ...]
    moves: tuple[Move, ...] = ()
    standby: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def class_key(self, job: str, name: str) -> str:
        """A class's name on the cluster: ``name`` for a class some job held ready (one
        class, computed by one job, then another), else ``job/name``."""
        return name if any(name in held for held in self.standby.values()) else f"{job}/{name}"


def simulate_cluster(
    scenarios: Mapping[str, Scenario],
    executors: int,
    coordinator: Coordinator | None = None,
    standby: Mapping[str, frozenset[str]] | None = None,
) -> ClusterOutput:
    """Run the jobs ``scenarios`` (by name) side by side on ``executors`` processors;
    ``standby``: per job, the classes it holds ready to take (see module)."""
    period_s, duration_s = _common_clock(scenarios)
    if standby and coordinator is None:
        raise ParameterError("standby", sorted(standby), "needs the coordinator to move a class")
    unknown = sorted(set(standby or {}) - set(scenarios))
    if unknown:
        raise ParameterError("standby", unknown, f"must name jobs: {sorted(scenarios)}")
    runs = {name: Simulation(sc).start() for name, sc in scenarios.items()}
    mover = _Mover(scenarios, runs, standby or {})
    if coordinator is not None:  # until its first round: the pools' floors
        for run in runs.values():
            _pool(run).cap = _pool(run).params.min_executors
    changes: list[Reallocation] = []
    periods = round(duration_s / period_s)
    for i in range(1, periods + 1):
        for run in runs.values():
            run.advance(i * period_s)
        if coordinator is not None:
            change = coordinator.step(i * period_s, _reports(scenarios, runs), executors)
            if change is not None:
                changes.append(change)
            for name, run in runs.items():
                _pool(run).cap = coordinator.allocation[name]
            mover.round(i * period_s, coordinator, executors)
    outputs = {n: run.finish() for n, run in runs.items()}
    return ClusterOutput(outputs, tuple(changes), tuple(mover.moves), dict(standby or {}))


@dataclass
class _Mover:
    """The class moves between the jobs: who holds which class ready, and the moves made."""

    scenarios: Mapping[str, Scenario]
    runs: Mapping[str, Running]
    ready: Mapping[str, frozenset[str]]
    moves: list[Move] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ready = {job: frozenset(self.ready.get(job, ())) for job in self.scenarios}
        for job, names in self.ready.items():
            for name in sorted(names):
                issue = _standby_issue(self.scenarios, job, name)
                if issue is not None:
                    raise ParameterError(f"standby.{job}", name, issue)
                self.runs[job].set_range(name, until_s=0.0)

    def round(self, now_s: float, coordinator: Coordinator, executors: int) -> None:
        """Move a class if one should move now (see module)."""
        if not any(self.ready.values()) or self._busy(now_s, coordinator.params.min_interval_s):
            return
        reports = _reports(self.scenarios, self.runs, LOAD_WINDOW_S)
        move = choose_move(
            reports, executors, coordinator.allocation, self.ready, coordinator.params
        )
        if move is None:
            return
        grid_s = switch_grid_s(self.scenarios[move.origin], move.class_name)
        period_s = self.scenarios[move.origin].control.period_s
        switch_s = math.ceil((now_s + period_s) / grid_s - 1e-9) * grid_s
        self.runs[move.origin].set_range(move.class_name, until_s=switch_s)
        self.runs[move.target].set_range(move.class_name, from_s=switch_s)
        self.ready = {
            **self.ready,
            move.origin: self.ready[move.origin] | {move.class_name},
            move.target: self.ready[move.target] - {move.class_name},
        }
        self.moves.append(Move(move, now_s, switch_s))

    def _busy(self, now_s: float, interval_s: float) -> bool:
        """The last move has not switched yet, or was chosen within ``interval_s``."""
        last = self.moves[-1] if self.moves else None
        return last is not None and (now_s < last.switch_s or now_s - last.at_s < interval_s)


def _standby_issue(scenarios: Mapping[str, Scenario], job: str, name: str) -> str | None:
    """Why ``job`` cannot hold class ``name`` ready, or None."""
    scenario = scenarios[job]
    if name not in {c.name for c in scenario.classes}:
        return f"must name a class of job {job!r}: {sorted(c.name for c in scenario.classes)}"
    return movable_issue(scenario, name)


def _common_clock(scenarios: Mapping[str, Scenario]) -> tuple[float, float]:
    """The jobs' one control period and duration (the coordinator's round is a period)."""
    clocks = {(sc.control.period_s, sc.duration_s) for sc in scenarios.values()}
    if len(clocks) != 1:
        raise ParameterError("scenarios", sorted(scenarios), "must share period_s and duration_s")
    for name, sc in scenarios.items():
        if sc.scaling() is None:
            raise ParameterError(name, sc.name, "must be elastic (control.elastic)")
    return clocks.pop()


def _pool(run: Running) -> PoolControl:
    pool = run.pool
    assert pool is not None  # every job is elastic (_common_clock)
    return pool


def _reports(
    scenarios: Mapping[str, Scenario], runs: Mapping[str, Running], window_s: float = 0.0
) -> list[JobReport]:
    """Each job's classes with the loads of its last period, or their medians over the
    periods that ended within ``window_s`` of the last."""
    reports = []
    for name, sc in scenarios.items():
        series = runs[name].step.series
        recent = [e for e in series if e["t_s"] > series[-1]["t_s"] - window_s] or series[-1:]
        params = _pool(runs[name]).params
        classes = tuple(
            ClassLoad(c.name, c.priority, median(_load(e, c.name) for e in recent))
            for c in sc.classes
        )
        serving = runs[name].step.clock.executors
        reports.append(
            JobReport(name, classes, params.min_executors, params.max_executors, serving=serving)
        )
    return reports


def _load(entry: Mapping[str, Any], name: str) -> float:
    return float(entry["classes"].get(name, {}).get("load") or 0.0)


@dataclass(frozen=True)
class ClusterClass:
    """A class over the jobs that computed it: its loss (output tuples lost to shedding
    over those its input would have produced) and its violations."""

    priority: float
    loss: float
    mean_violation_s: float
    max_violation_s: float


def cluster_classes(out: ClusterOutput) -> dict[str, ClusterClass]:
    """Each class of the cluster (:meth:`ClusterOutput.class_key`), its jobs' totals
    summed."""
    parts: dict[str, list[tuple[float, ClassTotals]]] = {}
    for job, run in out.jobs.items():
        for c in run.scenario.classes:
            parts.setdefault(out.class_key(job, c.name), []).append(
                (c.priority, run.totals[c.name])
            )
    merged = {}
    for key, totals in parts.items():
        offered = sum(t.offered_outputs for _, t in totals)
        timed = sum(t.timed for _, t in totals)
        merged[key] = ClusterClass(
            priority=totals[0][0],
            loss=sum(t.lost_outputs for _, t in totals) / offered if offered > 0 else 0.0,
            mean_violation_s=sum(t.violation_sum_s for _, t in totals) / timed if timed else 0.0,
            max_violation_s=max(t.violation_max_s for _, t in totals),
        )
    return merged


def cluster_oracle(out: ClusterOutput, executors: int) -> dict[str, float]:
    """Each class's least loss fraction on the whole cluster, by
    :meth:`~ClusterOutput.class_key`: every job's classes served in one global priority
    order on ``executors`` processors, the capacity movable at once (the oracle of
    :mod:`spark_runner.core.oracle` over the cluster's capacity, each period's offered load
    and floor as the jobs measured them, a moved class's summed over its jobs; the jobs'
    engines alike)."""
    runs = list(out.jobs.items())
    first = runs[0][1].scenario
    period_s = first.control.period_s
    hidden = 1.0 + first.engine.hidden_overhead_fraction
    classes = {out.class_key(job, c.name): c for job, run in runs for c in run.scenario.classes}
    oracle = MachineOracle({key: c.delay_target_s for key, c in classes.items()})
    order = sorted(classes, key=lambda k: -classes[k].priority)
    for i in range(min(len(run.series) for _, run in runs)):
        offered = dict.fromkeys(classes, 0.0)
        floors = dict.fromkeys(classes, 0.0)
        most = dict.fromkeys(classes, -1.0)  # a moved class's floor: its busier side's
        for job, run in runs:
            for name, sample in run.series[i]["classes"].items():
                key, load = out.class_key(job, name), sample["load"] or 0.0
                offered[key] += load * period_s
                if load > most[key]:
                    most[key], floors[key] = load, sample["floor_s"] or 0.0
        share = runs[0][1].series[i].get("background_share", 0.0)
        oracle.period(
            period_s, offered, executors * period_s * (1.0 - share) / hidden, order, floors_s=floors
        )
    return {key: loss.loss_fraction for key, loss in oracle.losses(guaranteed=False).items()}

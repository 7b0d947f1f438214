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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from spark_runner.control.elastic import PoolControl
from spark_runner.control.run import RunOutput
from spark_runner.core.coordinator import ClassLoad, Coordinator, JobReport, Reallocation
from spark_runner.core.errors import ParameterError
from spark_runner.core.oracle import MachineOracle
from spark_runner.scenario.models import Scenario
from spark_runner.sim.engine import Running, Simulation


@dataclass(frozen=True)
class ClusterOutput:
    """Each job's run, and the coordinator's changes (none without one)."""

    jobs: Mapping[str, RunOutput]
    reallocations: tuple[Reallocation, ...]


def simulate_cluster(
    scenarios: Mapping[str, Scenario], executors: int, coordinator: Coordinator | None = None
) -> ClusterOutput:
    """Run the jobs ``scenarios`` (by name) side by side on ``executors`` processors."""
    period_s, duration_s = _common_clock(scenarios)
    runs = {name: Simulation(sc).start() for name, sc in scenarios.items()}
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
    return ClusterOutput({n: run.finish() for n, run in runs.items()}, tuple(changes))


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


def _reports(scenarios: Mapping[str, Scenario], runs: Mapping[str, Running]) -> list[JobReport]:
    """Each job's classes with the loads of its last period."""
    reports = []
    for name, sc in scenarios.items():
        loads = runs[name].step.series[-1]["classes"]
        params = _pool(runs[name]).params
        classes = tuple(
            ClassLoad(c.name, c.priority, float(loads.get(c.name, {}).get("load") or 0.0))
            for c in sc.classes
        )
        reports.append(JobReport(name, classes, params.min_executors, params.max_executors))
    return reports


def cluster_oracle(out: ClusterOutput, executors: int) -> dict[tuple[str, str], float]:
    """Each class's least loss fraction on the whole cluster, by ``(job, class)``: every
    job's classes served in one global priority order on ``executors`` processors, the
    capacity movable at once (the oracle of :mod:`spark_runner.core.oracle` over the
    cluster's capacity, each period's offered load and floor as the jobs measured them;
    the jobs' engines alike)."""
    runs = list(out.jobs.items())
    first = runs[0][1].scenario
    period_s = first.control.period_s
    hidden = 1.0 + first.engine.hidden_overhead_fraction
    classes = {(job, c.name): c for job, run in runs for c in run.scenario.classes}
    oracle = MachineOracle(
        {f"{job}/{name}": c.delay_target_s for (job, name), c in classes.items()}
    )
    order = [f"{job}/{name}" for job, name in sorted(classes, key=lambda k: -classes[k].priority)]
    for i in range(min(len(run.series) for _, run in runs)):
        samples = {(job, n): s for job, run in runs for n, s in run.series[i]["classes"].items()}
        share = runs[0][1].series[i].get("background_share", 0.0)
        oracle.period(
            period_s,
            {f"{j}/{n}": (s["load"] or 0.0) * period_s for (j, n), s in samples.items()},
            executors * period_s * (1.0 - share) / hidden,
            order,
            floors_s={f"{j}/{n}": s["floor_s"] or 0.0 for (j, n), s in samples.items()},
        )
    losses = oracle.losses(guaranteed=False)
    return {key: losses[f"{key[0]}/{key[1]}"].loss_fraction for key in classes}

"""What a coordinated job reports to the coordinator: its classes' priorities (its live
configuration) and loads (its newest metric samples), and its pool's bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from sqlalchemy.orm import Session

from backend.jobs.models import Job
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from backend.tuning import service as tuning
from spark_runner.core.coordinator import LOAD_WINDOW_S, ClassLoad, JobReport, executor_loads


@dataclass(frozen=True)
class Reported:
    """A job's report, with what its action log notes of it (its usage u and its shed
    fraction, its classes' weighted by load, in its newest period) and what a class move
    may bring it."""

    report: JobReport
    usage: float
    shed: float
    ready: frozenset[str] = frozenset()
    """The classes it holds ready to take: its queries run, and it computes none of their
    event time from now on (in standby, or moved away)."""


def report_of(session: Session, job: Job, now_s: float) -> Reported:
    """``job``'s report at ``now_s`` (a job whose live configuration is elastic). Its
    allocation may reach the ``max_executors`` it started with (what Spark's
    ``cores.max`` allows); the live ``max_executors`` is the coordinator's own cap."""
    config = tuning.latest_config(session, job.id)
    launch = tuning.launch_config(session, job.id).scaling_params()
    scaling = config.scaling_params()
    assert scaling is not None and launch is not None  # an elastic job (coordinated_jobs)
    periods = recent_periods(session, job.id, now_s)
    loads = [_in_executors(period) for period in periods]
    classes = tuple(
        ClassLoad(name, c.priority, median([p.get(name, 0.0) for p in loads] or [0.0]))
        for name, c in config.classes.items()
    )
    newest = periods[-1] if periods else []
    report = JobReport(
        str(job.id),
        classes,
        scaling.min_executors,
        launch.max_executors,
        serving=newest[0].executors if newest else None,
    )
    usage = (newest[0].job_usage or 0.0) if newest else 0.0
    ready = frozenset(n for n, r in config.ranges.items() if not r.computes_from(now_s))
    return Reported(report, usage, _shed(newest), ready)


def recent_periods(session: Session, job_id: int, now_s: float) -> list[list[MetricSampleRow]]:
    """The job's periods that ended within :data:`LOAD_WINDOW_S` of ``now_s``, oldest
    first, each its classes' samples; warm-ups left out (their batch paid for Spark's
    start: its loads say nothing of the classes')."""
    rows = MetricRepository(session).query(job_id, since=now_s - LOAD_WINDOW_S, limit=10_000)
    periods: dict[int, list[MetricSampleRow]] = {}
    for row in rows:
        if not row.warmup:
            periods.setdefault(row.seq, []).append(row)
    return [periods[seq] for seq in sorted(periods)]


def _in_executors(period: Sequence[MetricSampleRow]) -> dict[str, float]:
    """One period's class loads in executors."""
    usage = period[0].job_usage or 0.0
    executors = period[0].executors or 0
    return executor_loads({r.class_name: r.load or 0.0 for r in period}, usage, executors)


def _shed(rows: Sequence[MetricSampleRow]) -> float:
    load = sum(r.load or 0.0 for r in rows)
    if not load > 0:
        return 0.0
    return min(sum((r.shed_fraction or 0.0) * (r.load or 0.0) for r in rows) / load, 1.0)

"""What a coordinated job reports to the coordinator: its classes' priorities (its live
configuration) and loads (its newest metric samples), and its pool's bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from backend.jobs.models import Job
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from backend.tuning import service as tuning
from spark_runner.core.coordinator import ClassLoad, JobReport, executor_loads

STALE_S = 30.0
"""Samples older than this say nothing of a job's load now: its classes report none."""


@dataclass(frozen=True)
class Reported:
    """A job's report, with what its action log notes of it: its usage u and its shed
    fraction (its classes', weighted by load) in its newest period."""

    report: JobReport
    usage: float
    shed: float


def report_of(session: Session, job: Job, now_s: float) -> Reported:
    """``job``'s report at ``now_s`` (a job whose live configuration is elastic). Its
    allocation may reach the ``max_executors`` it started with (what Spark's
    ``cores.max`` allows); the live ``max_executors`` is the coordinator's own cap."""
    config = tuning.latest_config(session, job.id)
    launch = tuning.launch_config(session, job.id).scaling_params()
    scaling = config.scaling_params()
    assert scaling is not None and launch is not None  # an elastic job (coordinated_jobs)
    newest = newest_period(session, job.id, now_s)
    loads = {r.class_name: r.load or 0.0 for r in newest}
    usage = (newest[0].job_usage or 0.0) if newest else 0.0
    executors = (newest[0].executors or 0) if newest else 0
    in_executors = executor_loads(loads, usage, executors)
    classes = tuple(
        ClassLoad(name, c.priority, in_executors.get(name, 0.0))
        for name, c in config.classes.items()
    )
    report = JobReport(str(job.id), classes, scaling.min_executors, launch.max_executors)
    return Reported(report, usage, _shed(newest))


def newest_period(session: Session, job_id: int, now_s: float) -> list[MetricSampleRow]:
    """The samples of the job's newest period within :data:`STALE_S` of ``now_s``."""
    rows = MetricRepository(session).iter_window(job_id, since=now_s - STALE_S, newest_first=True)
    period: list[MetricSampleRow] = []
    try:
        for row in rows:
            if period and row.seq != period[0].seq:
                break
            period.append(row)
    finally:
        rows.close()
    return period


def _shed(rows: Sequence[MetricSampleRow]) -> float:
    load = sum(r.load or 0.0 for r in rows)
    if not load > 0:
        return 0.0
    return min(sum((r.shed_fraction or 0.0) * (r.load or 0.0) for r in rows) / load, 1.0)

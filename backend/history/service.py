from __future__ import annotations

from sqlalchemy.orm import Session

from backend.history.schemas import RunComparison, RunRange, RunSummary
from backend.history.summary import summarize
from backend.jobs.repository import JobRepository
from backend.jobs.schemas import JobRead
from backend.metrics.repository import MetricRepository
from backend.tuning.service import targets_by_version
from spark_runner.contract.samples import MetricSample

MAX_SUMMARY_ROWS = 2_000_000


def run_summary(session: Session, job_id: int, window: RunRange | None = None) -> RunSummary:
    """Per-class QoS and QoD of one run, over ``window`` (the whole run by default)."""
    job = JobRepository(session).require(job_id)
    repo = MetricRepository(session)
    window = window or RunRange()
    first_t = repo.oldest_t(job_id)
    if window.relative:
        origin = first_t if first_t is not None else 0.0
        since = origin + window.since_s if window.since_s is not None else None
        until = origin + window.until_s if window.until_s is not None else None
        rows = repo.query(
            job_id, since=since, until=until, since_inclusive=True, limit=MAX_SUMMARY_ROWS
        )
    else:
        rows = repo.query(job_id, since=window.since, until=window.until, limit=MAX_SUMMARY_ROWS)
    samples = [MetricSample.model_validate(r, from_attributes=True) for r in rows]
    return RunSummary(
        job=JobRead.model_validate(job),
        first_sample_t=first_t,
        classes=summarize(samples, job.launch_targets(), targets_by_version(session, job_id)),
    )


def compare(session: Session, a: int, b: int, window: RunRange | None = None) -> RunComparison:
    """Two runs over the same range (relative offsets: from each run's own first sample)."""
    return RunComparison(a=run_summary(session, a, window), b=run_summary(session, b, window))

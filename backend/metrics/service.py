"""Metric ingest and queries."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.jobs import service as jobs
from backend.jobs.states import TERMINAL
from backend.metrics.downsample import downsample
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from backend.metrics.schemas import SeriesQuery
from spark_runner.job.samples import MetricBatch, MetricSample


def ingest(session: Session, job_id: int, batch: MetricBatch) -> dict[str, float]:
    """Store a job's samples; the first samples of a starting job mark it running.

    Returns the delay target of each of the job's classes (for the live gauges).
    """
    job = jobs.get_job(session, job_id)
    known = {c["name"] for c in job.config.get("classes", [])}
    unknown = sorted({s.class_name for s in batch.samples} - known)
    if unknown:
        raise Conflict(f"class_name={unknown[0]!r} is not a class of job {job_id}")
    MetricRepository(session).insert_many(
        [{"job_id": job_id, **sample.model_dump()} for sample in batch.samples]
    )
    if job.state not in TERMINAL:
        jobs.mark_running(job)
    session.flush()
    return {c["name"]: c["delay_target_s"] for c in job.config.get("classes", [])}


def require_job(session: Session, job_id: int) -> None:
    jobs.get_job(session, job_id)


def series(session: Session, job_id: int, window: SeriesQuery) -> list[MetricSample]:
    """Samples of a job in a time window, optionally downsampled into ``step_s`` buckets."""
    require_job(session, job_id)
    repo = MetricRepository(session)
    since = window.since
    if window.last_s is not None:
        newest = repo.newest_t(job_id)
        if newest is not None:
            since = max(since or -math.inf, newest - window.last_s)
    rows = repo.query(
        job_id,
        since=since,
        until=window.until,
        class_name=window.class_name,
        limit=window.limit,
    )
    samples = [MetricSample.model_validate(row, from_attributes=True) for row in rows]
    return downsample(samples, window.step_s) if window.step_s else samples


def rows_after(
    session: Session, job_id: int, after_id: int, limit: int = 1000
) -> Sequence[MetricSampleRow]:
    """New samples in arrival order (by id), for the live stream."""
    return MetricRepository(session).query(job_id, after_id=after_id, limit=limit)

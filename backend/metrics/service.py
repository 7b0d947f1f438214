"""Metric ingest and queries."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.jobs import service as jobs
from backend.jobs.models import Job
from backend.jobs.states import TERMINAL
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from spark_runner.job.samples import MetricBatch


def ingest(session: Session, job: Job, batch: MetricBatch) -> int:
    """Store a job's samples; the first samples of a starting job mark it running."""
    job_id = job.id
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
    return len(batch.samples)


def series(
    session: Session, job_id: int, since: float | None, class_name: str | None, limit: int
) -> Sequence[MetricSampleRow]:
    jobs.get_job(session, job_id)
    return MetricRepository(session).query(job_id, since=since, class_name=class_name, limit=limit)

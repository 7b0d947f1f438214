from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy.orm import Session

from backend.history.summary import ClassSummary, summarize
from backend.jobs import service as jobs
from backend.jobs.schemas import JobRead
from backend.metrics.repository import MetricRepository
from spark_runner.job.samples import MetricSample

MAX_SUMMARY_ROWS = 2_000_000


class RunSummary(BaseModel):
    job: JobRead
    classes: list[ClassSummary]


class RunComparison(BaseModel):
    a: RunSummary
    b: RunSummary


def run_summary(
    session: Session, job_id: int, since: float | None = None, until: float | None = None
) -> RunSummary:
    job = jobs.get_job(session, job_id)
    rows = MetricRepository(session).query(job_id, since=since, until=until, limit=MAX_SUMMARY_ROWS)
    samples = [MetricSample.model_validate(r, from_attributes=True) for r in rows]
    targets = {c["name"]: float(c["delay_target_s"]) for c in job.config.get("classes", [])}
    return RunSummary(job=JobRead.model_validate(job), classes=summarize(samples, targets))


def compare(session: Session, a: int, b: int) -> RunComparison:
    return RunComparison(a=run_summary(session, a), b=run_summary(session, b))

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from backend.api.auth import JobCallerDep, ViewerDep
from backend.api.deps import IdPath, SessionDep
from backend.metrics import service
from backend.metrics.schemas import IngestResult, MetricSeries, StoredSample
from spark_runner.job.samples import MetricBatch

router = APIRouter(prefix="/jobs/{job_id}/metrics", tags=["metrics"])


@router.post("", response_model=IngestResult, status_code=status.HTTP_202_ACCEPTED)
def ingest(
    request: Request, session: SessionDep, job: JobCallerDep, body: MetricBatch
) -> IngestResult:
    """Called by the job process with its own token (not a user's)."""
    received = service.ingest(session, job, body)
    targets = {c["name"]: c["delay_target_s"] for c in job.config.get("classes", [])}
    request.app.state.monitor.observe_samples(job.id, body.samples, targets)
    return IngestResult(job_id=job.id, received=received)


@router.get("", response_model=MetricSeries)
def series(
    session: SessionDep,
    _user: ViewerDep,
    job_id: IdPath,
    since: Annotated[
        float | None, Query(description="Only samples with t > since (epoch s).")
    ] = None,
    class_name: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(ge=1, le=100_000)] = 10_000,
) -> MetricSeries:
    rows = service.series(session, job_id, since, class_name, limit)
    return MetricSeries(job_id=job_id, samples=[StoredSample.model_validate(r) for r in rows])

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from backend.api.auth import ViewerDep
from backend.api.deps import IdPath, SessionDep
from backend.history import service
from backend.history.service import RunComparison, RunSummary

router = APIRouter(tags=["history"])

RunId = Annotated[int, Query(ge=1, le=2_147_483_647)]


@router.get("/jobs/{job_id}/summary", response_model=RunSummary)
def run_summary(
    session: SessionDep,
    _user: ViewerDep,
    job_id: IdPath,
    since: Annotated[float | None, Query(allow_inf_nan=False)] = None,
    until: Annotated[float | None, Query(allow_inf_nan=False)] = None,
) -> RunSummary:
    """Per-class QoS (response time vs target, violations) and QoD (loss, shed rate,
    oracle gap) of one run, optionally within a time range."""
    return service.run_summary(session, job_id, since, until)


@router.get("/runs/compare", response_model=RunComparison)
def compare_runs(session: SessionDep, _user: ViewerDep, a: RunId, b: RunId) -> RunComparison:
    """Two runs' summaries side by side."""
    return service.compare(session, a, b)

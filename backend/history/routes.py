from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from backend.api.deps import IdPath, SessionDep
from backend.history import service
from backend.history.schemas import CompareQuery, RunComparison, RunRange, RunSummary
from backend.users.access import ViewerDep

router = APIRouter(tags=["history"])


@router.get("/jobs/{job_id}/summary", response_model=RunSummary)
def run_summary(
    session: SessionDep,
    _user: ViewerDep,
    job_id: IdPath,
    window: Annotated[RunRange, Query()],
) -> RunSummary:
    """Per-class QoS (response time vs target, violations) and QoD (loss, shed rate,
    oracle gap) of one run, optionally within a time range: epoch seconds
    (``since``/``until``) or seconds after the run's first sample (``since_s``/``until_s``)."""
    return service.run_summary(session, job_id, window)


@router.get("/runs/compare", response_model=RunComparison)
def compare_runs(
    session: SessionDep, _user: ViewerDep, query: Annotated[CompareQuery, Query()]
) -> RunComparison:
    """Two runs' summaries side by side, optionally over the same range: epoch seconds
    (``since``/``until``, the same instants for both) or seconds after each run's own
    first sample (``since_s``/``until_s``, so runs started at different times line up)."""
    window = RunRange.model_validate(query.model_dump(exclude={"a", "b"}))
    return service.compare(session, query.a, query.b, window)

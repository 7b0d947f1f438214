"""``GET /clusters``: each coordinated master's allocation in force, and its log of
reallocations (the cluster coordinator: ``backend.coordinator.service``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import select

from backend.api.deps import SessionDep, SettingsDep
from backend.coordinator.models import CoordinatorState, ReallocationRow
from backend.coordinator.service import trigger_words
from backend.users.access import ViewerDep
from spark_runner.core.coordinator import CoordinatorParams, Reallocation
from spark_runner.core.errors import ParameterError

router = APIRouter(prefix="/clusters", tags=["cluster coordinator"])

MAX_LIMIT = 1_000


class ClusterRead(BaseModel):
    master: str
    executors: int = Field(description="The executors its cluster holds (cluster_executors).")
    allocation: dict[int, int] = Field(
        description="Executors each running elastic job may hold now, by job id (its live "
        "max_executors); empty before the first round."
    )
    round_at_s: float | None = Field(description="When the last round ran, epoch s.")
    problem: str | None = Field(description="Why the last round could not allocate.")


class ClustersRead(BaseModel):
    clusters: list[ClusterRead]
    interval_s: float = Field(description="A round per master every this many seconds.")
    params: dict[str, float] = Field(description="The coordinator's settings.")


class ReallocationRead(BaseModel):
    id: int
    at_s: float = Field(description="Epoch s.")
    executors: int
    trigger_job_id: int | None = Field(description="The short job (None: jobs came or went).")
    usage: float = Field(description="The short job's use of its allocation then.")
    held_s: float = Field(description="How long it had been short, s.")
    before: dict[int, int]
    after: dict[int, int]
    reports: dict[int, dict[str, list[float]]] = Field(
        description="Each job's classes as reported: [priority, load in executors]."
    )
    why: str = Field(description="Why the allocation changed, in words.")

    @classmethod
    def of(cls, row: ReallocationRow, params: CoordinatorParams) -> ReallocationRead:
        change = Reallocation(
            row.at_s,
            None if row.trigger_job_id is None else str(row.trigger_job_id),
            row.usage,
            row.held_s,
            row.before,
            row.after,
        )
        why = trigger_words(change, params)
        return cls.model_validate({**vars(row), "why": why})


class ReallocationsRead(BaseModel):
    master: str
    reallocations: list[ReallocationRead] = Field(description="Oldest first.")
    truncated: bool = Field(description="Older ones were left out (raise limit).")


@router.get("", response_model=ClustersRead)
def clusters(session: SessionDep, settings: SettingsDep, _user: ViewerDep) -> ClustersRead:
    """The coordinated masters (``HEADROOM_CLUSTER_EXECUTORS``) and their allocations."""
    states = {
        s.master: s
        for s in session.scalars(
            select(CoordinatorState).where(
                CoordinatorState.master.in_(list(settings.cluster_executors))
            )
        )
    }
    return ClustersRead(
        clusters=[
            ClusterRead(
                master=master,
                executors=executors,
                allocation=_by_id(state.allocation) if (state := states.get(master)) else {},
                round_at_s=state.round_at_s if state else None,
                problem=state.problem if state else None,
            )
            for master, executors in settings.cluster_executors.items()
        ],
        interval_s=settings.coordinate_interval_s,
        params=vars(settings.coordinator_params()),
    )


def _by_id(allocation: dict[str, int]) -> dict[int, int]:
    return {int(job): executors for job, executors in allocation.items()}


@router.get("/reallocations", response_model=ReallocationsRead)
def reallocations(
    session: SessionDep,
    settings: SettingsDep,
    _user: ViewerDep,
    master: Annotated[str, Query(min_length=1, max_length=200, description="The master.")],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 200,
) -> ReallocationsRead:
    """A coordinated master's changes of allocation, the newest ``limit``, oldest first."""
    if master not in settings.cluster_executors:
        raise ParameterError(
            "master", master, f"must be a coordinated master: {sorted(settings.cluster_executors)}"
        )
    stmt = select(ReallocationRow).where(ReallocationRow.master == master)
    stmt = stmt.order_by(ReallocationRow.at_s.desc(), ReallocationRow.id.desc())
    rows = session.scalars(stmt.limit(limit + 1)).all()
    return ReallocationsRead(
        master=master,
        reallocations=[
            ReallocationRead.of(row, settings.coordinator_params()) for row in rows[:limit]
        ][::-1],
        truncated=len(rows) > limit,
    )

"""``/jobs/{job_id}/actions``: a job posts its control actions; operators read the log."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, status
from pydantic import BaseModel, Field

from backend.actions import service
from backend.api.body_limits import ENVELOPE_BYTES, KIB, ParsedBodyRoute
from backend.api.deps import IdPath, SessionDep
from backend.jobs.access import JobCallerDep
from backend.users.access import ViewerDep
from spark_runner.contract.actions import (
    MAX_BATCH_ACTIONS,
    ActionBatch,
    ActionKind,
    ControlAction,
)

router = APIRouter(
    prefix="/jobs/{job_id}/actions", tags=["control actions"], route_class=ParsedBodyRoute
)

MAX_LIMIT = 1_000
MAX_ACTION_JSON_BYTES = 2 * KIB
"""The widest action as JSON: every field and its verdict set, every number at its widest
(24 characters), ``class_name`` and ``manager_state`` at their maximum lengths with every
character escaped, is 1.3 KB."""
ACTIONS_BODY_BYTES = MAX_BATCH_ACTIONS * MAX_ACTION_JSON_BYTES + ENVELOPE_BYTES
"""The body limit of ``POST /jobs/{job_id}/actions``: a batch of the widest actions."""


class ActionsReceived(BaseModel):
    job_id: int
    received: int


class ActionLogRead(BaseModel):
    job_id: int
    thresholds: dict[str, float] = Field(
        description="The job's usage thresholds tau0..tau3 now (the lowest of its classes')."
    )
    actions: list[ControlAction] = Field(description="Oldest first.")
    truncated: bool = Field(description="Older actions were left out (raise limit).")


@router.post(
    "",
    response_model=ActionsReceived,
    status_code=status.HTTP_202_ACCEPTED,
    max_body_size=ACTIONS_BODY_BYTES,
)
def ingest(session: SessionDep, job: JobCallerDep, body: ActionBatch) -> ActionsReceived:
    """Called by the job process with its own token. An action already stored (same
    ``seq``) is replaced: the job posts each action when it takes it and again with its
    verdict."""
    service.ingest(session, job.job_id, body.actions, time.time())
    return ActionsReceived(job_id=job.job_id, received=len(body.actions))


@router.get(
    "",
    response_model=ActionLogRead,
    description="A job's control actions (scale out/in, shedding changes worth noting), "
    "each with its trigger, the capacity and shed fraction before and after, and its "
    "verdict once the periods after it are measured; the newest ``limit``, oldest first.",
)
def action_log(
    session: SessionDep,
    _user: ViewerDep,
    job_id: IdPath,
    kind: Annotated[ActionKind | None, Query(description="Only this kind.")] = None,
    class_name: Annotated[
        str | None, Query(min_length=1, max_length=100, description="Only this class's.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 200,
) -> ActionLogRead:
    actions, truncated = service.actions_of(
        session, job_id, kind=kind, class_name=class_name, limit=limit
    )
    return ActionLogRead(
        job_id=job_id,
        thresholds=service.thresholds_of(session, job_id),
        actions=actions,
        truncated=truncated,
    )

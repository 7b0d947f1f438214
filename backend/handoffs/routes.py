"""``POST /handoffs``: move a class from one running job to another; ``GET /handoffs``:
the hand-offs and their progress (``backend.handoffs.service``)."""

from __future__ import annotations

import time
from typing import Annotated, ClassVar

from fastapi import APIRouter, Query, status
from pydantic import BaseModel, ConfigDict, Field

from backend.api.body_limits import ENVELOPE_BYTES
from backend.api.deps import SessionDep
from backend.api.schemas import request_config
from backend.handoffs import service
from backend.handoffs.models import HandoffRow
from backend.users.access import OperatorDep, ViewerDep
from spark_runner.contract.samples import INT32_MAX
from spark_runner.scenario.models import NAME_MAX_LENGTH, NAME_PATTERN

router = APIRouter(prefix="/handoffs", tags=["hand-offs"])

MAX_LIMIT = 1_000


class HandoffCreate(BaseModel):
    """Move ``class_name`` from the job computing it to a job holding it in standby."""

    max_body_bytes: ClassVar[int] = ENVELOPE_BYTES

    model_config = request_config({"class_name": "recs", "origin_job_id": 1, "target_job_id": 2})

    class_name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN)
    origin_job_id: int = Field(ge=1, le=INT32_MAX, description="The job computing it now.")
    target_job_id: int = Field(
        ge=1, le=INT32_MAX, description="A running job holding the class in standby."
    )


class HandoffRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    class_name: str
    origin_job_id: int
    target_job_id: int
    state: str = Field(description="planned, switching, done or failed.")
    requested_s: float = Field(description="Epoch s.")
    switch_s: float = Field(
        description="The switch instant, epoch s: the origin computes the tuples before it, "
        "the target those from it on."
    )
    deadline_s: float = Field(description="Both jobs must apply their ranges by then.")
    done_after_s: float = Field(description="The origin's watermark passes the switch then.")
    origin_version: int = Field(description="The origin's configuration version with its range.")
    target_version: int
    reason: str | None = Field(description="Why it failed.")
    created_by: str | None
    ended_at_s: float | None


class HandoffsRead(BaseModel):
    handoffs: list[HandoffRead] = Field(description="Newest first.")
    now_s: float = Field(description="The server's clock, epoch s (to read progress against).")


@router.post("", response_model=HandoffRead, status_code=status.HTTP_201_CREATED)
def create_handoff(session: SessionDep, user: OperatorDep, body: HandoffCreate) -> HandoffRead:
    """Plan the move at the next window boundary far enough ahead for both jobs to take
    their ranges, and give them their ranges."""
    move = service.Move(body.class_name, body.origin_job_id, body.target_job_id)
    row = service.request(session, move, time.time(), user.username)
    return HandoffRead.model_validate(row)


@router.get("", response_model=HandoffsRead)
def list_handoffs(
    session: SessionDep,
    _user: ViewerDep,
    class_name: Annotated[
        str | None,
        Query(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
) -> HandoffsRead:
    rows: list[HandoffRow] = list(service.listed(session, class_name, limit))
    return HandoffsRead(handoffs=[HandoffRead.model_validate(r) for r in rows], now_s=time.time())

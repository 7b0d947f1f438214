from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from fastapi.concurrency import run_in_threadpool

from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, ReadSessionsDep, SessionDep, WriteGateDep, from_app_state
from backend.api.sqlite_gate import PREVIEW_PATH
from backend.bell import bell, config_key
from backend.jobs.access import JobCallerDep
from backend.tuning import service
from backend.tuning.previews import Previews
from backend.tuning.schemas import (
    Ack,
    ConfigChange,
    ControlMessage,
    JobConfigRead,
    WhatIfRead,
)
from backend.users.access import OperatorDep, ViewerDep

router = APIRouter(prefix="/jobs/{job_id}", tags=["live tuning"], route_class=ParsedBodyRoute)

RECHECK_S = 0.1
"""A long poll wakes when this process stores a version (the bell) and re-reads at least
this often, for versions stored by another API process."""

PreviewsDep = Annotated[Previews, from_app_state("previews")]


@router.get("/config", response_model=JobConfigRead)
def get_config(session: SessionDep, _user: ViewerDep, job_id: IdPath) -> JobConfigRead:
    """The newest live configuration, the version the job applied, and the audit trail."""
    return service.describe(session, job_id)


@router.patch("/config", response_model=JobConfigRead)
def change_config(
    session: SessionDep, user: OperatorDep, job_id: IdPath, body: ConfigChange
) -> JobConfigRead:
    """Store a new version (validated with the controller's own rules); the running job
    picks it up and acknowledges it."""
    service.propose(session, job_id, body.as_changes(), user.username)
    return service.describe(session, job_id)


@router.post(
    PREVIEW_PATH,
    response_model=WhatIfRead,
    responses={
        429: {"description": "The user started previews_per_user previews in the window."},
        503: {"description": "preview_concurrency previews are running; Retry-After."},
    },
)
async def preview_config(
    session: SessionDep,
    user: OperatorDep,
    previews: PreviewsDep,
    write_gate: WriteGateDep,
    job_id: IdPath,
    body: ConfigChange,
) -> WhatIfRead:
    """Predict a change before storing it: the job's last minutes replayed through the
    simulator under the newest configuration and under the change, beside what the job
    measured (422 when there is nothing to replay or the change breaks a rule). The
    replay runs in a worker process, within per-process and per-user bounds. The
    prediction is kept after the replay, under the SQLite write gate (none is held while
    the replay runs)."""
    return await service.preview(
        previews, session, write_gate, user.username, job_id, body.as_changes()
    )


@router.get(
    "/control",
    response_model=ControlMessage,
    responses={204: {"description": "No newer version within wait_s."}},
)
async def poll_control(
    read_sessions: ReadSessionsDep,
    job: JobCallerDep,
    after_version: Annotated[int, Query(ge=0, le=2_147_483_647)] = 0,
    wait_s: Annotated[float, Query(ge=0, le=30)] = 0,
) -> ControlMessage | Response:
    """Long poll, for the job: answers as soon as a version newer than ``after_version``
    exists, or 204 after ``wait_s``."""
    job_id = job.job_id

    def _check() -> ControlMessage | None:
        with read_sessions() as session:
            config = service.newer_than(session, job_id, after_version)
        return ControlMessage(job_id=job_id, config=config) if config else None

    deadline = time.monotonic() + wait_s
    with bell.listen(config_key(job_id)) as change:
        while True:
            message = await run_in_threadpool(_check)
            if message is not None:
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Response(status_code=status.HTTP_204_NO_CONTENT)
            await change.wait(min(RECHECK_S, remaining))


@router.post("/control/ack", status_code=status.HTTP_204_NO_CONTENT)
def acknowledge(session: SessionDep, job: JobCallerDep, body: Ack) -> None:
    """For the job: it applied ``version`` (and so every earlier one)."""
    service.acknowledge(session, job.job_id, body.version)

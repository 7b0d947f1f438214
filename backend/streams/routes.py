from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, status

from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, SessionDep, from_app_state
from backend.streams import service
from backend.streams.repository import StreamRepository
from backend.streams.schemas import StreamRead, StreamSpec
from backend.users.access import OperatorDep, ViewerDep

router = APIRouter(prefix="/streams", tags=["streams"], route_class=ParsedBodyRoute)

StreamHooksDep = Annotated[service.StreamHooks, from_app_state("hooks")]


@router.get("", response_model=list[StreamRead])
def list_streams(session: SessionDep, _user: ViewerDep) -> list[StreamRead]:
    return [StreamRead.model_validate(s) for s in StreamRepository(session).list_all()]


@router.post("", response_model=StreamRead, status_code=status.HTTP_201_CREATED)
def create_stream(
    session: SessionDep, hooks: StreamHooksDep, _user: OperatorDep, body: StreamSpec
) -> StreamRead:
    """Declare a stream's columns; queries then read it by name."""
    return StreamRead.model_validate(service.save(session, body, hooks))


@router.get("/{stream_id}", response_model=StreamRead)
def get_stream(session: SessionDep, _user: ViewerDep, stream_id: IdPath) -> StreamRead:
    return StreamRead.model_validate(StreamRepository(session).require(stream_id))


@router.put("/{stream_id}", response_model=StreamRead)
def replace_stream(
    session: SessionDep,
    hooks: StreamHooksDep,
    _user: OperatorDep,
    stream_id: IdPath,
    body: StreamSpec,
) -> StreamRead:
    """Every stored query reading the stream is checked again against the new columns."""
    return StreamRead.model_validate(service.save(session, body, hooks, stream_id))


@router.delete("/{stream_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_stream(
    session: SessionDep, hooks: StreamHooksDep, _user: OperatorDep, stream_id: IdPath
) -> None:
    service.delete(session, stream_id, hooks)

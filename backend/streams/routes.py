from __future__ import annotations

from fastapi import APIRouter, status

from backend.api.auth import OperatorDep, ViewerDep
from backend.api.body_limits import ParsedBodyRoute
from backend.api.deps import IdPath, SessionDep
from backend.streams import service
from backend.streams.schemas import STREAM_BODY_BYTES, StreamRead, StreamSpec

router = APIRouter(prefix="/streams", tags=["streams"], route_class=ParsedBodyRoute)


@router.get("", response_model=list[StreamRead])
def list_streams(session: SessionDep, _user: ViewerDep) -> list[StreamRead]:
    return [StreamRead.model_validate(s) for s in service.list_streams(session)]


@router.post(
    "",
    response_model=StreamRead,
    status_code=status.HTTP_201_CREATED,
    max_body_size=STREAM_BODY_BYTES,
)
def create_stream(session: SessionDep, _user: OperatorDep, body: StreamSpec) -> StreamRead:
    """Declare a stream's columns; queries then read it by name."""
    return StreamRead.model_validate(service.save(session, body))


@router.get("/{stream_id}", response_model=StreamRead)
def get_stream(session: SessionDep, _user: ViewerDep, stream_id: IdPath) -> StreamRead:
    return StreamRead.model_validate(service.get_stream(session, stream_id))


@router.put("/{stream_id}", response_model=StreamRead, max_body_size=STREAM_BODY_BYTES)
def replace_stream(
    session: SessionDep, _user: OperatorDep, stream_id: IdPath, body: StreamSpec
) -> StreamRead:
    """Every stored query reading the stream is checked again against the new columns."""
    return StreamRead.model_validate(service.save(session, body, stream_id))


@router.delete("/{stream_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_stream(session: SessionDep, _user: OperatorDep, stream_id: IdPath) -> None:
    service.delete(session, stream_id)

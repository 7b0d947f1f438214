"""Declared-stream use cases. A stream's columns are what the queries reading it were
checked against, so a change is checked against every one of them again (those reading
it through shared queries too; a column they read keeps its type), and a stream that a
query reads cannot be deleted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from backend.errors import Conflict, NotFound
from backend.queries import service as queries
from backend.streams.models import DeclaredStream
from backend.streams.repository import StreamRepository
from backend.streams.schemas import StreamSpec


def list_streams(session: Session) -> Sequence[DeclaredStream]:
    return StreamRepository(session).list_all()


def get_stream(session: Session, stream_id: int) -> DeclaredStream:
    stream = StreamRepository(session).get(stream_id)
    if stream is None:
        raise NotFound(f"stream {stream_id} does not exist")
    return stream


def save(session: Session, spec: StreamSpec, stream_id: int | None = None) -> DeclaredStream:
    repo = StreamRepository(session)
    other = repo.by_name(spec.name)
    if other is not None and other.id != stream_id:
        raise Conflict(f"name={spec.name!r} is taken: stream names must be unique")
    stream = DeclaredStream() if stream_id is None else get_stream(session, stream_id)
    old_name = stream.name
    retyped = _retyped(stream.columns or [], spec)
    if stream_id is not None and old_name != spec.name and queries.readers(session, old_name):
        raise Conflict(
            f"stream {old_name!r} is read by queries; a rename would leave them reading "
            "nothing (declare the new name as another stream)"
        )
    stream.name = spec.name
    stream.columns = [c.model_dump(mode="json") for c in spec.columns]
    stream.event_time = spec.event_time
    stream.description = spec.description
    if stream_id is None:
        repo.add(stream)
    session.flush()
    queries.check_readers(session, spec.name, retyped=retyped)
    return stream


def _retyped(stored: list[dict[str, Any]], spec: StreamSpec) -> dict[str, queries.TypeChange]:
    """The columns of ``spec`` that ``stored`` declares with another type."""
    before = {column["name"]: column.get("type") for column in stored}
    return {
        column.name: queries.TypeChange(f"columns[{i}].type", str(before[column.name]), column.type)
        for i, column in enumerate(spec.columns)
        if column.name in before and before[column.name] != column.type
    }


def delete(session: Session, stream_id: int) -> None:
    stream = get_stream(session, stream_id)
    reading = queries.readers(session, stream.name)
    if reading:
        names = ", ".join(sorted(repr(q.name) for q in reading))
        raise Conflict(f"stream {stream.name!r} is read by queries {names}; delete them first")
    StreamRepository(session).delete(stream)

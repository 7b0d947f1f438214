"""Declared-stream use cases. A stream's columns are what the queries reading it were
checked against, so a change is checked against every one of them again (those reading
it through shared queries too; a column they read keeps its type), and a stream that a
query reads cannot be deleted.

The queries are built on streams (they import this domain, never the other way): what
they say of a change comes in as ``StreamHooks`` (``backend.hooks``, handed to the routes
by ``backend.main``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.streams.models import DeclaredStream
from backend.streams.repository import StreamRepository
from backend.streams.schemas import StreamSpec, TypeChange


class StreamHooks(Protocol):
    def stream_readers(self, session: Session, stream: str) -> list[str]:
        """The names of the stored queries that read ``stream``."""

    def check_stream_readers(
        self, session: Session, stream: str, retyped: Mapping[str, TypeChange]
    ) -> None:
        """``FieldErrors`` if a stored query reading ``stream``, directly or through
        shared queries, no longer passes its checks, or reads a column of ``retyped``."""


def save(
    session: Session, spec: StreamSpec, hooks: StreamHooks, stream_id: int | None = None
) -> DeclaredStream:
    repo = StreamRepository(session)
    other = repo.by_name(spec.name)
    if other is not None and other.id != stream_id:
        raise Conflict(f"name={spec.name!r} is taken: stream names must be unique")
    stream = DeclaredStream() if stream_id is None else repo.require(stream_id)
    old_name = stream.name
    retyped = _retyped(stream.columns or [], spec)
    if stream_id is not None and old_name != spec.name and hooks.stream_readers(session, old_name):
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
    hooks.check_stream_readers(session, spec.name, retyped)
    return stream


def _retyped(stored: list[dict[str, Any]], spec: StreamSpec) -> dict[str, TypeChange]:
    """The columns of ``spec`` that ``stored`` declares with another type."""
    before = {column["name"]: column.get("type") for column in stored}
    return {
        column.name: TypeChange(f"columns[{i}].type", str(before[column.name]), column.type)
        for i, column in enumerate(spec.columns)
        if column.name in before and before[column.name] != column.type
    }


def delete(session: Session, stream_id: int, hooks: StreamHooks) -> None:
    repo = StreamRepository(session)
    stream = repo.require(stream_id)
    reading = hooks.stream_readers(session, stream.name)
    if reading:
        names = ", ".join(sorted(repr(name) for name in reading))
        raise Conflict(f"stream {stream.name!r} is read by queries {names}; delete them first")
    repo.delete(stream)

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.streams.models import DeclaredStream
from spark_runner.scenario.compose import DECLARED_FIELDS


class StreamRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self) -> Sequence[DeclaredStream]:
        return self.session.scalars(select(DeclaredStream).order_by(DeclaredStream.id)).all()

    def get(self, stream_id: int) -> DeclaredStream | None:
        return self.session.get(DeclaredStream, stream_id)

    def by_name(self, name: str) -> DeclaredStream | None:
        stmt = select(DeclaredStream).where(DeclaredStream.name == name)
        return self.session.scalars(stmt).first()

    def declarations(self) -> dict[str, dict[str, Any]]:
        """Every declared stream by name, as a scenario's stream carries it."""
        return {
            s.name: {field: getattr(s, field) for field in DECLARED_FIELDS} for s in self.list_all()
        }

    def add(self, stream: DeclaredStream) -> DeclaredStream:
        self.session.add(stream)
        self.session.flush()
        return stream

    def delete(self, stream: DeclaredStream) -> None:
        self.session.delete(stream)
        self.session.flush()

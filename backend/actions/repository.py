"""Reading and writing a job's control actions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from backend.actions.models import ControlActionRow
from spark_runner.contract.actions import ControlAction

_KEY = ["job_id", "origin", "seq"]
"""An action's identity: a re-post of the same replaces it."""
_REPLACED = tuple(c for c in ControlAction.model_fields if c not in _KEY)
"""What a re-post replaces: every other field of the action (its verdict among them)."""


class ActionRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def upsert_many(self, rows: Sequence[dict[str, Any]]) -> None:
        """Store ``rows``; a row already stored (same job, origin and seq) takes the new
        one's other fields."""
        if rows:
            self.session.execute(self._upsert(_REPLACED), list(rows))

    def _upsert(self, replaced: Sequence[str]) -> Insert:
        dialect = self.session.get_bind().dialect.name
        if dialect == "postgresql":
            pg = postgresql.insert(ControlActionRow)
            return pg.on_conflict_do_update(
                index_elements=_KEY, set_={c: pg.excluded[c] for c in replaced}
            )
        if dialect == "sqlite":
            lite = sqlite.insert(ControlActionRow)
            return lite.on_conflict_do_update(
                index_elements=_KEY, set_={c: lite.excluded[c] for c in replaced}
            )
        raise NotImplementedError(f"action ingest does not support the {dialect} dialect")

    def newest(
        self, job_id: int, *, kind: str | None, class_name: str | None, limit: int
    ) -> Sequence[ControlActionRow]:
        """The job's newest ``limit`` actions, newest first, of ``kind`` and ``class_name``
        where given."""
        stmt = select(ControlActionRow).where(ControlActionRow.job_id == job_id)
        if kind is not None:
            stmt = stmt.where(ControlActionRow.kind == kind)
        if class_name is not None:
            stmt = stmt.where(ControlActionRow.class_name == class_name)
        order = stmt.order_by(ControlActionRow.at_s.desc(), ControlActionRow.id.desc())
        order = order.limit(limit)
        return self.session.scalars(order).all()

    def unjudged(self, job_id: int, origin: str, newest: int = 20) -> list[ControlActionRow]:
        """The job's newest ``newest`` actions of ``origin`` still without a verdict, oldest
        first (filtered here: a JSON ``null`` and SQL's ``NULL`` both read as None)."""
        stmt = select(ControlActionRow).where(
            ControlActionRow.job_id == job_id, ControlActionRow.origin == origin
        )
        rows = self.session.scalars(stmt.order_by(ControlActionRow.at_s.desc()).limit(newest))
        return [row for row in reversed(rows.all()) if row.verdict is None]

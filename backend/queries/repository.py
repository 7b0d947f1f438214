from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.queries.models import ContinuousQuery


class QueryRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self) -> Sequence[ContinuousQuery]:
        stmt = select(ContinuousQuery).order_by(ContinuousQuery.class_id, ContinuousQuery.id)
        return self.session.scalars(stmt).all()

    def for_classes(self, class_ids: Sequence[int]) -> Sequence[ContinuousQuery]:
        stmt = (
            select(ContinuousQuery)
            .where(ContinuousQuery.class_id.in_(class_ids))
            .order_by(ContinuousQuery.class_id, ContinuousQuery.id)
        )
        return self.session.scalars(stmt).all()

    def shared_named(self, name: str) -> ContinuousQuery | None:
        stmt = select(ContinuousQuery).where(
            ContinuousQuery.name == name, ContinuousQuery.shared.is_(True)
        )
        return self.session.scalars(stmt.order_by(ContinuousQuery.id)).first()

    def get(self, query_id: int) -> ContinuousQuery | None:
        return self.session.get(ContinuousQuery, query_id)

    def add(self, query: ContinuousQuery) -> ContinuousQuery:
        self.session.add(query)
        self.session.flush()
        return query

    def delete(self, query: ContinuousQuery) -> None:
        self.session.delete(query)
        self.session.flush()

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.classes.models import QueryClass


class QueryClassRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self) -> Sequence[QueryClass]:
        return self.session.scalars(select(QueryClass).order_by(QueryClass.id)).all()

    def get(self, class_id: int) -> QueryClass | None:
        return self.session.get(QueryClass, class_id)

    def get_many(self, class_ids: Sequence[int]) -> Sequence[QueryClass]:
        stmt = select(QueryClass).where(QueryClass.id.in_(class_ids)).order_by(QueryClass.id)
        return self.session.scalars(stmt).all()

    def by_name(self, name: str) -> QueryClass | None:
        return self.session.scalars(select(QueryClass).where(QueryClass.name == name)).first()

    def add(self, query_class: QueryClass) -> QueryClass:
        self.session.add(query_class)
        self.session.flush()
        return query_class

    def delete(self, query_class: QueryClass) -> None:
        self.session.delete(query_class)
        self.session.flush()

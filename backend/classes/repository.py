from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from backend.classes.models import QueryClass
from backend.repository import NamedRepository


class QueryClassRepository(NamedRepository[QueryClass]):
    model = QueryClass
    noun = "query class"

    def get_many(self, class_ids: Sequence[int]) -> Sequence[QueryClass]:
        stmt = select(QueryClass).where(QueryClass.id.in_(class_ids)).order_by(QueryClass.id)
        return self.session.scalars(stmt).all()

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from backend.queries.models import ContinuousQuery
from backend.queries.schemas import query_part
from backend.repository import Repository
from spark_runner.scenario.compose import QUERY_PREFIX, inputs_of


class QueryRepository(Repository[ContinuousQuery]):
    model = ContinuousQuery
    noun = "query"

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

    def reading(self, source: str) -> list[ContinuousQuery]:
        """The stored queries that read ``source`` (a stream's name, or ``query:<name>``
        for a shared query's output): as their source, a join's right side or in SQL."""
        return [q for q in self.list_all() if source in inputs_of(query_part(q))]

    def output_readers(self, query: ContinuousQuery) -> list[ContinuousQuery]:
        """The other stored queries that read ``query``'s output: none unless it is shared
        and the one its name stands for (``query:<name>`` names the first of that name)."""
        if not query.shared:
            return []
        named = self.shared_named(query.name)
        if named is None or named.id != query.id:
            return []
        return [q for q in self.reading(QUERY_PREFIX + query.name) if q.id != query.id]

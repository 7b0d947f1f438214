from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Insert, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from backend.metrics.models import MetricSampleRow


class MetricRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def insert_many(self, rows: Sequence[dict[str, Any]]) -> None:
        """Batched insert; a sample already stored (same job, class, seq) is skipped, so a
        job that re-sends after a lost acknowledgement never duplicates history."""
        if not rows:
            return
        self.session.execute(self._insert_ignoring_duplicates(), list(rows))

    def _insert_ignoring_duplicates(self) -> Insert:
        dialect = self.session.get_bind().dialect.name
        if dialect == "postgresql":
            return postgresql.insert(MetricSampleRow).on_conflict_do_nothing(
                index_elements=["job_id", "class_name", "seq"]
            )
        if dialect == "sqlite":
            return sqlite.insert(MetricSampleRow).on_conflict_do_nothing(
                index_elements=["job_id", "class_name", "seq"]
            )
        raise NotImplementedError(f"metric ingest does not support the {dialect} dialect")

    def query(
        self,
        job_id: int,
        *,
        since: float | None = None,
        until: float | None = None,
        class_name: str | None = None,
        after_id: int | None = None,
        limit: int = 10_000,
    ) -> Sequence[MetricSampleRow]:
        """Samples of a job ordered by time, oldest first, within the given bounds."""
        stmt = select(MetricSampleRow).where(MetricSampleRow.job_id == job_id)
        if since is not None:
            stmt = stmt.where(MetricSampleRow.t > since)
        if until is not None:
            stmt = stmt.where(MetricSampleRow.t <= until)
        if class_name is not None:
            stmt = stmt.where(MetricSampleRow.class_name == class_name)
        if after_id is not None:
            stmt = stmt.where(MetricSampleRow.id > after_id)
            stmt = stmt.order_by(MetricSampleRow.id).limit(limit)
        else:
            stmt = stmt.order_by(MetricSampleRow.t, MetricSampleRow.class_name).limit(limit)
        return self.session.scalars(stmt).all()

    def newest_t(self, job_id: int) -> float | None:
        stmt = select(func.max(MetricSampleRow.t)).where(MetricSampleRow.job_id == job_id)
        value = self.session.scalar(stmt)
        return float(value) if value is not None else None

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from sqlalchemy import Insert, Select, func, literal, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from backend.jobs.models import Job
from backend.metrics.models import MetricSampleRow

PageCursor = tuple[float, str, int]
"""Where a keyset page ends: the last row's ``(t, class_name, id)``."""


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
        since_inclusive: bool = False,
    ) -> Sequence[MetricSampleRow]:
        """Samples of a job ordered by time, oldest first, within the given bounds
        (``t > since``, or ``t >= since`` with ``since_inclusive``; ``t <= until``)."""
        stmt = self._window(job_id, since, until, class_name, since_inclusive=since_inclusive)
        if after_id is not None:
            stmt = stmt.where(MetricSampleRow.id > after_id)
            stmt = stmt.order_by(MetricSampleRow.id).limit(limit)
        else:
            stmt = stmt.order_by(MetricSampleRow.t, MetricSampleRow.class_name).limit(limit)
        return self.session.scalars(stmt).all()

    def iter_window(
        self,
        job_id: int,
        *,
        since: float | None = None,
        until: float | None = None,
        class_name: str | None = None,
        newest_first: bool = False,
        batch_size: int = 1000,
    ) -> Generator[MetricSampleRow]:
        """Samples in ``(t, class_name)`` order (descending with ``newest_first``), fetched
        ``batch_size`` rows at a time; close the iterator to stop reading early."""
        stmt = self._window(job_id, since, until, class_name)
        if newest_first:
            stmt = stmt.order_by(
                MetricSampleRow.t.desc(),
                MetricSampleRow.class_name.desc(),
                MetricSampleRow.id.desc(),
            )
        else:
            stmt = stmt.order_by(MetricSampleRow.t, MetricSampleRow.class_name, MetricSampleRow.id)
        result = self.session.scalars(stmt.execution_options(yield_per=batch_size))
        try:
            yield from result
        finally:
            result.close()

    def page(
        self,
        job_id: int,
        *,
        since: float | None = None,
        until: float | None = None,
        class_name: str | None = None,
        after: PageCursor | None = None,
        limit: int = 1000,
    ) -> Sequence[MetricSampleRow]:
        """Up to ``limit`` samples after ``after`` in ``(t, class_name, id)`` order: keyset
        pages, so a long export can read each page in a short transaction of its own."""
        stmt = self._window(job_id, since, until, class_name)
        if after is not None:
            stmt = stmt.where(
                tuple_(MetricSampleRow.t, MetricSampleRow.class_name, MetricSampleRow.id)
                > tuple_(literal(after[0]), literal(after[1]), literal(after[2]))
            )
        stmt = stmt.order_by(MetricSampleRow.t, MetricSampleRow.class_name, MetricSampleRow.id)
        return self.session.scalars(stmt.limit(limit)).all()

    @staticmethod
    def _window(
        job_id: int,
        since: float | None,
        until: float | None,
        class_name: str | None,
        *,
        since_inclusive: bool = False,
    ) -> Select[MetricSampleRow]:
        stmt = select(MetricSampleRow).where(MetricSampleRow.job_id == job_id)
        if since is not None:
            stmt = stmt.where(
                MetricSampleRow.t >= since if since_inclusive else MetricSampleRow.t > since
            )
        if until is not None:
            stmt = stmt.where(MetricSampleRow.t <= until)
        if class_name is not None:
            stmt = stmt.where(MetricSampleRow.class_name == class_name)
        return stmt

    def oldest_t(self, job_id: int) -> float | None:
        stmt = select(func.min(MetricSampleRow.t)).where(MetricSampleRow.job_id == job_id)
        value = self.session.scalar(stmt)
        return float(value) if value is not None else None

    def newest_t(self, job_id: int) -> float | None:
        stmt = select(func.max(MetricSampleRow.t)).where(MetricSampleRow.job_id == job_id)
        value = self.session.scalar(stmt)
        return float(value) if value is not None else None

    def news(
        self, job_ids: Sequence[int], after_id: int | None
    ) -> tuple[int | None, dict[int, tuple[str, int | None]]]:
        """One statement for live readers: for each of ``job_ids`` that exists, its status
        and its newest sample id above ``after_id`` (None: none above it; with ``after_id``
        None, none is news), and the newest sample id of all jobs (0 with none; None when
        no job of ``job_ids`` exists). Both look-ups go through the primary key: only
        samples newer than ``after_id`` are read."""
        newest = select(func.coalesce(func.max(MetricSampleRow.id), 0)).scalar_subquery()
        floor = newest if after_id is None else literal(after_id)
        news = (
            select(MetricSampleRow.job_id, func.max(MetricSampleRow.id).label("newest"))
            .where(MetricSampleRow.id > floor, MetricSampleRow.job_id.in_(job_ids))
            .group_by(MetricSampleRow.job_id)
            .subquery()
        )
        stmt = (
            select(Job.id, Job.status, news.c.newest, newest)
            .outerjoin(news, news.c.job_id == Job.id)
            .where(Job.id.in_(job_ids))
        )
        rows = self.session.execute(stmt).all()
        jobs = {int(r[0]): (str(r[1]), int(r[2]) if r[2] is not None else None) for r in rows}
        return (int(rows[0][3]) if rows else None), jobs

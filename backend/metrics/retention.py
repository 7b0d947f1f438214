"""Retention: old samples are merged into coarser buckets, very old ones deleted.

Compaction replaces the fine samples of a finished bucket by one merged sample (the same
rules as the query-time downsampling), inside one transaction, so a crash mid-way loses
nothing: either the fine rows or the merged row exist.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from backend.metrics.downsample import downsample
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from spark_runner.contract.samples import MetricSample


@dataclass(frozen=True)
class RetentionResult:
    deleted: int
    compacted_from: int
    compacted_to: int


def apply_retention(
    session: Session, now: float, retention_s: float, compact_after_s: float, step_s: float
) -> RetentionResult:
    expired = session.execute(delete(MetricSampleRow).where(MetricSampleRow.t < now - retention_s))
    deleted = int(expired.rowcount or 0)  # type: ignore[attr-defined]
    # Only whole buckets that ended before the cut-off, and only rows not merged already.
    cutoff = math.floor((now - compact_after_s) / step_s) * step_s
    fine = session.scalars(
        select(MetricSampleRow)
        .where(MetricSampleRow.t < cutoff, MetricSampleRow.period_s < step_s * 0.99)
        .order_by(MetricSampleRow.job_id, MetricSampleRow.t)
    ).all()
    if not fine:
        return RetentionResult(deleted, 0, 0)
    by_job: dict[int, list[MetricSampleRow]] = {}
    for row in fine:
        by_job.setdefault(row.job_id, []).append(row)
    merged_rows: list[dict[str, object]] = []
    for job_id, rows in by_job.items():
        samples = [MetricSample.model_validate(r, from_attributes=True) for r in rows]
        merged_rows += [{"job_id": job_id, **m.model_dump()} for m in downsample(samples, step_s)]
    session.execute(delete(MetricSampleRow).where(MetricSampleRow.id.in_([r.id for r in fine])))
    MetricRepository(session).insert_many(merged_rows)
    session.flush()
    return RetentionResult(deleted, len(fine), len(merged_rows))

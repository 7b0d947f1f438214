from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class MetricSampleRow(Base):
    """One class's statistics over one control period of one job."""

    __tablename__ = "metric_samples"
    __table_args__ = (
        UniqueConstraint("job_id", "class_name", "seq"),
        Index("ix_metric_samples_job_class_t", "job_id", "class_name", "t"),
        Index("ix_metric_samples_job_t", "job_id", "t"),
    )

    # BIGINT on PostgreSQL; SQLite needs INTEGER for its rowid alias.
    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    class_name: Mapped[str] = mapped_column(String(100))
    seq: Mapped[int] = mapped_column(Integer)
    t: Mapped[float] = mapped_column(Float, doc="End of the period, Unix epoch seconds.")
    period_s: Mapped[float] = mapped_column(Float)
    arrived_count: Mapped[int] = mapped_column(Integer)
    output_count: Mapped[int] = mapped_column(Integer)
    arrival_rate: Mapped[float] = mapped_column(Float)
    response_time_mean_s: Mapped[float | None] = mapped_column(Float, default=None)
    response_time_max_s: Mapped[float | None] = mapped_column(Float, default=None)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

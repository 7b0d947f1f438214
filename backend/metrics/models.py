from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.expression import false

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
    response_time_p50_s: Mapped[float | None] = mapped_column(Float, default=None)
    response_time_p95_s: Mapped[float | None] = mapped_column(Float, default=None)
    response_time_p99_s: Mapped[float | None] = mapped_column(Float, default=None)
    violation_mean_s: Mapped[float | None] = mapped_column(Float, default=None)
    violation_max_s: Mapped[float | None] = mapped_column(Float, default=None)
    admitted_count: Mapped[int | None] = mapped_column(Integer, default=None)
    shed_count: Mapped[int | None] = mapped_column(Integer, default=None)
    waiting_count: Mapped[int | None] = mapped_column(Integer, default=None)
    load: Mapped[float | None] = mapped_column(Float, default=None)
    capacity_share: Mapped[float | None] = mapped_column(Float, default=None)
    headroom: Mapped[float | None] = mapped_column(Float, default=None)
    capacity_usage: Mapped[float | None] = mapped_column(Float, default=None)
    shed_fraction: Mapped[float | None] = mapped_column(Float, default=None)
    oracle_shed_fraction: Mapped[float | None] = mapped_column(Float, default=None)
    floor_s: Mapped[float | None] = mapped_column(Float, default=None)
    manager: Mapped[str | None] = mapped_column(String(20), default=None)
    manager_state: Mapped[str | None] = mapped_column(String(20), default=None)
    redistributed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    config_version: Mapped[int | None] = mapped_column(Integer, default=None)
    warmup: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    executors: Mapped[int | None] = mapped_column(Integer, default=None)
    executors_requested: Mapped[int | None] = mapped_column(Integer, default=None)
    job_usage: Mapped[float | None] = mapped_column(Float, default=None)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class ControlActionRow(Base):
    """One control action of a job (``spark_runner.contract.actions.ControlAction``); a
    re-post with the verdict replaces the row of the same (job, origin, seq)."""

    __tablename__ = "control_actions"
    __table_args__ = (UniqueConstraint("job_id", "origin", "seq"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    at_s: Mapped[float] = mapped_column(Float, doc="When it was taken, epoch s.")
    kind: Mapped[str] = mapped_column(String(20))
    class_name: Mapped[str | None] = mapped_column(String(100), default=None)
    usage: Mapped[float] = mapped_column(Float)
    threshold: Mapped[float | None] = mapped_column(Float, default=None)
    held_s: Mapped[float | None] = mapped_column(Float, default=None)
    manager_state: Mapped[str | None] = mapped_column(String(20), default=None)
    executors_before: Mapped[int | None] = mapped_column(Integer, default=None)
    executors_after: Mapped[int | None] = mapped_column(Integer, default=None)
    shed_before: Mapped[float] = mapped_column(Float)
    shed_after: Mapped[float] = mapped_column(Float)
    verdict: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    origin: Mapped[str] = mapped_column(String(12), default="job", server_default="job")
    trigger: Mapped[str | None] = mapped_column(String(200), default=None)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

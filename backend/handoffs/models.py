"""The hand-offs of classes between jobs, kept so either job can crash and restart."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow

ACTIVE = ("planned", "switching")
"""A hand-off in one of these states holds its class: no other may start."""


class HandoffRow(Base):
    """One class moving from one job to another at a switch instant (epoch s).

    States: ``planned`` (both jobs were given their ranges and must apply them before
    ``deadline_s``), ``switching`` (the switch has passed: the target computes the class,
    the origin finishes the tuples before the switch that may still arrive), ``done``
    (the origin's watermark has passed the switch), ``failed`` (a job did not apply its
    range in time or stopped; ``reason`` says which, and the ranges were given back)."""

    __tablename__ = "class_handoffs"
    __table_args__ = (Index("ix_class_handoffs_class_name_state", "class_name", "state"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    class_name: Mapped[str] = mapped_column(String(100))
    origin_job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    target_job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(12), default="planned")
    requested_s: Mapped[float] = mapped_column(Float, doc="Epoch s.")
    switch_s: Mapped[float] = mapped_column(Float, doc="The switch instant, epoch s.")
    deadline_s: Mapped[float] = mapped_column(
        Float, doc="Both jobs must have applied their ranges by then, epoch s."
    )
    done_after_s: Mapped[float] = mapped_column(
        Float, doc="The origin has finished once its watermark passes the switch, epoch s."
    )
    origin_version: Mapped[int] = mapped_column(Integer, doc="The origin's config version.")
    target_version: Mapped[int] = mapped_column(Integer, doc="The target's config version.")
    before: Mapped[dict[str, Any]] = mapped_column(
        JSON, doc="Each job's range of the class before (null: all), to give back on failure."
    )
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    created_by: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    ended_at_s: Mapped[float | None] = mapped_column(Float, default=None, doc="Epoch s.")

"""The coordinator's state per master, and its log of reallocations."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base


class CoordinatorState(Base):
    """One coordinated master's coordinator between rounds. A round locks its row (``FOR
    UPDATE``), so two rounds on one master never interleave."""

    __tablename__ = "cluster_coordinators"

    master: Mapped[str] = mapped_column(String(200), primary_key=True)
    allocation: Mapped[dict[str, int]] = mapped_column(
        JSON, default=dict, doc="Executors each job may hold, by job id (as text)."
    )
    last_change_s: Mapped[float | None] = mapped_column(
        Float, default=None, doc="When a shortage last changed it, epoch s (None: never)."
    )
    short_since_s: Mapped[float | None] = mapped_column(
        Float, default=None, doc="Since when a job has been short, epoch s (None: none is)."
    )
    round_at_s: Mapped[float | None] = mapped_column(
        Float, default=None, doc="When the last round ran, epoch s."
    )
    problem: Mapped[str | None] = mapped_column(
        Text, default=None, doc="Why the last round could not allocate (None: it did)."
    )


class ReallocationRow(Base):
    """One change of a master's allocation (``spark_runner.core.coordinator.Reallocation``),
    with the reports it was made from."""

    __tablename__ = "cluster_reallocations"
    __table_args__ = (Index("ix_cluster_reallocations_master_at_s", "master", "at_s"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    master: Mapped[str] = mapped_column(String(200))
    at_s: Mapped[float] = mapped_column(Float, doc="Epoch s.")
    executors: Mapped[int] = mapped_column(Integer, doc="The cluster's executors.")
    trigger_job_id: Mapped[int | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="SET NULL"),
        default=None,
        doc="The short job (None: the set of jobs changed).",
    )
    usage: Mapped[float] = mapped_column(Float)
    held_s: Mapped[float] = mapped_column(Float)
    before: Mapped[dict[str, int]] = mapped_column(JSON)
    after: Mapped[dict[str, int]] = mapped_column(JSON)
    reports: Mapped[dict[str, Any]] = mapped_column(
        JSON, doc="Each job's classes as reported: {job: {class: [priority, load]}}."
    )

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class ConfigVersion(Base):
    """One version of a job's live configuration: who changed what, and when it applied.

    Version 0 is the launch configuration. ``changes`` lists ``{"path", "old", "new"}``.
    """

    __tablename__ = "job_config_versions"
    __table_args__ = (UniqueConstraint("job_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    changes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_by: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class Prediction(Base):
    """A preview's prediction of a change, kept to be checked against what the change then
    did once it is applied (``backend.tuning.predictions``).

    ``changes`` is the change as ``{"path", "old", "new"}`` (as a version lists it) on
    ``base_version``; ``kind`` the settings it changes (class names left out);
    ``predicted`` per class ``{"mean_violation_s", "loss_fraction"}`` over ``window_s``.
    ``version`` is the version a change identical to it was stored as; ``errors`` per
    class ``{"violation_s", "loss"}`` (predicted − measured over the first ``window_s``
    the job ran that version), set when that is known (``checked_at``).
    """

    __tablename__ = "whatif_predictions"

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    base_version: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(200), index=True)
    changes: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    window_s: Mapped[float] = mapped_column(Float)
    predicted: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    version: Mapped[int | None] = mapped_column(Integer, default=None)
    errors: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

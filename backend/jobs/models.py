from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow
from backend.jobs.states import TERMINAL, JobStatus, check_move


class Job(Base):
    """One launch of the streaming job, with its frozen configuration snapshot."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.PENDING.value, index=True)
    spark_master: Mapped[str] = mapped_column(String(200))
    config: Mapped[dict[str, Any]] = mapped_column(JSON, doc="The JobSnapshot given to the job.")
    launch_request: Mapped[dict[str, Any] | None] = mapped_column(
        JSON,
        default=None,
        doc="The accepted POST /jobs body (JobCreate): the choices the snapshot does not "
        "keep, e.g. the stored scenario's id. None for jobs older than this column.",
    )
    idempotency_key: Mapped[str | None] = mapped_column(String(200), unique=True, default=None)
    restart_of: Mapped[int | None] = mapped_column(
        ForeignKey("jobs.id", ondelete="SET NULL"), default=None
    )
    created_by: Mapped[str | None] = mapped_column(String(100), default=None)
    ingest_token_digest: Mapped[str | None] = mapped_column(
        String(64),
        default=None,
        doc="SHA-256 of the token the running process sends; None before the launch and "
        "once the job is stopped or failed (the token is revoked).",
    )
    pid: Mapped[int | None] = mapped_column(Integer, default=None)
    log_path: Mapped[str | None] = mapped_column(String(500), default=None)
    exit_code: Mapped[int | None] = mapped_column(Integer, default=None)
    failure_reason: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    stop_requested_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

    @property
    def state(self) -> JobStatus:
        return JobStatus(self.status)

    def launch_targets(self) -> dict[str, float]:
        """Each class's delay target in the snapshot's configuration (version 0), by name;
        empty while the snapshot is not written yet."""
        classes = (self.config.get("control") or {}).get("classes", {})
        return {name: float(c["delay_target_s"]) for name, c in classes.items()}

    def move_to(self, target: JobStatus) -> None:
        """The one place a job changes status (``InvalidTransition``, a 409, if the state
        machine forbids it). Entering a terminal status ends the run: its stop time is
        recorded and its ingest token revoked, so nothing can post samples or poll
        configuration as this run any more."""
        check_move(self.state, target)
        self.status = target.value
        if target in TERMINAL:
            self.stopped_at = utcnow()
            self.ingest_token_digest = None

"""Reading and writing jobs: what the jobs' own use cases need, and what the domains
built on jobs (metrics, history, actions, live tuning) read of them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select

from backend.jobs.models import Job
from backend.jobs.states import TERMINAL, JobStatus
from backend.repository import Repository


class JobRepository(Repository[Job]):
    model = Job
    noun = "job"

    def list_all(self, limit: int = 200) -> Sequence[Job]:
        return self.session.scalars(select(Job).order_by(Job.id.desc()).limit(limit)).all()

    def live_ids(self) -> list[int]:
        """The jobs not yet stopped or failed, oldest first."""
        statuses = [s.value for s in JobStatus if s not in TERMINAL]
        stmt = select(Job.id).where(Job.status.in_(statuses)).order_by(Job.id)
        return list(self.session.scalars(stmt).all())

    def running_on(self, master: str) -> Sequence[Job]:
        """The running jobs on ``master``, oldest first."""
        stmt = select(Job).where(Job.status == JobStatus.RUNNING.value, Job.spark_master == master)
        return self.session.scalars(stmt.order_by(Job.id)).all()

    def pending_created_before(self, moment: datetime) -> list[int]:
        stmt = select(Job.id).where(Job.status == "pending", Job.created_at < moment)
        return list(self.session.scalars(stmt.order_by(Job.id)).all())

    def by_idempotency_key(self, key: str) -> Job | None:
        return self.session.scalars(select(Job).where(Job.idempotency_key == key)).first()

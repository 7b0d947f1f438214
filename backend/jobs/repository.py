from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.jobs.models import Job


class JobRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self, limit: int = 200) -> Sequence[Job]:
        return self.session.scalars(select(Job).order_by(Job.id.desc()).limit(limit)).all()

    def get(self, job_id: int, *, for_update: bool = False) -> Job | None:
        if for_update:
            stmt = select(Job).where(Job.id == job_id).with_for_update()
            return self.session.scalars(stmt).first()
        return self.session.get(Job, job_id)

    def ids_with_status(self, statuses: Sequence[str]) -> list[int]:
        stmt = select(Job.id).where(Job.status.in_(statuses)).order_by(Job.id)
        return list(self.session.scalars(stmt).all())

    def pending_created_before(self, moment: datetime) -> list[int]:
        stmt = select(Job.id).where(Job.status == "pending", Job.created_at < moment)
        return list(self.session.scalars(stmt.order_by(Job.id)).all())

    def by_idempotency_key(self, key: str) -> Job | None:
        return self.session.scalars(select(Job).where(Job.idempotency_key == key)).first()

    def add(self, job: Job) -> Job:
        self.session.add(job)
        self.session.flush()
        return job

"""Reading jobs: one by id, or the live ones. What the other services need of jobs
(metrics, history, actions, tuning), apart from the use cases in ``service``, which
itself depends on the class, query and tuning services: reading jobs from here keeps
every import pointing one way."""

from __future__ import annotations

from sqlalchemy.orm import Session

from backend.errors import NotFound
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.jobs.states import TERMINAL, JobStatus


def get_job(session: Session, job_id: int, *, for_update: bool = False) -> Job:
    job = JobRepository(session).get(job_id, for_update=for_update)
    if job is None:
        raise NotFound(f"job {job_id} does not exist")
    return job


def live_job_ids(session: Session) -> list[int]:
    return JobRepository(session).ids_with_status([s.value for s in JobStatus if s not in TERMINAL])

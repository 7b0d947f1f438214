"""Which job process calls a route: ``JobCallerDep`` accepts the per-launch ingest token of
the job in the path (a job posts its samples and actions and polls its configuration
with it); any other token is 401."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from backend.api.auth import TokenDep
from backend.api.deps import IdPath, ReadSessionsDep
from backend.errors import Unauthorized
from backend.jobs.repository import JobRepository
from backend.users import security


@dataclass(frozen=True)
class JobCaller:
    """A job process that proved who it is with its per-launch token."""

    job_id: int


def job_caller(read_sessions: ReadSessionsDep, job_id: IdPath, token: TokenDep) -> JobCaller:
    """Checked in a short session of its own, so a long poll holds no transaction open."""
    with read_sessions() as session:
        job = JobRepository(session).get(job_id)
        valid = job is not None and security.same_digest(token, job.ingest_token_digest)
    if not valid:
        raise Unauthorized(f"the token is not the ingest token of job {job_id}")
    return JobCaller(job_id)


JobCallerDep = Annotated[JobCaller, Depends(job_caller)]

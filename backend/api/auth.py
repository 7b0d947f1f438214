"""Who is calling: bearer tokens for people, per-job tokens for jobs.

``ViewerDep`` / ``OperatorDep`` / ``AdminDep`` require at least that role; a missing or
bad token is 401, a role too low is 403.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from backend.api.deps import IdPath, ReadSessionsDep, SessionDep
from backend.errors import DomainError
from backend.jobs.repository import JobRepository
from backend.users import security, service
from backend.users.models import Role, User

bearer = HTTPBearer(auto_error=False, description="A token from POST /api/v1/auth/login.")


class Forbidden(DomainError):
    status_code = 403


async def bearer_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise service.Unauthorized("Authorization: Bearer <token> is required")
    return credentials.credentials


TokenDep = Annotated[str, Depends(bearer_token)]


def current_user(request: Request, session: SessionDep, token: TokenDep) -> User:
    user = service.authenticate(session, token)
    if user is None:
        raise service.Unauthorized(service.REVOKED_TOKEN)
    request.state.username = user.username
    return user


def require(role: Role) -> object:
    async def _check(user: Annotated[User, Depends(current_user)]) -> User:
        if not Role(user.role).allows(role):
            raise Forbidden(f"role={user.role!r} may not do this: it needs {role.value} or higher")
        return user

    return Depends(_check)


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
        raise service.Unauthorized(f"the token is not the ingest token of job {job_id}")
    return JobCaller(job_id)


JobCallerDep = Annotated[JobCaller, Depends(job_caller)]
ViewerDep = Annotated[User, require(Role.VIEWER)]
OperatorDep = Annotated[User, require(Role.OPERATOR)]
AdminDep = Annotated[User, require(Role.ADMIN)]

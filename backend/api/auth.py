"""The bearer token a request carries: the credential of a person (``backend.users.access``)
and of a job process (``backend.jobs.access``) alike; a missing one is 401."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from backend.errors import Unauthorized

bearer = HTTPBearer(auto_error=False, description="A token from POST /api/v1/auth/login.")


async def bearer_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Unauthorized("Authorization: Bearer <token> is required")
    return credentials.credentials


TokenDep = Annotated[str, Depends(bearer_token)]

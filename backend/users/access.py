"""Which people may call a route: ``ViewerDep`` / ``OperatorDep`` / ``AdminDep`` require
at least that role; a missing or bad token is 401, a role too low is 403."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from backend.api.auth import TokenDep
from backend.api.deps import SessionDep
from backend.errors import Forbidden, Unauthorized
from backend.users import service
from backend.users.models import Role, User


def current_user(request: Request, session: SessionDep, token: TokenDep) -> User:
    user = service.authenticate(session, token)
    if user is None:
        raise Unauthorized(service.REVOKED_TOKEN)
    request.state.username = user.username
    return user


def require(role: Role) -> object:
    async def _check(user: Annotated[User, Depends(current_user)]) -> User:
        if not Role(user.role).allows(role):
            raise Forbidden(f"role={user.role!r} may not do this: it needs {role.value} or higher")
        return user

    return Depends(_check)


ViewerDep = Annotated[User, require(Role.VIEWER)]
OperatorDep = Annotated[User, require(Role.OPERATOR)]
AdminDep = Annotated[User, require(Role.ADMIN)]

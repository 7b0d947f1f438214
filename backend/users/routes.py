from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Request, status

from backend.api.auth import TokenDep
from backend.api.deps import (
    IdPath,
    ReadSessionsDep,
    SessionDep,
    SettingsDep,
    WriteGateDep,
    from_app_state,
)
from backend.users import service
from backend.users.access import AdminDep, ViewerDep
from backend.users.login import Logins
from backend.users.repository import UserRepository
from backend.users.schemas import LoginRequest, TokenResponse, UserCreate, UserRead, UserUpdate

auth_router = APIRouter(prefix="/auth", tags=["auth"])
users_router = APIRouter(prefix="/users", tags=["users"])

LOGIN_PATH = "/auth/login"
"""Under the API prefix; the SQLite write gate lets it through (it gates its own write)."""

LoginsDep = Annotated[Logins, from_app_state("logins")]


@auth_router.post(
    "/login",
    response_model=TokenResponse,
    responses={
        401: {"description": "Unknown username or wrong password (the same answer)."},
        429: {"description": "Too many failed logins; the Retry-After header gives seconds."},
    },
)
async def login(
    request: Request,
    body: LoginRequest,
    logins: LoginsDep,
    read_sessions: ReadSessionsDep,
    session: SessionDep,
    write_gate: WriteGateDep,
    settings: SettingsDep,
) -> TokenResponse:
    return await logins.login(
        username=body.username,
        password=body.password,
        client=request.client.host if request.client else "unknown",
        read_sessions=read_sessions,
        session=session,
        write_gate=write_gate,
        ttl=timedelta(seconds=settings.token_ttl_s),
    )


@auth_router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(session: SessionDep, token: TokenDep, _user: ViewerDep) -> None:
    service.logout(session, token)


@auth_router.get("/me", response_model=UserRead)
def me(user: ViewerDep) -> UserRead:
    return UserRead.model_validate(user)


@users_router.get("", response_model=list[UserRead])
def list_users(session: SessionDep, _admin: AdminDep) -> list[UserRead]:
    return [UserRead.model_validate(u) for u in UserRepository(session).list_all()]


@users_router.post(
    "",
    response_model=UserRead,
    status_code=status.HTTP_201_CREATED,
    responses={409: {"description": "The username is taken."}},
)
def create_user(session: SessionDep, _admin: AdminDep, body: UserCreate) -> UserRead:
    return UserRead.model_validate(service.create_user(session, body))


@users_router.patch(
    "/{user_id}",
    response_model=UserRead,
    responses={
        409: {"description": "The change would leave no active admin."},
        404: {"description": "No such user."},
    },
)
def update_user(
    session: SessionDep, _admin: AdminDep, user_id: IdPath, body: UserUpdate
) -> UserRead:
    return UserRead.model_validate(service.update_user(session, user_id, body))

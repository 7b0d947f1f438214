from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, status

from backend.api.auth import AdminDep, TokenDep, ViewerDep
from backend.api.deps import IdPath, SessionDep, SettingsDep
from backend.users import service
from backend.users.schemas import LoginRequest, TokenResponse, UserCreate, UserRead, UserUpdate

auth_router = APIRouter(prefix="/auth", tags=["auth"])
users_router = APIRouter(prefix="/users", tags=["users"])


@auth_router.post("/login", response_model=TokenResponse, responses={401: {}})
def login(session: SessionDep, settings: SettingsDep, body: LoginRequest) -> TokenResponse:
    ttl = timedelta(seconds=settings.token_ttl_s)
    return service.login(session, body.username, body.password, ttl)


@auth_router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(session: SessionDep, token: TokenDep, _user: ViewerDep) -> None:
    service.logout(session, token)


@auth_router.get("/me", response_model=UserRead)
def me(user: ViewerDep) -> UserRead:
    return UserRead.model_validate(user)


@users_router.get("", response_model=list[UserRead])
def list_users(session: SessionDep, _admin: AdminDep) -> list[UserRead]:
    return [UserRead.model_validate(u) for u in service.list_users(session)]


@users_router.post("", response_model=UserRead, status_code=status.HTTP_201_CREATED)
def create_user(session: SessionDep, _admin: AdminDep, body: UserCreate) -> UserRead:
    return UserRead.model_validate(service.create_user(session, body))


@users_router.patch("/{user_id}", response_model=UserRead)
def update_user(
    session: SessionDep, _admin: AdminDep, user_id: IdPath, body: UserUpdate
) -> UserRead:
    return UserRead.model_validate(service.update_user(session, user_id, body))

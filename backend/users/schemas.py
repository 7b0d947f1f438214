from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from backend.api.schemas import request_config
from backend.users.models import Role
from backend.users.passwords import MIN_LENGTH, check_not_common

USERNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$"


class LoginRequest(BaseModel):
    model_config = request_config({"username": "ops", "password": "…"})

    username: str = Field(min_length=1, max_length=100)
    password: str = Field(min_length=1, max_length=1000)


class TokenResponse(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_at: datetime | None
    username: str
    role: Role


NewPassword = Annotated[
    str,
    Field(
        min_length=MIN_LENGTH,
        max_length=1000,
        description=f"At least {MIN_LENGTH} characters, not one of the most common passwords.",
    ),
    AfterValidator(check_not_common),
]


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(min_length=1, max_length=100, pattern=USERNAME_PATTERN)
    password: NewPassword
    role: Role = Role.VIEWER


class UserUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    password: NewPassword | None = None
    role: Role | None = None
    active: bool | None = None


class UserRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Role
    active: bool
    created_at: datetime

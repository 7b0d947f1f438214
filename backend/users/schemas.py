from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from backend.users.models import Role

USERNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$"


class LoginRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"username": "ops", "password": "…"}]}
    )

    username: str = Field(min_length=1, max_length=100)
    password: str = Field(min_length=1, max_length=1000)


class TokenResponse(BaseModel):
    access_token: str
    token_type: str = "bearer"
    expires_at: datetime | None
    username: str
    role: Role


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str = Field(min_length=1, max_length=100, pattern=USERNAME_PATTERN)
    password: str = Field(min_length=8, max_length=1000, description="At least 8 characters.")
    role: Role = Role.VIEWER


class UserUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    password: str | None = Field(default=None, min_length=8, max_length=1000)
    role: Role | None = None
    active: bool | None = None


class UserRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    username: str
    role: Role
    active: bool
    created_at: datetime

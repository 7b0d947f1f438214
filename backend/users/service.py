"""Accounts and sessions. Passwords and tokens never appear in a log line or an error."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.orm import Session

from backend.db import utcnow
from backend.errors import Conflict, DomainError, NotFound
from backend.users import security
from backend.users.models import ApiToken, Role, User
from backend.users.repository import UserRepository
from backend.users.schemas import TokenResponse, UserCreate, UserUpdate


class Unauthorized(DomainError):
    status_code = 401


def create_user(session: Session, data: UserCreate) -> User:
    repo = UserRepository(session)
    if repo.by_username(data.username) is not None:
        raise Conflict(f"username={data.username!r} is taken: usernames must be unique")
    return repo.add(
        User(
            username=data.username,
            password_hash=security.hash_password(data.password),
            role=data.role.value,
            active=True,
        )
    )


def list_users(session: Session) -> Sequence[User]:
    return UserRepository(session).list_all()


def get_user(session: Session, user_id: int) -> User:
    user = UserRepository(session).get(user_id)
    if user is None:
        raise NotFound(f"user {user_id} does not exist")
    return user


def update_user(session: Session, user_id: int, data: UserUpdate) -> User:
    user = get_user(session, user_id)
    if data.password is not None:
        user.password_hash = security.hash_password(data.password)
    if data.role is not None:
        user.role = data.role.value
    if data.active is not None:
        user.active = data.active
    session.flush()
    return user


def login(session: Session, username: str, password: str, ttl: timedelta) -> TokenResponse:
    user = UserRepository(session).by_username(username)
    # Same answer for an unknown user and a wrong password: no account enumeration.
    if (
        user is None
        or not user.active
        or not security.verify_password(password, user.password_hash)
    ):
        raise Unauthorized("username or password is wrong")
    token = security.new_token()
    expires_at = utcnow() + ttl
    UserRepository(session).add_token(
        ApiToken(user_id=user.id, digest=security.token_digest(token), expires_at=expires_at)
    )
    return TokenResponse(
        access_token=token, expires_at=expires_at, username=user.username, role=Role(user.role)
    )


def logout(session: Session, token: str) -> None:
    UserRepository(session).revoke(security.token_digest(token))


def authenticate(session: Session, token: str) -> User | None:
    return UserRepository(session).user_for_token(security.token_digest(token), utcnow())


def ensure_admin(session: Session, username: str, password: str) -> tuple[User, bool]:
    """Create ``username`` as an admin unless it exists. Returns (user, created)."""
    existing = UserRepository(session).by_username(username)
    if existing is not None:
        return existing, False
    return create_user(
        session, UserCreate(username=username, password=password, role=Role.ADMIN)
    ), True


def has_users(session: Session) -> bool:
    return UserRepository(session).count() > 0

"""Accounts and sessions. Passwords and tokens never appear in a log line or an error."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.bell import TOKENS_KEY, bell
from backend.db import after_commit, utcnow
from backend.errors import Conflict, Unauthorized
from backend.users import security
from backend.users.models import ApiToken, Role, User
from backend.users.repository import UserRepository
from backend.users.schemas import TokenResponse, UserCreate, UserUpdate

REVOKED_TOKEN = "the token is unknown, expired or revoked"


def create_user(session: Session, data: UserCreate) -> User:
    repo = UserRepository(session)
    _check_free(repo, data.username)
    user = User(
        username=data.username,
        password_hash=security.hash_password(data.password),
        role=data.role.value,
        active=True,
    )
    try:
        with session.begin_nested():
            return repo.add(user)
    except IntegrityError:
        _check_free(repo, data.username)  # a concurrent creation took it
        raise


def _check_free(repo: UserRepository, username: str) -> None:
    taken = repo.by_username(username)
    if taken is None:
        return
    other = "" if taken.username == username else f" (as {taken.username!r})"
    raise Conflict(
        f"username={username!r} is taken{other}: usernames must be unique regardless of case"
    )


def update_user(session: Session, user_id: int, data: UserUpdate) -> User:
    """Change a user. A new password or a deactivation revokes every token the user holds
    (so a reactivation does not revive them); the last active admin keeps its role."""
    repo = UserRepository(session)
    user = repo.require(user_id)
    _keep_an_admin(repo, user, data)
    if data.password is not None:
        user.password_hash = security.hash_password(data.password)
    if data.role is not None:
        user.role = data.role.value
    if data.active is not None:
        user.active = data.active
    if data.password is not None or data.active is False:
        repo.revoke_all(user.id)
        _revoked(session)
    session.flush()
    return user


def _revoked(session: Session) -> None:
    """Once the revocation is committed, this process's live streams check their tokens
    (other processes' streams at their next periodic check)."""
    after_commit(session, lambda: bell.ring(TOKENS_KEY))


def _keep_an_admin(repo: UserRepository, user: User, data: UserUpdate) -> None:
    """Refuse a change that would leave no active admin (nobody could manage users)."""
    if not (user.active and user.role == Role.ADMIN.value):
        return
    if data.role is not None and data.role is not Role.ADMIN:
        change = f"role={data.role.value!r}"
    elif data.active is False:
        change = "active=false"
    else:
        return
    # Locks the active admins' rows (PostgreSQL), so two concurrent demotions of the last
    # two admins cannot both pass; SQLite serializes writers anyway.
    if repo.active_admin_ids(for_update=True) == [user.id]:
        raise Conflict(
            f"{change} is refused: user {user.username!r} is the last active admin, and "
            "without one nobody can manage users; make another user an admin first"
        )


@dataclass(frozen=True)
class Credentials:
    """What a login checks a password against, read before any hashing."""

    user_id: int
    password_hash: str
    active: bool


def credentials(session: Session, username: str) -> Credentials | None:
    user = UserRepository(session).by_username(username)
    if user is None:
        return None
    return Credentials(user.id, user.password_hash, user.active)


def issue_token(session: Session, checked: Credentials, ttl: timedelta) -> TokenResponse:
    """A new login token for a user whose password matched ``checked``. The user is read
    again: a deactivation or a password change since the check wins."""
    user = UserRepository(session).get(checked.user_id)
    if user is None or not user.active or user.password_hash != checked.password_hash:
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
    _revoked(session)


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

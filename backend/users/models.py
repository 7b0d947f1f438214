from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, ForeignKey, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column

from backend.db import Base, UTCDateTime, utcnow


class Role(StrEnum):
    """Viewers read; operators also change classes and jobs; admins also manage users."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


_RANKS = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold_username(username: str) -> str:
    """``username`` as usernames are compared: A-Z as a-z, every other character kept.

    Usernames are ASCII (``USERNAME_PATTERN``), and this is what SQL ``lower()`` does to
    ASCII on SQLite and PostgreSQL alike; Python's ``str.lower`` would also fold other
    characters into ASCII ones (the Kelvin sign into ``k``), which the database does not.
    """
    return username.translate(_ASCII_LOWER)


class User(Base):
    """An account. Its username is unique regardless of case (``ADMIN`` and ``admin``
    would be one person to a reader of the audit trail); logins match it the same way."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


# The rule itself, also against concurrent creations (migration 0011 adds it).
Index("uq_users_lower_username", func.lower(User.username), unique=True)


class ApiToken(Base):
    """A bearer token; only its SHA-256 digest is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(100), default="login")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)

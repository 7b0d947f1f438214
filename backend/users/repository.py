from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from backend.users.models import ApiToken, Role, User, fold_username


class UserRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self) -> Sequence[User]:
        return self.session.scalars(select(User).order_by(User.id)).all()

    def count(self) -> int:
        return int(self.session.scalar(select(func.count()).select_from(User)) or 0)

    def get(self, user_id: int) -> User | None:
        return self.session.get(User, user_id)

    def by_username(self, username: str) -> User | None:
        """The user whose name is ``username`` regardless of case (they are unique so)."""
        folded = fold_username(username)
        stmt = select(User).where(func.lower(User.username) == folded)
        return self.session.scalars(stmt).first()

    def add(self, user: User) -> User:
        self.session.add(user)
        self.session.flush()
        return user

    def add_token(self, token: ApiToken) -> ApiToken:
        self.session.add(token)
        self.session.flush()
        return token

    def user_for_token(self, digest: str, now: datetime) -> User | None:
        stmt = (
            select(User)
            .join(ApiToken, ApiToken.user_id == User.id)
            .where(ApiToken.digest == digest, User.active.is_(True))
            .where((ApiToken.expires_at.is_(None)) | (ApiToken.expires_at > now))
        )
        return self.session.scalars(stmt).first()

    def revoke(self, digest: str) -> None:
        self.session.execute(delete(ApiToken).where(ApiToken.digest == digest))

    def revoke_all(self, user_id: int) -> None:
        self.session.execute(delete(ApiToken).where(ApiToken.user_id == user_id))

    def active_admin_ids(self, *, for_update: bool = False) -> list[int]:
        stmt = (
            select(User.id)
            .where(User.role == Role.ADMIN.value, User.active.is_(True))
            .order_by(User.id)
        )
        if for_update:
            stmt = stmt.with_for_update()
        return list(self.session.scalars(stmt).all())

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, select

from backend.repository import Repository
from backend.users.models import ApiToken, Role, User, fold_username


class UserRepository(Repository[User]):
    model = User
    noun = "user"

    def count(self) -> int:
        return int(self.session.scalar(select(func.count()).select_from(User)) or 0)

    def by_username(self, username: str) -> User | None:
        """The user whose name is ``username`` regardless of case (they are unique so)."""
        folded = fold_username(username)
        stmt = select(User).where(func.lower(User.username) == folded)
        return self.session.scalars(stmt).first()

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

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from backend.tuning.models import ConfigVersion


class ConfigVersionRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def for_job(self, job_id: int) -> Sequence[ConfigVersion]:
        stmt = (
            select(ConfigVersion)
            .where(ConfigVersion.job_id == job_id)
            .order_by(ConfigVersion.version)
        )
        return self.session.scalars(stmt).all()

    def latest(self, job_id: int) -> ConfigVersion | None:
        stmt = (
            select(ConfigVersion)
            .where(ConfigVersion.job_id == job_id)
            .order_by(ConfigVersion.version.desc())
            .limit(1)
        )
        return self.session.scalars(stmt).first()

    def at(self, job_id: int, version: int) -> ConfigVersion | None:
        stmt = select(ConfigVersion).where(
            ConfigVersion.job_id == job_id, ConfigVersion.version == version
        )
        return self.session.scalars(stmt).first()

    def add(self, version: ConfigVersion) -> ConfigVersion:
        self.session.add(version)
        self.session.flush()
        return version

    def mark_applied(self, job_id: int, up_to: int, when: datetime) -> int:
        """Mark every unapplied version ≤ ``up_to`` applied (later ones supersede earlier)."""
        stmt = (
            update(ConfigVersion)
            .where(
                ConfigVersion.job_id == job_id,
                ConfigVersion.version <= up_to,
                ConfigVersion.applied_at.is_(None),
            )
            .values(applied_at=when)
        )
        return int(self.session.execute(stmt).rowcount or 0)  # type: ignore[attr-defined]

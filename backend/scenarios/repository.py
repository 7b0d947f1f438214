from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.scenarios.models import StoredScenario


class ScenarioRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def list_all(self) -> Sequence[StoredScenario]:
        return self.session.scalars(select(StoredScenario).order_by(StoredScenario.id)).all()

    def get(self, scenario_id: int) -> StoredScenario | None:
        return self.session.get(StoredScenario, scenario_id)

    def by_name(self, name: str) -> StoredScenario | None:
        stmt = select(StoredScenario).where(StoredScenario.name == name)
        return self.session.scalars(stmt).first()

    def add(self, scenario: StoredScenario) -> StoredScenario:
        self.session.add(scenario)
        self.session.flush()
        return scenario

    def delete(self, scenario: StoredScenario) -> None:
        self.session.delete(scenario)
        self.session.flush()

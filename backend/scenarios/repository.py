from __future__ import annotations

from backend.repository import NamedRepository
from backend.scenarios.models import StoredScenario


class ScenarioRepository(NamedRepository[StoredScenario]):
    model = StoredScenario
    noun = "scenario"

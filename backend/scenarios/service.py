"""Scenario use cases. Validation is the scenario package's own (the same rules the
simulator and the Spark runner apply), so what is stored always runs."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.scenarios.models import StoredScenario
from backend.scenarios.repository import ScenarioRepository
from spark_runner.scenario.loader import parse_scenario_document


def validate(text: str) -> dict[str, Any]:
    """The parsed document of a valid scenario; ``ScenarioError`` lists every issue.

    Its trace files must lie in the trace folder (``spark_runner.scenario.models.TRACE_DIR``):
    no ``base_dir`` is given, so a path cannot reach any other file of this host."""
    _scenario, document = parse_scenario_document(text, source="yaml")
    return document


def store(
    session: Session, text: str, created_by: str | None, replace_id: int | None = None
) -> StoredScenario:
    document = validate(text)
    repo = ScenarioRepository(session)
    name = str(document["name"])
    other = repo.by_name(name)
    if other is not None and other.id != replace_id:
        raise Conflict(f"name={name!r} is taken by scenario {other.id}: names must be unique")
    if replace_id is not None:
        scenario = repo.require(replace_id)
    else:
        scenario = StoredScenario(created_by=created_by)
    scenario.name = name
    scenario.description = str(document.get("description", ""))
    scenario.yaml_text = text
    scenario.document = document
    if replace_id is None:
        repo.add(scenario)
    session.flush()
    return scenario


def delete(session: Session, scenario_id: int) -> None:
    repo = ScenarioRepository(session)
    repo.delete(repo.require(scenario_id))

"""Scenario use cases. Validation is the scenario package's own (the same rules the
simulator and the Spark runner apply), so what is stored always runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.orm import Session

from backend.errors import Conflict, NotFound
from backend.scenarios.models import StoredScenario
from backend.scenarios.repository import ScenarioRepository
from spark_runner.scenario.loader import parse_scenario

# Trace files named in a stored scenario resolve against the shipped scenarios folder.
TRACE_BASE = Path(__file__).resolve().parents[2] / "scenarios"


def validate(text: str) -> dict[str, Any]:
    """The parsed document of a valid scenario; ``ScenarioError`` lists every issue."""
    parse_scenario(text, base_dir=TRACE_BASE, source="yaml")
    document: dict[str, Any] = yaml.safe_load(text)
    return document


def list_scenarios(session: Session) -> Sequence[StoredScenario]:
    return ScenarioRepository(session).list_all()


def get_scenario(session: Session, scenario_id: int) -> StoredScenario:
    scenario = ScenarioRepository(session).get(scenario_id)
    if scenario is None:
        raise NotFound(f"scenario {scenario_id} does not exist")
    return scenario


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
        scenario = get_scenario(session, replace_id)
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
    ScenarioRepository(session).delete(get_scenario(session, scenario_id))

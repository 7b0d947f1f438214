"""The ``build`` fixture: a scenario from a document and overrides (see simkit.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from spark_runner.scenario import Scenario
from spark_runner.scenario.loader import apply_override, scenario_from_dict
from tests.sim.simkit import Build


@pytest.fixture
def build() -> Build:
    def _build(doc: dict[str, Any], *overrides: str) -> Scenario:
        data = copy.deepcopy(doc)
        for o in overrides:
            apply_override(data, o)
        return scenario_from_dict(data)

    return _build

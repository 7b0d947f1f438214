"""Scenario documents for the column tests: one class reading stream ``s``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from spark_runner.scenario.errors import ScenarioError
from spark_runner.scenario.loader import scenario_from_dict


def doc(
    operators: Sequence[Mapping[str, Any]],
    segments: Sequence[Mapping[str, Any]] | None = None,
    stream: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One class reading stream ``s`` (with ``stream``'s fields) through ``operators``."""
    return {
        "version": 1,
        "name": "cols",
        "duration_s": 10,
        "control": {"period_s": 1},
        "streams": [
            {"name": "s", "arrival": {"kind": "constant", "rate_per_s": 10}, **(stream or {})},
            {"name": "t", "arrival": {"kind": "constant", "rate_per_s": 10}},
        ],
        "shared_segments": segments or [],
        "classes": [
            {
                "name": "c",
                "priority": 1,
                "delay_target_s": 1,
                "queries": [{"name": "q", "source": "s", "operators": operators}],
            }
        ],
    }


def issues_of(document: Mapping[str, Any]) -> list[str]:
    """The issues (``path: message``) that make ``document`` invalid."""
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(dict(document))
    return [f"{i.path}: {i.message}" for i in caught.value.issues]

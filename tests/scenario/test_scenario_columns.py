"""Column tracking: an operator may only read columns that exist upstream."""

from __future__ import annotations

import pytest

from spark_runner.scenario.errors import ScenarioError
from spark_runner.scenario.loader import scenario_from_dict


def _doc(operators: list[dict[str, object]], segments: list[dict[str, object]] | None = None):
    return {
        "version": 1,
        "name": "cols",
        "duration_s": 10,
        "control": {"period_s": 1},
        "streams": [
            {"name": "s", "arrival": {"kind": "constant", "rate_per_s": 10}},
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


def _issues(doc: dict[str, object]) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        scenario_from_dict(doc)
    return [f"{i.path}: {i.message}" for i in caught.value.issues]


def test_valid_column_flow_passes() -> None:
    scenario_from_dict(
        _doc(
            [
                {
                    "kind": "map",
                    "expression": "value * 2",
                    "output": "double",
                    "cpu_cost_per_tuple_s": 0,
                },
                {"kind": "project", "columns": ["key", "double"]},
                {
                    "kind": "window_aggregate",
                    "window": {"size_s": 5},
                    "function": "sum",
                    "column": "double",
                },
            ]
        )
    )


def test_join_on_a_missing_field_names_the_path() -> None:
    issues = _issues(
        _doc(
            [
                {"kind": "project", "columns": ["value"]},
                {
                    "kind": "window_join",
                    "right": "t",
                    "window": {"size_s": 1},
                    "on_column": "key",
                    "sim": {"selectivity": 1},
                },
            ]
        )
    )
    assert any(
        i.startswith("classes[0].queries[0].operators[1].on_column: join column 'key'")
        for i in issues
    ), issues


def test_projected_away_column_cannot_be_filtered_or_aggregated() -> None:
    issues = _issues(
        _doc(
            [
                {"kind": "project", "columns": ["key"]},
                {"kind": "filter", "predicate": "value < 0.5"},
                {
                    "kind": "window_aggregate",
                    "window": {"size_s": 5},
                    "function": "avg",
                    "column": "value",
                    "group_by": ["nope"],
                },
            ]
        )
    )
    assert any(
        i.startswith("classes[0].queries[0].operators[1].predicate: column 'value'") for i in issues
    ), issues
    assert any(".operators[2].group_by: grouping column 'nope'" in i for i in issues), issues
    assert any(".operators[2].column: column 'value'" in i for i in issues), issues


def test_join_against_a_segment_uses_the_segment_columns() -> None:
    segment: dict[str, object] = {
        "name": "seg",
        "source": "t",
        "operators": [{"kind": "project", "columns": ["value"]}],
    }
    issues = _issues(
        _doc(
            [
                {
                    "kind": "window_join",
                    "right": "seg",
                    "window": {"size_s": 1},
                    "sim": {"selectivity": 1},
                }
            ],
            [segment],
        )
    )
    assert any("join column (in 'seg') 'key'" in i for i in issues), issues

"""Column tracking: an operator may only read columns that exist upstream."""

from __future__ import annotations

from spark_runner.scenario.loader import scenario_from_dict
from tests.scenario.column_docs import doc, issues_of


def test_valid_column_flow_passes() -> None:
    scenario_from_dict(
        doc(
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
    issues = issues_of(
        doc(
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
    issues = issues_of(
        doc(
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
    issues = issues_of(
        doc(
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

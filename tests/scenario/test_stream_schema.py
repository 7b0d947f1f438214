"""A stream's own columns: what the format accepts, what it refuses, and the share of
tuples a filter keeps under each generator (the simulator's selectivity)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_runner.scenario.columns import StreamColumn, join_columns
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import SqlOp, right_input
from spark_runner.scenario.predicates import parse_predicate
from tests.scenario.column_docs import doc, issues_of

TRADES = [
    {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 100, "s": 1.1}},
    {"name": "amount", "type": "double", "generator": {"kind": "normal", "mean": 80, "sd": 30}},
    {
        "name": "country",
        "type": "string",
        "generator": {"kind": "choice", "values": ["FR", "DE"], "weights": [3, 1]},
    },
    {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 2}},
]


def test_operators_read_the_streams_own_columns() -> None:
    scenario = scenario_from_dict(
        doc(
            stream={"columns": TRADES, "event_time": "ts"},
            operators=[
                {"kind": "filter", "predicate": "amount > 100 and account < 10"},
                {
                    "kind": "window_aggregate",
                    "window": {"size_s": 10},
                    "function": "avg",
                    "column": "amount",
                    "group_by": ["account", "country"],
                },
            ],
        )
    )
    assert [c.name for c in scenario.stream("s").column_specs] == [
        "account", "amount", "country", "ts",
    ]  # fmt: skip
    filter_value = [{"kind": "filter", "predicate": "value < 0.5"}]
    issues = issues_of(doc(filter_value, stream={"columns": TRADES}))
    assert any("column 'value' is not a column here" in i for i in issues), issues


def test_a_stream_without_columns_has_key_and_value() -> None:
    scenario = scenario_from_dict(
        doc([{"kind": "project", "columns": ["key"]}], stream={"keys": 7})
    )
    key, value = scenario.stream("s").column_specs
    assert (key.name, key.type, value.name, value.type) == ("key", "long", "value", "double")


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"columns": [{"name": "seq", "type": "long"}]}, "is the engine's own"),
        ({"columns": [{"name": "shed_1", "type": "double"}]}, "is the engine's own"),
        (
            {"columns": [{"name": "x", "type": "string", "generator": {"kind": "normal"}}]},
            "a normal generator fills double columns, not string",
        ),
        (
            {
                "columns": [
                    {"name": "x", "type": "long", "generator": {"kind": "choice", "values": [1.5]}}
                ]
            },
            "choice value 1.5 is not a long",
        ),
        ({"columns": [{"name": "x"}, {"name": "x"}]}, "column 'x' is declared twice"),
        ({"columns": TRADES, "event_time": "amount"}, "must name a timestamp column of stream"),
        (
            {"columns": [{"name": "x", "generator": {"kind": "uniform", "min": 2, "max": 1}}]},
            "min (2) must be below max (1)",
        ),
        (
            {"columns": [{"name": "x", "type": "long", "generator": {"kind": "zipf", "n": 0}}]},
            "n: must be >= 1, got 0",
        ),
        ({"columns": [{"name": "1x"}]}, "must be an SQL identifier"),
    ],
)
def test_a_bad_column_is_refused_with_its_reason(change: dict[str, Any], fragment: str) -> None:
    issues = issues_of(doc([{"kind": "project", "columns": ["seq"]}], stream=change))
    assert any(fragment in i for i in issues), issues


@pytest.mark.parametrize(
    ("column_type", "kind"),
    [("long", "uniform"), ("double", "uniform"), ("string", "zipf"), ("boolean", "choice"),
     ("timestamp", "arrival")],
)  # fmt: skip
def test_a_column_without_a_generator_gets_one_that_fills_its_type(
    column_type: str, kind: str
) -> None:
    """A declared stream (read from Redis or files) names no generators: each column gets
    one of its type (a timestamp column was refused: the default was uniform)."""
    column = StreamColumn.model_validate({"name": "ts", "type": column_type})
    assert column.generator.kind == kind


def _column(generator: dict[str, Any], column_type: str) -> StreamColumn:
    return StreamColumn.model_validate({"name": "x", "type": column_type, "generator": generator})


@pytest.mark.parametrize(
    ("generator", "column_type", "predicate", "expected"),
    [
        ({"kind": "uniform", "min": 0, "max": 9}, "long", "x < 3", 0.3),
        ({"kind": "uniform", "min": 0, "max": 9}, "long", "x >= 3 and x != 5", 0.6),
        ({"kind": "uniform", "min": -1, "max": 1}, "double", "x > 0.5", 0.25),
        ({"kind": "normal", "mean": 10, "sd": 2}, "double", "x < 10", 0.5),
        ({"kind": "normal", "mean": 0, "sd": 1}, "double", "x > -1 and x < 1", 0.682689492),
        ({"kind": "zipf", "n": 2, "s": 1}, "long", "x = 0", 2 / 3),
        ({"kind": "choice", "values": [1, 2, 3], "weights": [1, 1, 2]}, "long", "x > 2", 0.5),
        ({"kind": "choice", "values": ["a"]}, "string", "x < 1", 1.0),  # cannot tell: keeps all
    ],
)
def test_selectivity_follows_the_columns_generator(
    generator: dict[str, Any], column_type: str, predicate: str, expected: float
) -> None:
    column = _column(generator, column_type)
    assert parse_predicate(predicate).selectivity([column]) == pytest.approx(expected)


def _sql(statement: str) -> list[dict[str, Any]]:
    return [{"kind": "sql", "statement": statement}]


def test_a_sql_query_reads_its_source_and_the_streams_own_columns() -> None:
    scenario = scenario_from_dict(
        doc(
            _sql(
                "SELECT window(event_time, '10 seconds') AS w, account, avg(amount) AS mean "
                "FROM s WHERE amount > 50 GROUP BY 1, account"
            ),
            stream={"columns": TRADES, "event_time": "ts"},
        )
    )
    (op,) = scenario.classes[0].queries[0].operators
    assert isinstance(op, SqlOp) and op.stateful and op.right is None
    statement = (
        "SELECT s.key, t.value FROM s JOIN t ON s.key = t.key AND t.event_time "
        "BETWEEN s.event_time - INTERVAL 1 SECONDS AND s.event_time"
    )
    joined = scenario_from_dict(doc(_sql(statement)))
    assert right_input(joined.classes[0].queries[0].operators[0]) == "t"


@pytest.mark.parametrize(
    ("operators", "fragment"),
    [
        (_sql("SELECT key FROM t"), "statement reads FROM 't', but the query's source is 's'"),
        (_sql("SELECT price FROM s"), "statement reads column 'price' at position 8"),
        (_sql("SELECT reflect('a', 'b') FROM s"), "'reflect'"),
        (
            [{"kind": "filter", "predicate": "key < 3"}, *_sql("SELECT key FROM s")],
            "a sql operator must be its query's only operator",
        ),
    ],
)
def test_a_bad_sql_query_is_refused_where_it_is(
    operators: list[dict[str, Any]], fragment: str
) -> None:
    issues = issues_of(doc(operators))
    assert any("classes[0].queries[0].operators[" in i and fragment in i for i in issues), issues


def test_a_sql_query_belongs_to_a_class_not_to_a_shared_segment() -> None:
    segment = {"name": "seg", "source": "s", "operators": _sql("SELECT key FROM s")}
    issues = issues_of(doc([{"kind": "project", "columns": ["key"]}], segments=[segment]))
    assert any("not to a shared segment" in i for i in issues), issues


def test_a_join_renames_the_right_columns_the_left_has_in_any_case() -> None:
    """The engine names a window join's output so (dataflow), and validation predicts it."""
    assert join_columns(["Key", "amount"], ["key", "value"]) == ["key_r", "value"]

"""Probe: names compared case-sensitively, and stored queries that cannot run (issue 42,
finding 7, its SQL and column parts).

Spark resolves names case-insensitively, but the checks compared them case-sensitively:
stream columns ``SEQ`` and ``Point`` (the engine's own), ``a`` beside ``A``, and a join
whose ``amount_r`` (the right side's ``amount`` renamed) met a column ``amount_r`` of the
left were accepted. Stored queries that cannot run were accepted too: ``INTERVAL 1 foo``
and ``GROUP BY 99`` fail only when Spark analyses them, as the job starts. A table
function in FROM was refused as ``reads ''`` at position 1. All are now caught when the
query or stream is stored (no Spark session), with the name and position.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from spark_runner.scenario.columns import StreamColumn
from spark_runner.scenario.sql_query import check_query
from tests.scenario.column_docs import doc, issues_of
from tests.security.test_sql_queries import STREAMS, refusal

REFUSED: list[tuple[str, str]] = [
    ("SELECT amount AS a, amount AS A FROM trades", "two output columns 'A'"),
    (
        "SELECT t.account, q.account FROM trades t JOIN quotes q ON t.account = q.account",
        "two output columns 'account' (at positions 8 and 19",
    ),
    ("SELECT amount FROM trades WHERE ts > ts - INTERVAL 1 foo", "INTERVAL '1' FOO at position 43"),
    ("SELECT amount FROM trades WHERE ts > ts - INTERVAL 1.5 HOURS", "a decimal of seconds"),
    ("SELECT amount FROM trades WHERE ts > ts - INTERVAL '1:2' HOUR TO MINUTE", "a unit of"),
    (
        "SELECT window(ts, '1.5 hours') AS w, count(*) AS n FROM trades GROUP BY 1",
        "a fraction only of seconds",
    ),
    ("SELECT amount FROM trades GROUP BY 99", "GROUP BY 99 at position 36, which names no"),
    ("SELECT amount, count(*) AS n FROM trades GROUP BY 2", "an aggregate"),
    ("SELECT amount, count(*) AS n FROM trades GROUP BY n", "an aggregate"),
    ("SELECT amount FROM explode(array(1))", "table function 'explode' at position 20"),
    (
        "SELECT t.amount FROM trades t JOIN range(10) r ON t.amount = r.id",
        "table function 'range' at position 36",
    ),
    ("SELECT secrets_total FROM secrets", "'secrets' at position 27, which is not a stream"),
    ("SELECT order_total FROM trades ORDER BY amount", "uses ORDER at position 32"),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED)
def test_a_query_that_cannot_run_is_refused_when_stored(statement: str, named: str) -> None:
    assert named in refusal(statement)


def test_what_spark_runs_stays() -> None:
    for statement in (
        "SELECT window(event_time, '10 seconds') AS w, account, count(*) AS n FROM trades "
        "GROUP BY 1, account",
        "SELECT amount AS a, count(*) AS n FROM trades GROUP BY (1)",
        "SELECT t.account, q.account AS quoted FROM trades t JOIN quotes q ON t.account = "
        "q.account AND q.event_time BETWEEN t.event_time - INTERVAL '1 day' AND t.event_time "
        "+ INTERVAL 1.5 SECONDS",
    ):
        check_query(statement, STREAMS)


@pytest.mark.parametrize("name", ["SEQ", "Point", "Arrival_S", "Shed_1", "CLASS"])
def test_a_stream_column_is_none_of_the_engines_in_any_case(name: str) -> None:
    with pytest.raises(ValidationError, match="RESERVED_COLUMNS"):
        StreamColumn(name=name)


def test_columns_and_a_joins_outputs_are_unique_in_any_case() -> None:
    twice = [{"name": "a"}, {"name": "A"}]
    assert any(
        "column 'A' is declared twice" in i for i in issues_of(doc([], None, {"columns": twice}))
    )
    own = [{"name": "key", "type": "long"}, {"name": "value"}, {"name": "value_r"}]
    join: dict[str, Any] = {
        "kind": "window_join",
        "right": "t",
        "window": {"size_s": 1},
        "sim": {"selectivity": 1},
    }
    issues = issues_of(doc([join], stream={"columns": own}))
    assert any(
        "operators[0].right: joining 't' gives two output columns named 'value_r'" in i
        for i in issues
    ), issues


def test_the_api_refuses_columns_differing_only_in_case(client: TestClient) -> None:
    columns = [{"name": "amount", "type": "double"}, {"name": "Amount", "type": "double"}]
    response = client.post("/api/v1/streams", json={"name": "trades", "columns": columns})
    assert response.status_code == 422, response.text
    assert "'Amount' is declared twice" in response.text

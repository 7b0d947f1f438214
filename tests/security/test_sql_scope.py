"""Probe: a SQL query's names trusted because an alias carried them (issue 42, finding 2).

``SELECT user AS user FROM trades`` was stored, and the job's output rows carried
``"user": "root"``: Spark reads a bare ``user`` as ``current_user()`` where no column has
the name, and the allow-list let any name through that some SELECT item carried as an
alias. ``SELECT amount AS seq, seq + 0 AS s2`` read the engine's own ``seq`` the same way
(the views Spark reads carry it). Every name now resolves against the query's scope: the
streams' columns (``arrival_s`` and ``event_time`` among them), SELECT aliases only as a
whole GROUP BY key or in HAVING; Spark's niladic names are refused in any spelling, and no
output, map output or stream column may take an engine column's name in any case.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from spark_runner.scenario.columns import RESERVED_COLUMNS, StreamColumn
from spark_runner.scenario.models import MapOp
from spark_runner.scenario.sql_allowlist import SqlNotAllowed, check_expression
from spark_runner.scenario.sql_query import check_query
from tests.security.test_sql_queries import STREAMS, queries_url, refusal

REFUSED: list[tuple[str, str]] = [
    # Spark's niladic functions, as names: bare, quoted, in any case
    ("SELECT user AS user FROM trades", "SPARK_NILADIC_NAMES"),
    ("SELECT `user` AS `user` FROM trades", "SPARK_NILADIC_NAMES"),
    ("SELECT `CURRENT_DATE` AS `CURRENT_DATE` FROM trades", "SPARK_NILADIC_NAMES"),
    ("SELECT amount AS Session_User FROM trades", "SPARK_NILADIC_NAMES"),
    # an alias read where Spark reads a column of the view first (the engine's own)
    ("SELECT amount AS seq, seq + 0 AS s2 FROM trades", "RESERVED_COLUMNS"),
    ("SELECT amount AS x, x + 0 AS y FROM trades", "'x' at position 21, which is a SELECT alias"),
    ("SELECT amount AS x FROM trades WHERE x > 1", "'x' at position 38, which is a SELECT alias"),
    (
        "SELECT t.amount AS x FROM trades t JOIN quotes q ON x = q.account",
        "which is a SELECT alias",
    ),
    ("SELECT amount AS x, count(*) FROM trades GROUP BY x + 1", "which is a SELECT alias"),
    # outputs named like the engine's own columns, in any case
    ("SELECT amount AS Class FROM trades", "RESERVED_COLUMNS"),
    ("SELECT amount AS QUERY FROM trades", "RESERVED_COLUMNS"),
    ("SELECT amount AS Arrival_S FROM trades", "RESERVED_COLUMNS"),
    ("SELECT amount AS shed_0 FROM trades", "RESERVED_COLUMNS"),
    ("SELECT amount AS `a``b` FROM trades", "plain name"),
    # the stream's columns renamed under the query (the first view column is `point`)
    ("SELECT amount FROM trades AS t(amount)", "renames the columns"),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED)
def test_every_name_resolves_against_the_querys_scope(statement: str, named: str) -> None:
    assert named in refusal(statement)


def test_aliases_where_spark_reads_them_and_engine_like_names_stay() -> None:
    checked = check_query(
        "SELECT account AS acct, count(*) AS n, max(amount) AS window_total, "
        "max(arrival_s) AS last_arrival FROM trades GROUP BY acct HAVING n > 2",
        STREAMS,
    )
    assert checked.columns == {"trades": frozenset({"account", "amount", "arrival_s"})}
    upper = check_query("SELECT AMOUNT, t.Account FROM trades T WHERE T.amount > 1", STREAMS)
    assert upper.columns == {"trades": frozenset({"amount", "account"})}


@pytest.mark.parametrize("name", ["user", "Current_User", "SESSION_USER", "current_date"])
def test_a_niladic_name_is_refused_in_a_map_and_as_a_stream_column(name: str) -> None:
    with pytest.raises(SqlNotAllowed, match="SPARK_NILADIC_NAMES"):
        check_expression(f"`{name}`")
    with pytest.raises(ValidationError, match="SPARK_NILADIC_NAMES"):
        StreamColumn(name=name)


@pytest.mark.parametrize("output", sorted(RESERVED_COLUMNS | {"SEQ", "Arrival_s", "shed_1"}))
def test_a_map_cannot_write_an_engine_column(output: str) -> None:
    with pytest.raises(ValidationError, match="RESERVED_COLUMNS"):
        MapOp(kind="map", expression="value", output=output, cpu_cost_per_tuple_s=0)


def test_the_api_refuses_a_query_reading_the_session_user(client: TestClient) -> None:
    url = queries_url(client)
    operator = {"kind": "sql", "statement": "SELECT user AS user FROM trades"}
    response = client.post(url, json={"name": "q", "source": "trades", "operators": [operator]})
    assert response.status_code == 422, response.text
    [item] = response.json()["detail"]
    assert item["loc"][-1] == "operators[0].statement"
    assert "'user' at position 16" in item["msg"] and "SPARK_NILADIC_NAMES" in item["msg"]
    assert client.get(url).json() == []

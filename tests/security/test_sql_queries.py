"""A class's own SQL query passes the query allow-list before it reaches Spark: one SELECT
over the class's streams, pure functions, aggregates and windows; everything else refused
with the construct and its position named. Spark runs the checked tree rendered back to
SQL, reading temporary views of the admitted tuples."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from spark_runner.scenario.sql_allowlist import SqlNotAllowed
from spark_runner.scenario.sql_query import check_query

STREAMS = {
    "trades": frozenset({"account", "amount", "ts", "event_time", "arrival_s"}),
    "quotes": frozenset({"account", "price", "event_time", "arrival_s"}),
}

REFUSED: list[tuple[str, str]] = [
    ("SELECT reflect('java.lang.System', 'getenv', 'X') FROM trades", "'reflect'"),
    ("SELECT java_method('a', 'b') AS x FROM trades", "'java_method'"),
    ("SELECT amount FROM trades WHERE rand() < 0.5", "'rand'"),
    ("SELECT amount FROM trades; DROP TABLE trades", "exactly one SELECT"),
    ("CREATE TEMPORARY FUNCTION evil AS 'x.Evil'", "only a SELECT"),
    ("SELECT * FROM trades", "uses * at position 8"),
    ("SELECT amount FROM secrets", "'secrets' at position 20, which is not a stream"),
    ("SELECT amount FROM db.trades", "qualified name"),
    ("SELECT amount FROM (SELECT amount FROM trades)", "no subquery"),
    ("WITH t AS (SELECT 1) SELECT amount FROM trades", "uses WITH at position 1"),
    ("SELECT amount FROM trades WHERE amount IN (SELECT 1)", "subquery"),
    ("SELECT DISTINCT amount FROM trades", "uses DISTINCT"),
    ("SELECT amount FROM trades ORDER BY amount", "uses ORDER at position 27"),
    ("SELECT amount FROM trades LIMIT 5", "uses LIMIT"),
    ("SELECT price FROM trades", "column 'price' at position 8, which trades does not have"),
    ("SELECT account FROM trades JOIN quotes ON trades.account = quotes.account", "qualify it"),
    ("SELECT t.amount FROM trades t LEFT JOIN quotes q ON t.account = q.account", "LEFT JOIN"),
    ("SELECT t.amount FROM trades t JOIN quotes q", "joins without ON"),
    (
        "SELECT t.account, count(*) FROM trades t JOIN quotes q ON t.account = q.account "
        "GROUP BY t.account",
        "both joins and aggregates",
    ),
    ("SELECT count(DISTINCT account) FROM trades", "distinct aggregates"),
    ("SELECT window(ts, 10) FROM trades", "'10 seconds'"),
    ("SELECT amount /* hidden */ FROM trades", "comment"),
    ("SELECT amount FROM trades WHERE account = 'x\\' OR 1=1", "cannot be read"),
    ("SELECT amount FROM trades WHERE account = 'a\\\\b'", "string literal"),
    ("SELEC amount FROM trades", "not a valid SQL query"),
    ("SELECT " + "(" * 40 + "amount" + ")" * 40 + " FROM trades", "32"),
    ("SELECT amount FROM trades WHERE " + " OR ".join(["amount > 1"] * 400), "characters long"),
]


def queries_url(client: TestClient) -> str:
    """Where a new class's queries are stored."""
    created = client.post(
        "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2}
    )
    return f"/api/v1/classes/{created.json()['id']}/queries"


def refusal(statement: str) -> str:
    """Why the query allow-list refuses ``statement`` over ``STREAMS``."""
    with pytest.raises(SqlNotAllowed) as refused:
        check_query(statement, STREAMS)
    return str(refused.value)


@pytest.mark.parametrize(("statement", "named"), REFUSED)
def test_the_query_allow_list_refuses_and_names_what_and_where(statement: str, named: str) -> None:
    assert named in refusal(statement)


def test_an_allowed_query_is_rendered_from_its_checked_tree_over_the_views() -> None:
    checked = check_query(
        "SELECT window(event_time, '10 seconds') AS w, account, avg(amount) AS mean, "
        "count(*) AS n FROM trades WHERE amount > 10 GROUP BY window(event_time, "
        "'10 seconds'), account HAVING count(*) > 2",
        STREAMS,
    )
    assert checked.streams == ("trades",) and checked.stateful
    assert checked.columns == {"trades": frozenset({"event_time", "account", "amount"})}
    sql = checked.render({"trades": "view_1"})
    assert "FROM view_1 AS trades" in sql and "WINDOW(event_time, '10 seconds')" in sql
    joined = check_query(
        "SELECT t.account, t.amount, q.price FROM trades t JOIN quotes q ON t.account = "
        "q.account AND q.event_time BETWEEN t.event_time - INTERVAL 2 SECONDS AND "
        "t.event_time + INTERVAL 2 SECONDS",
        STREAMS,
    )
    assert joined.streams == ("trades", "quotes") and joined.stateful
    rendered = joined.render({"trades": "v_t", "quotes": "v_q"})
    assert "FROM v_t AS t JOIN v_q AS q" in rendered
    stateless = check_query("SELECT account, amount * 2 AS double FROM trades", STREAMS)
    assert not stateless.stateful

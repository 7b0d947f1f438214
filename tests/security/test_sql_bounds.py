"""Probe: stored queries that take down a job (issue 42, finding 5).

Accepted and stored: ``rpad('a', 2000000000, 'b')`` (a 2 GB string a row),
``window(ts, '168 hours', '1 millisecond')`` (Spark copies every row into each of its
6·10⁸ windows), a window aggregate sliding 604,800 s every 1 ms, ``JOIN … ON 1 = 1``
(every tuple paired with every other). Also found: ``round(x, 2000000000)`` (Spark rounds a
double through a decimal of that scale: seconds a row at a scale of 10⁶), nested
``replace`` (each multiplies the string), and ``LIKE '%a%a%a%b'`` (a backtracking regular
expression, hours on a long string). Each is now refused with the bound's name and value.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from spark_runner.scenario.models import Window
from spark_runner.scenario.sql_allowlist import SqlNotAllowed, check_expression
from spark_runner.scenario.sql_query import check_query
from tests.security.test_sql_queries import STREAMS, queries_url, refusal

REFUSED: list[tuple[str, str]] = [
    ("SELECT rpad('a', 2000000000, 'b') AS x FROM trades", "MAX_BUILT_STRING_CHARS is 10000"),
    ("SELECT lpad(ts, account, 'b') AS x FROM trades", "MAX_BUILT_STRING_CHARS is 10000"),
    (
        "SELECT lpad(ts, 6000) || lpad(ts, 6000) AS x FROM trades",
        "12000 characters besides its input columns; MAX_BUILT_STRING_CHARS is 10000",
    ),
    (
        "SELECT replace(replace(replace(ts, 'a', 'aaaaaaaaaa'), 'a', 'aaaaaaaaaa'), 'a', "
        "'aaaaaaaaaa') AS x FROM trades",
        "1000 times as long as its longest input column; MAX_STRING_GROWTH is 100",
    ),
    ("SELECT replace(ts, ts, 'xx') AS x FROM trades", "are string literals"),
    ("SELECT round(amount, 2000000000) AS x FROM trades", "MAX_ROUND_DIGITS is 38"),
    ("SELECT bround(amount, -39) AS x FROM trades", "MAX_ROUND_DIGITS is 38"),
    ("SELECT amount FROM trades WHERE ts LIKE '%a%a%a%b'", "MAX_LIKE_WILDCARDS is 2"),
    ("SELECT amount FROM trades WHERE ts LIKE account", "a LIKE pattern is a string literal"),
    (
        "SELECT window(ts, '168 hours', '1 millisecond') AS w, count(*) AS n FROM trades "
        "GROUP BY 1",
        "every row in 604800000 windows ('168 hours' every '1 millisecond') at position 8; "
        "MAX_WINDOWS_PER_ROW is 1000",
    ),
    (
        "SELECT window(ts, '0 seconds') AS w, count(*) AS n FROM trades GROUP BY 1",
        "MIN_WINDOW_S (0.001 s)",
    ),
    (
        "SELECT window(ts, '10 seconds', '20 seconds') AS w, count(*) AS n FROM trades GROUP BY 1",
        "the slide is at most the size",
    ),
    ("SELECT t.amount FROM trades t JOIN quotes q ON 1 = 1", "no key and no time range"),
    (
        "SELECT t.amount FROM trades t JOIN quotes q ON t.account = t.account AND q.price > 1",
        "no key and no time range",
    ),
    (
        "SELECT t.amount FROM trades t JOIN quotes q ON t.account = q.account OR 1 = 1",
        "no key and no time range",
    ),
    (
        "SELECT t.amount FROM trades t JOIN quotes q ON q.event_time > t.event_time",
        "no key and no time range",
    ),
]


@pytest.mark.parametrize(("statement", "named"), REFUSED)
def test_a_query_that_would_take_down_a_job_is_refused(statement: str, named: str) -> None:
    assert named in refusal(statement)


def test_the_bounds_themselves_pass() -> None:
    for statement in (
        "SELECT rpad(ts, 10000, 'b') AS x, round(amount, 38) AS r, bround(amount, -2) AS b "
        "FROM trades WHERE ts LIKE '%a%' AND replace(ts, 'a', 'bb') LIKE 'b%'",
        "SELECT window(ts, '1000 seconds', '1 second') AS w, count(*) AS n FROM trades GROUP BY 1",
        "SELECT t.amount FROM trades t JOIN quotes q ON (t.account = q.account)",
        "SELECT t.amount FROM trades t JOIN quotes q ON q.event_time >= t.event_time - "
        "INTERVAL 2 SECONDS AND t.event_time + INTERVAL 2 SECONDS > q.event_time",
    ):
        check_query(statement, STREAMS)


def test_a_map_expression_and_a_window_operator_are_bounded_alike() -> None:
    with pytest.raises(SqlNotAllowed, match="MAX_BUILT_STRING_CHARS is 10000"):
        check_expression("rpad(value, 2000000000, 'b')")
    with pytest.raises(ValidationError, match="604800000 windows; MAX_WINDOWS_PER_ROW is 1000"):
        Window(type="sliding", size_s=604_800, slide_s=0.001)
    assert Window(type="sliding", size_s=1000, slide_s=1).slide_s == 1


def test_the_api_answers_422_naming_the_bound(client: TestClient) -> None:
    url = queries_url(client)
    sql = {"kind": "sql", "statement": "SELECT rpad('a', 2000000000, 'b') AS x FROM trades"}
    sliding = {
        "kind": "window_aggregate",
        "window": {"type": "sliding", "size_s": 604_800, "slide_s": 0.001},
    }
    for operator, named in ((sql, "MAX_BUILT_STRING_CHARS"), (sliding, "MAX_WINDOWS_PER_ROW")):
        query = {"name": "q", "source": "trades", "operators": [operator]}
        response = client.post(url, json=query)
        assert response.status_code == 422, response.text
        assert named in response.text and "operators[0]" in response.text
    assert client.get(url).json() == []

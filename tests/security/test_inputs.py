"""Probe: inputs no route can store get a 422 that names the field and the rule, and the
client's keep-alive connection stays usable (issue 11, item 5).

Before the body guard, JSON ``NaN``/``Infinity`` was echoed back in a 422 that then failed
to serialise (a 500), a deep nesting hit the parser's recursion limit, a NUL reached
PostgreSQL (which refuses it in text) and a 2**70 integer overflowed a column; after each
500 uvicorn closed the connection. These tests drive a real uvicorn process through one
``httpx.Client`` (one connection, reused) on SQLite and on PostgreSQL, and check after
every refusal that the next request on the same connection is answered.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from backend.api.body_guard import BadInput, may_break_rules, parse_json
from backend.db import make_engine
from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from backend.users.models import Role
from backend.users.schemas import UserCreate
from backend.users.service import create_user
from spark_runner.scenario import ScenarioError, parse_scenario
from tests.conftest import temporary_postgres_database

PASSWORD = "input-probe-password-4711"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)]
)
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real API process (uvicorn) on a migrated database; yields its base URL."""
    data_dir = tmp_path_factory.mktemp("inputs")
    with ExitStack() as cleanup:
        if request.param == "sqlite":
            url = f"sqlite:///{data_dir / 'headroom.db'}"
        else:
            url = cleanup.enter_context(temporary_postgres_database())
        settings = Settings(data_dir=data_dir, database_url=url, api_port=_free_port())
        upgrade(settings.sqlalchemy_url)
        engine = make_engine(settings.sqlalchemy_url)
        with Session(engine) as session:
            user = UserCreate(username="ops", password=PASSWORD, role=Role.OPERATOR)
            create_user(session, user)
            session.commit()
        engine.dispose()
        stack = Stack.from_settings(settings)
        stack.start_api()
        cleanup.callback(stack.stop)
        stack.wait_healthy()
        yield f"{settings.public_api_url}/api/v1"


@pytest.fixture(scope="module")
def session_client(api: str) -> Iterator[httpx.Client]:
    """One logged-in client: one connection, kept alive across requests."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with httpx.Client(base_url=api, timeout=30, limits=limits) as client:
        login = client.post("/auth/login", json={"username": "ops", "password": PASSWORD})
        assert login.status_code == 200, login.text
        client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
        created = client.post(
            "/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5}
        )
        assert created.status_code in (201, 409), created.text
        yield client


def _job_id(client: httpx.Client) -> int:
    job = client.post("/jobs", json={"rate_per_s": 10})
    assert job.status_code == 201, job.text
    return int(job.json()["id"])


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


# Each probe: (its name, the raw JSON value put at the probed field, the rule's words).
PROBES: list[tuple[str, str, str]] = [
    ("nan", "NaN", "must be finite"),
    ("infinity", "Infinity", "must be finite"),
    ("minus-infinity", "-Infinity", "must be finite"),
    ("beyond-double", "1e400", "must be finite"),
    ("deep-500", _nest(500), "nested too deeply"),
    ("nul", json.dumps("fr\u0000aud"), "NUL"),
    ("int-2**70", str(2**70), "64 bits"),
]

# Each route family: (name, method, path, JSON body template with {value} at the field,
# the field's location in the body, and whether it needs the job's ingest token).
SAMPLE = (
    '{{"samples": [{{"class_name": "fraud", "seq": 0, "t": 1.0, "period_s": 1.0, '
    '"arrived_count": 1, "output_count": 1, "arrival_rate": {value}}}]}}'
)
ROUTES: list[tuple[str, str, str, str, list[str | int]]] = [
    ("login", "POST", "/auth/login", '{{"username": {value}, "password": "x"}}', ["username"]),
    (
        "classes",
        "POST",
        "/classes",
        '{{"name": "ads", "priority": {value}, "delay_target_s": 2}}',
        ["priority"],
    ),
    ("jobs", "POST", "/jobs", '{{"rate_per_s": {value}}}', ["rate_per_s"]),
    ("scenarios", "POST", "/scenarios", '{{"yaml": {value}}}', ["yaml"]),
    ("ingest", "POST", "/jobs/{job}/metrics", SAMPLE, ["samples", 0, "arrival_rate"]),
]


@pytest.mark.parametrize(("route", "method", "path", "template", "field"), ROUTES)
@pytest.mark.parametrize(("probe", "raw", "words"), PROBES)
def test_an_unstorable_value_is_a_422_naming_the_field_and_the_connection_lives_on(
    session_client: httpx.Client,
    route: str,
    method: str,
    path: str,
    template: str,
    field: list[str | int],
    probe: str,
    raw: str,
    words: str,
) -> None:
    client = session_client
    headers = {"Content-Type": "application/json"}
    if route == "ingest":
        headers["Authorization"] = "Bearer not-checked-before-the-body"
    url = path.format(job=_job_id(client)) if "{job}" in path else path
    body = template.format(value=raw)

    refused = client.request(method, url, content=body.encode(), headers=headers)

    assert refused.status_code == 422, (route, probe, refused.status_code, refused.text[:300])
    [item] = refused.json()["detail"]
    # The field itself (a deep nesting: the container at the depth limit inside it).
    assert item["loc"][: len(field) + 1] == ["body", *field], item
    assert words in item["msg"] and item["input"] is None, item
    assert "\\u0000" not in refused.text  # the value is never echoed
    # The same connection (the same client port) answers the next request.
    after = client.get("/health")
    assert after.status_code == 200
    assert _client_port(after) == _client_port(refused)


def _client_port(response: httpx.Response) -> int:
    """The local port of the connection that carried ``response``."""
    stream: Any = response.extensions["network_stream"]
    return int(stream.get_extra_info("client_addr")[1])


@pytest.mark.parametrize(
    ("query", "field"),
    [("class_name=fr%00aud", "class_name"), ("since=nan", "since"), ("last_s=inf", "last_s")],
)
def test_a_bad_query_value_is_a_422_and_the_connection_lives_on(
    session_client: httpx.Client, query: str, field: str
) -> None:
    job_id = _job_id(session_client)
    refused = session_client.get(f"/jobs/{job_id}/metrics?{query}")
    assert refused.status_code == 422, refused.text
    [item] = refused.json()["detail"]
    assert item["loc"] == ["query", field], item
    assert session_client.get("/health").status_code == 200


def test_the_login_refuses_a_nul_in_the_password_too(session_client: httpx.Client) -> None:
    refused = session_client.post(
        "/auth/login", json={"username": "ops", "password": "hunter\u00002-4711"}
    )
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == [
        "body",
        "password",
    ]
    assert "hunter" not in refused.text and "4711" not in refused.text  # never echoed


def test_valid_bodies_still_pass_the_guard(session_client: httpx.Client) -> None:
    """Text that merely looks like a rule breaker ("NaN" as a name) is fine."""
    created = session_client.post(
        "/classes",
        json={"name": "NaN-Infinity", "priority": 1e-3, "delay_target_s": 2},
    )
    assert created.status_code in (201, 409), created.text


# --- scenario YAML --------------------------------------------------------------------------

SCENARIO = """version: 1
name: bounded
duration_s: 60
control: {period_s: 1.0}
streams:
  - {name: s, arrival: {kind: constant, rate_per_s: 100}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 1.5
    queries:
      - {name: q, source: s, operators: [{kind: filter, predicate: "value > 0.5"}]}
"""


def test_a_yaml_nested_5000_deep_is_refused_where_it_passes_the_bound(
    session_client: httpx.Client,
) -> None:
    """A bracket per line: the line the refusal names (where reading stopped) shows the
    parser stopped at the 51st level instead of reading the 10,000 lines (the composer
    recurses per level: unbounded, it would also exhaust the stack)."""
    deep = SCENARIO + "description:\n" + " [\n" * 5000 + " ]\n" * 5000
    first_bracket_line = SCENARIO.count("\n") + 2
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(deep)
    assert "nested deeper than 50 levels" in str(refused.value)
    (issue,) = refused.value.issues
    # the 50th bracket opens level 51 (the root mapping is level 1); the scanner has
    # looked one line past it
    assert issue.line == first_bracket_line + 50
    answer = session_client.post("/scenarios", json={"yaml": deep})
    assert answer.status_code == 422
    assert "nested deeper than 50 levels" in answer.json()["detail"][0]["msg"]
    assert session_client.get("/health").status_code == 200


def test_a_yaml_of_aliases_that_expands_to_billions_is_refused(
    session_client: httpx.Client,
) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    bomb = SCENARIO + "engine_notes:\n" + "".join(f"  {line}\n" for line in lines)
    answer = session_client.post("/scenarios", json={"yaml": bomb})
    assert answer.status_code == 422, answer.text[:300]
    # the size is counted on the node tree, before a value is built: built, the ten
    # billion values would not fit in memory
    assert "values once its aliases are expanded" in answer.json()["detail"][0]["msg"]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('"fr\\0aud"', "NUL"),
        (".nan", "finite"),
        (str(2**70), "64 bits"),
    ],
)
def test_a_yaml_value_no_database_can_store_is_refused(
    session_client: httpx.Client, value: str, words: str
) -> None:
    text = SCENARIO.replace("name: bounded", "name: bounded\ndescription_extra: " + value)
    answer = session_client.post("/scenarios", json={"yaml": text})
    assert answer.status_code == 422, answer.text[:300]
    [item] = answer.json()["detail"]
    assert item["loc"] == ["body", "yaml", "description_extra"] and words in item["msg"]


BOUNDS: list[tuple[Callable[[str], str], str, str]] = [
    # YAML 1.1 reads a float with a dot and a signed exponent (1e300 alone is text).
    (lambda s: s.replace("rate_per_s: 100", "rate_per_s: 1.0e+300"), "rate_per_s", "<= 1000000"),
    (lambda s: s.replace("duration_s: 60", "duration_s: 1.0e+308"), "duration_s", "<= 604800"),
    (lambda s: s.replace("period_s: 1.0", "period_s: 1.0e-300"), "control.period_s", ">= 0.01"),
    (
        lambda s: s.replace("delay_target_s: 1.5", "delay_target_s: 1.0e-300"),
        "classes[0].delay_target_s",
        ">= 0.001",
    ),
]


@pytest.mark.parametrize(("change", "path", "bound"), BOUNDS)
def test_scenario_values_beyond_their_bounds_are_refused_with_the_bound(
    session_client: httpx.Client, change: Callable[[str], str], path: str, bound: str
) -> None:
    answer = session_client.post("/scenarios", json={"yaml": change(SCENARIO)})
    assert answer.status_code == 422, answer.text[:300]
    messages = [item["msg"] for item in answer.json()["detail"]]
    assert any(path in m and f"must be {bound}" in m for m in messages), messages


def test_a_class_uses_the_scenario_bound_of_the_delay_target(
    session_client: httpx.Client,
) -> None:
    answer = session_client.post(
        "/classes", json={"name": "tiny", "priority": 1, "delay_target_s": 1e-300}
    )
    assert answer.status_code == 422
    [item] = answer.json()["detail"]
    assert item["loc"] == ["body", "delay_target_s"] and "0.001" in item["msg"]


# --- the guard's fast screen ----------------------------------------------------------------

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.integers(0, 40))
@example([{"]": [None]}], 29)  # found by a run: a "]" in a key hid a level from the screen
@example([{'k\\"]': [None]}], 29)  # the same behind an escaped quote
def test_the_fast_screen_never_passes_a_body_the_full_check_refuses(
    value: object, depth: int
) -> None:
    """``may_break_rules`` (bytes, C speed) may raise false alarms, never miss: whatever
    the full parse refuses, the screen flags."""
    body = json.dumps([value], allow_nan=True)
    body = "[" * depth + body + "]" * depth
    try:
        parse_json(body.encode())
    except BadInput:
        assert may_break_rules(body.encode()), body

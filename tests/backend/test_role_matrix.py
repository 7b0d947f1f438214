"""Who may call what: every route of the app × every kind of caller, with the exact status.

The table ``ROUTES`` holds one entry per (method, path) the app serves; a route the app
gains without an entry fails ``test_every_route_has_an_entry``. Each entry names who may
call it (``Access``), the status of a successful call and the request that exercises it
against a small world (a class with a query, a scenario, a live job with samples and its
ingest token, a stopped job, a spare user). Callers: nobody (no token), a viewer, an
operator, an admin, a job (its per-launch ingest token, which is no user's token) and a
Prometheus scraper (the metrics scrape token, which opens ``/metrics`` only).

Expected statuses: a public route answers its success status to everyone; a user route
answers 401 to the anonymous caller and to a job token, 403 to a role below the one it
needs, its success status otherwise; a job route (and ``/metrics``) answers 401 to every
other caller and its success status to the job (the scraper).

Each case runs in a savepoint rolled back afterwards, inside one transaction per database
that holds the world; tokens are minted directly (no password hashing per case).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session

from backend.api.deps import get_read_sessions, get_session
from backend.db import utcnow
from backend.jobs.models import Job
from backend.main import create_app
from backend.settings import Settings
from backend.users.models import ApiToken, User
from backend.users.repository import UserRepository
from backend.users.security import new_token, token_digest
from tests.api_fixtures import PASSWORD
from tests.backend.test_jobs_api import RecordingDispatcher, _sample

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "scenarios" / "demo.yaml").read_text()


class Access(Enum):
    """Who a route is for (each role includes the ones below it)."""

    PUBLIC = "public"
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    JOB = "job"
    SCRAPER = "scraper"


class Caller(Enum):
    ANONYMOUS = "anonymous"
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"
    JOB = "job"
    SCRAPER = "scraper"


RANK = {Caller.VIEWER: 1, Caller.OPERATOR: 2, Caller.ADMIN: 3}
NEEDS = {Access.VIEWER: 1, Access.OPERATOR: 2, Access.ADMIN: 3}
USERNAMES = {Caller.VIEWER: "viewer", Caller.OPERATOR: "ops", Caller.ADMIN: "admin"}


@dataclass(frozen=True)
class World:
    """Ids of what exists when a case runs."""

    class_id: int
    query_id: int
    stream_id: int
    scenario_id: int
    live_job_id: int
    stopped_job_id: int
    user_id: int


Request = Callable[[World], tuple[str, dict[str, Any]]]
"""Builds the concrete path (and httpx keyword arguments) for one case."""


@dataclass(frozen=True)
class Route:
    access: Access
    success: int
    request: Request
    stream: bool = field(default=False)


CLUSTER = "spark://127.0.0.1:7077"
"""The coordinated master of the matrix's app."""


def at(path: str, **kwargs: Any) -> Request:
    """``path`` with ``{class_id}``-style fields taken from the world."""

    def build(world: World) -> tuple[str, dict[str, Any]]:
        return path.format(**vars(world)), kwargs

    return build


def fresh_sample(seq: int) -> dict[str, object]:
    """A sample measured now (ingest refuses times far from the server's clock)."""
    return {**_sample(seq), "t": time.time()}


def ingest(world: World) -> tuple[str, dict[str, Any]]:
    return f"{API}/jobs/{world.live_job_id}/metrics", {"json": {"samples": [fresh_sample(1)]}}


def post_action(world: World) -> tuple[str, dict[str, Any]]:
    action = {
        "seq": 0,
        "at_s": time.time(),
        "kind": "shed_more",
        "class_name": "fraud",
        "usage": 1.2,
        "shed_before": 0.0,
        "shed_after": 0.3,
    }
    return f"{API}/jobs/{world.live_job_id}/actions", {"json": {"actions": [action]}}


QUERY = {
    "name": "big",
    "source": "trades",
    "operators": [{"kind": "filter", "predicate": "value > 0.9"}],
}
STREAM = {"name": "quotes", "columns": [{"name": "bid", "type": "double"}]}
SCRAPE_TOKEN = "matrix-scrape-token"
CLASS = {"name": "fraud", "priority": 6, "delay_target_s": 1.5}
API = "/api/v1"


def handoff(world: World) -> tuple[str, dict[str, Any]]:
    body = {
        "class_name": "gold",
        "origin_job_id": world.live_job_id,
        "target_job_id": world.stopped_job_id,
    }
    return f"{API}/handoffs", {"json": body}


JOB = API + "/jobs/{live_job_id}"

ROUTES: dict[tuple[str, str], Route] = {
    ("GET", "/openapi.json"): Route(Access.PUBLIC, 200, at("/openapi.json")),
    ("GET", "/docs"): Route(Access.PUBLIC, 200, at("/docs")),
    ("GET", "/docs/oauth2-redirect"): Route(Access.PUBLIC, 200, at("/docs/oauth2-redirect")),
    ("GET", "/redoc"): Route(Access.PUBLIC, 200, at("/redoc")),
    ("GET", "/metrics"): Route(Access.SCRAPER, 200, at("/metrics")),
    ("GET", API + "/health"): Route(Access.PUBLIC, 200, at(API + "/health")),
    ("POST", API + "/auth/login"): Route(
        Access.PUBLIC,
        200,
        at(API + "/auth/login", json={"username": "viewer", "password": PASSWORD}),
    ),
    ("POST", API + "/auth/logout"): Route(Access.VIEWER, 204, at(API + "/auth/logout")),
    ("GET", API + "/auth/me"): Route(Access.VIEWER, 200, at(API + "/auth/me")),
    ("GET", API + "/users"): Route(Access.ADMIN, 200, at(API + "/users")),
    ("POST", API + "/users"): Route(
        Access.ADMIN,
        201,
        at(API + "/users", json={"username": "newcomer", "password": "Matrix-pass-7f3k9q"}),
    ),
    ("PATCH", API + "/users/{user_id}"): Route(
        Access.ADMIN, 200, at(API + "/users/{user_id}", json={"role": "operator"})
    ),
    ("GET", API + "/classes"): Route(Access.VIEWER, 200, at(API + "/classes")),
    ("POST", API + "/classes"): Route(
        Access.OPERATOR, 201, at(API + "/classes", json={**CLASS, "name": "ads"})
    ),
    ("GET", API + "/classes/settings"): Route(Access.VIEWER, 200, at(API + "/classes/settings")),
    ("GET", API + "/classes/{class_id}"): Route(
        Access.VIEWER, 200, at(API + "/classes/{class_id}")
    ),
    ("PATCH", API + "/classes/{class_id}"): Route(
        Access.OPERATOR, 200, at(API + "/classes/{class_id}", json={"priority": 2})
    ),
    ("DELETE", API + "/classes/{class_id}"): Route(
        Access.OPERATOR, 204, at(API + "/classes/{class_id}")
    ),
    ("GET", API + "/managers"): Route(Access.VIEWER, 200, at(API + "/managers")),
    ("GET", API + "/elastic"): Route(Access.VIEWER, 200, at(API + "/elastic")),
    ("GET", API + "/clusters"): Route(Access.VIEWER, 200, at(API + "/clusters")),
    ("GET", API + "/clusters/reallocations"): Route(
        Access.VIEWER, 200, at(API + "/clusters/reallocations", params={"master": CLUSTER})
    ),
    ("GET", API + "/handoffs"): Route(Access.VIEWER, 200, at(API + "/handoffs")),
    # the stopped job cannot take a class: past the role check, the hand-off itself refuses
    # (test_handoffs_api moves one between two running jobs)
    ("POST", API + "/handoffs"): Route(Access.OPERATOR, 409, handoff),
    ("GET", API + "/jobs"): Route(Access.VIEWER, 200, at(API + "/jobs")),
    ("POST", API + "/jobs"): Route(Access.OPERATOR, 201, at(API + "/jobs", json={})),
    ("GET", API + "/jobs/{job_id}"): Route(Access.VIEWER, 200, at(JOB)),
    ("POST", API + "/jobs/{job_id}/stop"): Route(Access.OPERATOR, 202, at(JOB + "/stop")),
    ("POST", API + "/jobs/{job_id}/restart"): Route(
        Access.OPERATOR, 201, at(API + "/jobs/{stopped_job_id}/restart")
    ),
    ("GET", API + "/jobs/{job_id}/log"): Route(Access.VIEWER, 200, at(JOB + "/log")),
    ("POST", API + "/jobs/{job_id}/metrics"): Route(Access.JOB, 202, ingest),
    ("GET", API + "/jobs/{job_id}/metrics"): Route(Access.VIEWER, 200, at(JOB + "/metrics")),
    ("GET", API + "/jobs/{job_id}/metrics/export"): Route(
        Access.VIEWER, 200, at(JOB + "/metrics/export")
    ),
    ("GET", API + "/jobs/{job_id}/metrics/stream"): Route(
        Access.VIEWER, 200, at(JOB + "/metrics/stream"), stream=True
    ),
    ("POST", API + "/jobs/{job_id}/actions"): Route(Access.JOB, 202, post_action),
    ("GET", API + "/jobs/{job_id}/actions"): Route(Access.VIEWER, 200, at(JOB + "/actions")),
    ("GET", API + "/jobs/{job_id}/config"): Route(Access.VIEWER, 200, at(JOB + "/config")),
    ("PATCH", API + "/jobs/{job_id}/config"): Route(
        Access.OPERATOR, 200, at(JOB + "/config", json={"recommend_only": True})
    ),
    ("POST", API + "/jobs/{job_id}/config/preview"): Route(
        Access.OPERATOR, 200, at(JOB + "/config/preview", json={"recommend_only": True})
    ),
    ("GET", API + "/jobs/{job_id}/control"): Route(
        Access.JOB, 204, at(JOB + "/control", params={"after_version": 0, "wait_s": 0})
    ),
    ("POST", API + "/jobs/{job_id}/control/ack"): Route(
        Access.JOB, 204, at(JOB + "/control/ack", json={"version": 0})
    ),
    ("GET", API + "/jobs/{job_id}/summary"): Route(Access.VIEWER, 200, at(JOB + "/summary")),
    ("GET", API + "/runs/compare"): Route(
        Access.VIEWER,
        200,
        at(API + "/runs/compare?a={live_job_id}&b={stopped_job_id}"),
    ),
    ("GET", API + "/scenarios"): Route(Access.VIEWER, 200, at(API + "/scenarios")),
    ("POST", API + "/scenarios"): Route(
        Access.OPERATOR,
        201,
        at(API + "/scenarios", json={"yaml": DEMO.replace("name: demo", "name: other", 1)}),
    ),
    ("GET", API + "/scenarios/{scenario_id}"): Route(
        Access.VIEWER, 200, at(API + "/scenarios/{scenario_id}")
    ),
    ("PUT", API + "/scenarios/{scenario_id}"): Route(
        Access.OPERATOR, 200, at(API + "/scenarios/{scenario_id}", json={"yaml": DEMO})
    ),
    ("GET", API + "/scenarios/{scenario_id}/export"): Route(
        Access.VIEWER, 200, at(API + "/scenarios/{scenario_id}/export")
    ),
    ("DELETE", API + "/scenarios/{scenario_id}"): Route(
        Access.OPERATOR, 204, at(API + "/scenarios/{scenario_id}")
    ),
    ("GET", API + "/classes/{class_id}/queries"): Route(
        Access.VIEWER, 200, at(API + "/classes/{class_id}/queries")
    ),
    ("POST", API + "/classes/{class_id}/queries"): Route(
        Access.OPERATOR,
        201,
        at(API + "/classes/{class_id}/queries", json={**QUERY, "name": "another"}),
    ),
    ("GET", API + "/streams"): Route(Access.VIEWER, 200, at(API + "/streams")),
    ("POST", API + "/streams"): Route(
        Access.OPERATOR, 201, at(API + "/streams", json={**STREAM, "name": "another"})
    ),
    ("GET", API + "/streams/{stream_id}"): Route(
        Access.VIEWER, 200, at(API + "/streams/{stream_id}")
    ),
    ("PUT", API + "/streams/{stream_id}"): Route(
        Access.OPERATOR, 200, at(API + "/streams/{stream_id}", json=STREAM)
    ),
    ("DELETE", API + "/streams/{stream_id}"): Route(
        Access.OPERATOR, 204, at(API + "/streams/{stream_id}")
    ),
    ("GET", API + "/classes/{class_id}/queries/{query_id}"): Route(
        Access.VIEWER, 200, at(API + "/classes/{class_id}/queries/{query_id}")
    ),
    ("PUT", API + "/classes/{class_id}/queries/{query_id}"): Route(
        Access.OPERATOR, 200, at(API + "/classes/{class_id}/queries/{query_id}", json=QUERY)
    ),
    ("DELETE", API + "/classes/{class_id}/queries/{query_id}"): Route(
        Access.OPERATOR, 204, at(API + "/classes/{class_id}/queries/{query_id}")
    ),
}


def expected_status(route: Route, caller: Caller) -> int:
    if route.access is Access.PUBLIC:
        return route.success
    if route.access in (Access.JOB, Access.SCRAPER):
        return route.success if caller.value == route.access.value else 401
    if caller not in RANK:
        return 401
    return route.success if RANK[caller] >= NEEDS[route.access] else 403


def served_routes(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the app answers (HEAD is GET's)."""
    return {
        (method, str(context.path))
        for context in iter_route_contexts(app.routes)
        for method in context.methods or ()
        if method != "HEAD"
    }


class SessionSlot:
    """The session the app's requests use: the current case's, inside its savepoint."""

    session: Session | None = None

    def get(self) -> Session:
        assert self.session is not None, "no case is running"
        return self.session


@dataclass
class Stage:
    client: TestClient
    connection: Connection
    slot: SessionSlot
    world: World
    headers: dict[Caller, dict[str, str]]


def _mint_token(session: Session, username: str) -> dict[str, str]:
    user = UserRepository(session).by_username(username)
    assert user is not None
    token = new_token()
    UserRepository(session).add_token(
        ApiToken(
            user_id=user.id, digest=token_digest(token), expires_at=utcnow() + timedelta(hours=1)
        )
    )
    return {"Authorization": f"Bearer {token}"}


def _build_world(client: TestClient, session: Session, admin: dict[str, str]) -> World:
    def ok(response: Any, status: int) -> Any:
        assert response.status_code == status, response.text
        return response.json()

    class_id = ok(client.post(f"{API}/classes", json=CLASS, headers=admin), 201)["id"]
    query_id = ok(client.post(f"{API}/classes/{class_id}/queries", json=QUERY, headers=admin), 201)[
        "id"
    ]
    stream_id = ok(client.post(f"{API}/streams", json=STREAM, headers=admin), 201)["id"]
    scenario_id = ok(client.post(f"{API}/scenarios", json={"yaml": DEMO}, headers=admin), 201)["id"]
    live = ok(client.post(f"{API}/jobs", json={}, headers=admin), 201)["id"]
    stopped = ok(client.post(f"{API}/jobs", json={}, headers=admin), 201)["id"]
    session.get(Job, stopped).status = "stopped"  # type: ignore[union-attr]
    spare = User(username="spare", password_hash="-", role="viewer", active=True)
    session.add(spare)
    session.commit()
    return World(class_id, query_id, stream_id, scenario_id, live, stopped, spare.id)


@pytest.fixture(scope="module")
def stage(migrated_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    """One app and one world per database, in a transaction rolled back at the end."""
    url = migrated_engine.url.render_as_string(hide_password=False)
    app = create_app(
        Settings(
            data_dir=tmp_path_factory.mktemp("matrix"),
            database_url=url,
            metrics_token=SCRAPE_TOKEN,
            allowed_spark_masters=[CLUSTER],
            cluster_executors={CLUSTER: 4},
        ),
        dispatcher=RecordingDispatcher(),
    )
    slot = SessionSlot()

    def _session() -> Iterator[Session]:
        session = slot.get()
        yield session
        session.commit()

    app.dependency_overrides[get_session] = _session
    app.dependency_overrides[get_read_sessions] = lambda: lambda: nullcontext(slot.get())
    connection = migrated_engine.connect()
    transaction = connection.begin()
    slot.session = Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )
    try:
        with TestClient(app) as client:
            headers = {
                caller: _mint_token(slot.session, name) for caller, name in USERNAMES.items()
            }
            world = _build_world(client, slot.session, headers[Caller.ADMIN])
            job_token = new_token()
            slot.session.get(Job, world.live_job_id).ingest_token_digest = token_digest(  # type: ignore[union-attr]
                job_token
            )
            slot.session.commit()
            headers[Caller.JOB] = {"Authorization": f"Bearer {job_token}"}
            headers[Caller.ANONYMOUS] = {}
            headers[Caller.SCRAPER] = {"Authorization": f"Bearer {SCRAPE_TOKEN}"}
            ingested = client.post(
                f"{API}/jobs/{world.live_job_id}/metrics",
                json={"samples": [fresh_sample(0)]},
                headers=headers[Caller.JOB],
            )
            assert ingested.status_code == 202, ingested.text
            slot.session.close()
            slot.session = None
            yield Stage(client, connection, slot, world, headers)
    finally:
        if slot.session is not None:
            slot.session.close()
        transaction.rollback()
        connection.close()


def test_every_route_has_an_entry(stage: Stage) -> None:
    served = served_routes(stage.client.app)  # type: ignore[arg-type]
    assert served - ROUTES.keys() == set(), "routes without an entry in ROUTES"
    assert ROUTES.keys() - served == set(), "entries for routes the app does not serve"


@pytest.mark.parametrize("caller", list(Caller), ids=lambda c: c.value)
@pytest.mark.parametrize("key", list(ROUTES), ids=lambda k: f"{k[0]} {k[1]}")
def test_status(stage: Stage, key: tuple[str, str], caller: Caller) -> None:
    route = ROUTES[key]
    path, kwargs = route.request(stage.world)
    savepoint = stage.connection.begin_nested()
    stage.slot.session = Session(
        bind=stage.connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )
    try:
        method, headers = key[0], stage.headers[caller]
        if route.stream:
            with stage.client.stream(method, path, headers=headers, **kwargs) as response:
                status, body = response.status_code, ""
        else:
            response = stage.client.request(method, path, headers=headers, **kwargs)
            status, body = response.status_code, response.text[:300]
    finally:
        stage.slot.session.close()
        stage.slot.session = None
        savepoint.rollback()
    assert status == expected_status(route, caller), f"{caller.value}: {method} {path} → {body}"

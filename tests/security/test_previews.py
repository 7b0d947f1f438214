"""Probe: what a preview of a live change costs, and who pays (issue 42, finding 6).

Before: ``POST /jobs/{id}/config/preview`` replayed the job's last minutes in the API
process (about 0.5 s of CPU for two classes over two minutes), as many at once as were
sent; on SQLite each held the write gate (and SQLite's write lock) throughout, so four
previews ran one after another and a write waited 1.7 s behind them; on PostgreSQL they
shared the interpreter lock with every other request (``/health`` took up to 0.9 s).
Nothing limited how many a user sent. A filter on a ``zipf`` column recomputed the
column's whole distribution each time its selectivity was read (about 2.5 s per filter
at n = 10**6; a preview reads it three times per filter, so one such preview took 15 s).

The API tests run an application of their own on a SQLite file (the shared fixtures' one
rolled-back session cannot serve concurrent requests).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from dash import html
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.db import make_engine
from backend.main import create_app
from backend.migrate import upgrade
from backend.processes import proc_stat, running_descendants
from backend.settings import Settings
from backend.users.models import Role
from frontend.actions.tuning import prediction
from frontend.api import ApiClient
from spark_runner.scenario.columns import StreamColumn, ZipfGen
from spark_runner.scenario.predicates import parse_predicate
from tests.api_fixtures import login_headers, make_user
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token
from tests.backend.test_tuning_api import store_overloaded_samples

OPERATORS = ("ops", "other")
CHANGE = {"classes": {"ads": {"priority": 9}}}


@dataclass(frozen=True)
class World:
    """A migrated SQLite file with two operators, a job with a minute of samples
    (``busy``) and one with none (``idle``: its replay refuses at once, 422). Each test
    starts an application of its own, with fresh preview counts."""

    settings: Settings
    auth: dict[str, dict[str, str]]
    busy_id: int
    idle_id: int

    @property
    def busy(self) -> str:
        return f"/api/v1/jobs/{self.busy_id}/config/preview"

    @property
    def idle(self) -> str:
        return f"/api/v1/jobs/{self.idle_id}/config/preview"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("previews")
    settings = Settings(data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'h.db'}")
    upgrade(settings.sqlalchemy_url)
    engine = make_engine(settings.sqlalchemy_url)
    with Session(engine) as session:
        for username in OPERATORS:
            make_user(session, username, Role.OPERATOR)
    with TestClient(create_app(settings, dispatcher=RecordingDispatcher())) as client:
        auth = {username: login_headers(client, username) for username in OPERATORS}
        client.headers.update(auth["ops"])
        for name, priority, target in (("fraud", 6, 1.5), ("ads", 1, 3.0)):
            created = client.post(
                "/api/v1/classes",
                json={"name": name, "priority": priority, "delay_target_s": target},
            )
            assert created.status_code == 201, created.text
        busy, idle = (client.post("/api/v1/jobs", json={}).json()["id"] for _ in range(2))
        with Session(engine) as session:
            job_auth = _job_token(session, busy)
        store_overloaded_samples(client, busy, job_auth, seconds=60)
    engine.dispose()
    yield World(settings, auth, busy, idle)


@contextmanager
def api(world: World, **previews: Any) -> Iterator[TestClient]:
    """The application on ``world``'s database, with ``previews`` settings, started and
    stopped (its lifespan) around the block."""
    settings = world.settings.model_copy(update=previews)
    with TestClient(create_app(settings, dispatcher=RecordingDispatcher())) as client:
        yield client


def at_once(
    client: TestClient, world: World, requests: list[tuple[str, str]]
) -> list[httpx.Response]:
    """Each (user, path) previewed from a thread of its own, all sent together."""
    answers: list[httpx.Response | None] = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def send(i: int, user: str, path: str) -> None:
        start.wait()
        answers[i] = client.post(path, json=CHANGE, headers=world.auth[user])

    threads = [threading.Thread(target=send, args=(i, *r)) for i, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    done = [a for a in answers if a is not None]
    assert len(done) == len(requests), "a preview did not answer within 60 s"
    return done


def worker_processes() -> set[int]:
    """Running processes below this one that are not its children: processes forked by
    a helper process (multiprocessing's fork server) for this one."""
    me = os.getpid()
    below = running_descendants(me)
    return {pid for pid in below if (stat := proc_stat(pid)) is not None and stat.ppid != me}


def test_a_zipf_distribution_is_computed_once_per_n_and_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each preview parses the job's scenario anew: equal generators of two parses share
    one distribution, a different exponent gets its own."""
    computed: list[tuple[int, float]] = []
    weights = ZipfGen.weights

    def counted(generator: ZipfGen) -> list[float]:
        computed.append((generator.n, generator.s))
        return weights(generator)

    monkeypatch.setattr(ZipfGen, "weights", counted)

    def column(s: float) -> StreamColumn:  # a fresh parse, as each preview makes
        generator = {"kind": "zipf", "n": 50_000, "s": s}
        return StreamColumn.model_validate(
            {"name": "account", "type": "long", "generator": generator}
        )

    shares = [
        parse_predicate(text).selectivity([column(1.37)])
        for text in ("account < 10", "account >= 10 and account != 20", "account < 10")
    ]
    assert computed == [(50_000, 1.37)]
    parse_predicate("account < 10").selectivity([column(1.38)])
    assert computed == [(50_000, 1.37), (50_000, 1.38)]
    # The same shares as summing the distribution's probabilities.
    generator = column(1.37).generator
    assert isinstance(generator, ZipfGen)
    probabilities = weights(generator)
    below_10 = math.fsum(probabilities[:10])
    assert shares == pytest.approx([below_10, 1 - below_10 - probabilities[20], below_10])


def test_a_preview_beyond_the_concurrency_cap_is_refused_at_once(world: World) -> None:
    """Three previews sent together to a process that runs two at once: two replay, the
    third is answered 503 at once (not queued), with Retry-After and the bound's name."""
    with api(world, preview_concurrency=2, previews_per_user=10) as client:
        answers = at_once(client, world, [("ops", world.busy)] * 3)
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 200, 503], [a.text[:200] for a in answers]
    refused = next(a for a in answers if a.status_code == 503)
    assert int(refused.headers["Retry-After"]) > 0
    assert "preview_concurrency=2" in refused.json()["detail"]
    assert refused.elapsed.total_seconds() < min(
        a.elapsed.total_seconds() for a in answers if a.status_code == 200
    )


@pytest.mark.timing  # answered before the previews end: on a machine of its own
def test_previews_run_in_worker_processes_beside_other_requests(world: World) -> None:
    """While two previews replay, in processes of their own, ``/health`` answers and a
    write (on SQLite: through the write gate) is stored before either preview ends; the
    worker processes end with the application."""
    answered: dict[str, float] = {}
    workers: set[int] = set()
    before = worker_processes()
    with api(world, preview_concurrency=2, previews_per_user=10) as client:
        client.headers.update(world.auth["ops"])

        def meanwhile() -> None:
            # Once a replay runs (a worker process is there), or 0.2 s after they were
            # sent: a replay of the minute takes longer.
            sent = time.monotonic()
            while not workers and time.monotonic() < sent + 0.2:
                workers.update(worker_processes() - before)
                time.sleep(0.01)
            health = client.get("/api/v1/health")
            answered["health"] = time.monotonic() if health.status_code == 200 else math.inf
            write = client.post(
                "/api/v1/classes", json={"name": "meanwhile", "priority": 1, "delay_target_s": 2}
            )
            answered["write"] = time.monotonic() if write.status_code == 201 else math.inf

        other = threading.Thread(target=meanwhile)
        other.start()
        answers = at_once(client, world, [("ops", world.busy)] * 2)
        answered["previews"] = time.monotonic()
        other.join(timeout=60)
        assert [a.status_code for a in answers] == [200, 200], [a.text[:200] for a in answers]
        workers.update(worker_processes() - before)
    assert answered["health"] < answered["previews"], "/health waited for the previews"
    assert answered["write"] < answered["previews"], "the write waited for the previews"
    assert workers, "no worker process ran a replay"
    assert not workers & worker_processes(), "a worker process outlived the application"


def test_a_user_beyond_the_preview_rate_gets_429(world: World) -> None:
    """previews_per_user=3: a user's fourth preview within the window is refused with
    Retry-After (the first three are refused by the replay itself: the job has no
    samples), and the dashboard's review says why; another user's preview still runs."""
    with api(world, previews_per_user=3, preview_window_s=60) as client:
        mine = [client.post(world.idle, json=CHANGE, headers=world.auth["ops"]) for _ in range(4)]
        theirs = client.post(world.idle, json=CHANGE, headers=world.auth["other"])
        token = world.auth["ops"]["Authorization"].removeprefix("Bearer ")
        with ApiClient(str(client.base_url), token=token, transport=client._transport) as dash:
            review = prediction(dash, world.idle_id, CHANGE)
    assert [a.status_code for a in mine] == [422, 422, 422, 429], mine[-1].text
    assert 0 < int(mine[-1].headers["Retry-After"]) <= 60
    assert "previews_per_user=3" in mine[-1].json()["detail"]
    assert theirs.status_code == 422 and "no samples" in theirs.text
    assert isinstance(review, html.P)
    assert str(review.children).startswith("No prediction: previews_per_user=3 reached")

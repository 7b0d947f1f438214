"""Probe: live metric streams are bounded and end with their job or their token (issue
42, finding 4).

Before, every open ``/metrics/stream`` re-read the database every 0.2 s (the job, then
its new samples: 10 reads a second) even for a stopped job, nothing limited how many
were open, and a stream went on after its token was revoked. Now each API process caps
streams per user and in total (429 with Retry-After beyond), a stream ends once its job
has ended and its last samples were sent, and its token is checked again periodically
and at once when this process revokes a token; waiting readers (streams and ``wait_s``
long polls) share one poll of the database per process for what other processes stored.

A real uvicorn server on its own SQLite file (streams need a real connection to end or
time out); every address is loopback.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy import delete, event
from sqlalchemy.orm import Session

from backend.db import utcnow
from backend.jobs.models import Job
from backend.jobs.states import JobStatus
from backend.main import create_app
from backend.metrics.live import LiveReaders
from backend.migrate import upgrade
from backend.settings import Settings
from backend.users.models import ApiToken, Role, User
from backend.users.repository import UserRepository
from backend.users.security import DUMMY_HASH, new_token, token_digest
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample
from tests.waiting import wait_until

API = "/api/v1"
READ_TIMEOUT_S = 4.0  # a stream that should have ended and did not fails the test here
USERS = {"admin": Role.ADMIN, "ops": Role.OPERATOR, "viewer": Role.VIEWER, "leaver": Role.VIEWER}


@dataclass
class Live:
    """The served app, and a job of its own for one test (neither ended nor sending)."""

    app: FastAPI
    url: str
    job_id: int = 0
    job_auth: dict[str, str] = field(default_factory=dict)

    def login(self, username: str) -> dict[str, str]:
        """A fresh login token of ``username``, stored as a login stores it (without the
        login's deliberately slow password hash)."""
        token = new_token()
        with Session(self.app.state.engine) as session:
            user = UserRepository(session).by_username(username)
            assert user is not None
            expires_at = utcnow() + timedelta(hours=1)
            UserRepository(session).add_token(
                ApiToken(user_id=user.id, digest=token_digest(token), expires_at=expires_at)
            )
            session.commit()
        return {"Authorization": f"Bearer {token}"}

    def ingest(self, seq: int) -> None:
        answer = httpx.post(
            f"{self.url}{API}/jobs/{self.job_id}/metrics",
            json={"samples": [_sample(seq)]},
            headers=self.job_auth,
        )
        assert answer.status_code == 202, answer.text

    def end_job(self) -> None:
        """What the job watcher records when a stopped job's process has exited."""
        with Session(self.app.state.engine) as session:
            job = session.get(Job, self.job_id)
            assert job is not None
            job.move_to(JobStatus.STOPPING)
            job.move_to(JobStatus.STOPPED)
            session.commit()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """One uvicorn server for the module, with small caps and short intervals (so ends
    and revocations are seen within a test's second), its users and a class."""
    tmp_path = tmp_path_factory.mktemp("streams")
    url = f"sqlite:///{tmp_path / 'streams.db'}"
    upgrade(url)
    settings = Settings(
        data_dir=tmp_path,
        database_url=url,
        metrics_poll_s=0.05,
        metrics_token_recheck_s=0.3,
        metrics_streams_per_user=2,
        metrics_streams_total=3,
    )
    app = create_app(settings, RecordingDispatcher())
    with Session(app.state.engine) as session:
        for name, role in USERS.items():  # they never log in with a password: see login()
            session.add(User(username=name, password_hash=DUMMY_HASH, role=role.value))
        session.commit()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: server.started, 30, 0.02), "uvicorn did not start"
        served = Live(app, f"http://127.0.0.1:{port}")
        made = httpx.post(
            f"{served.url}{API}/classes",
            json={"name": "fraud", "priority": 6, "delay_target_s": 2},
            headers=served.login("ops"),
        )
        assert made.status_code == 201, made.text
        yield served
    finally:
        server.should_exit = True
        thread.join(30)
        app.state.engine.dispose()


@pytest.fixture
def live(served: Live) -> Live:
    job = httpx.post(f"{served.url}{API}/jobs", json={}, headers=served.login("ops"))
    assert job.status_code == 201, job.text
    with Session(served.app.state.engine) as session:
        job_auth = _job_token(session, job.json()["id"])
    return Live(served.app, served.url, job.json()["id"], job_auth)


class Stream:
    """One open ``/metrics/stream``: its events as ``(event, data)``, read as they come."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._lines = response.iter_lines()

    def next_event(self) -> tuple[str, dict[str, Any]]:
        kind, data = "message", ""
        for line in self._lines:
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and data:
                return kind, json.loads(data)
        raise EOFError("the stream ended")

    def rest(self) -> list[tuple[str, dict[str, Any]]]:
        """Every event until the stream ends (a read timeout if it does not)."""
        events = []
        while True:
            try:
                events.append(self.next_event())
            except EOFError:
                return events


def _open(stack: ExitStack, live: Live, auth: dict[str, str], **params: Any) -> httpx.Response:
    timeout = httpx.Timeout(10, read=READ_TIMEOUT_S)
    client = stack.enter_context(httpx.Client(base_url=live.url, timeout=timeout))
    return stack.enter_context(
        client.stream(
            "GET", f"{API}/jobs/{live.job_id}/metrics/stream", headers=auth, params=params
        )
    )


def _stream(stack: ExitStack, live: Live, auth: dict[str, str], **params: Any) -> Stream:
    response = _open(stack, live, auth, **params)
    assert response.status_code == 200, response.read()
    return Stream(response)


def test_streams_are_capped_per_user_and_in_total(live: Live) -> None:
    ops, viewer = live.login("ops"), live.login("viewer")
    with ExitStack() as first:
        _stream(first, live, ops)
        with ExitStack() as others:
            _stream(others, live, ops)
            third = _open(others, live, ops)  # a user's third stream
            assert third.status_code == 429
            third.read()
            assert "HEADROOM_METRICS_STREAMS_PER_USER" in third.json()["detail"]
            assert int(third.headers["Retry-After"]) >= 1
            _stream(others, live, viewer)
            fourth = _open(others, live, viewer)  # the process's fourth
            assert fourth.status_code == 429
            fourth.read()
            assert "HEADROOM_METRICS_STREAMS_TOTAL" in fourth.json()["detail"]
        # Closed streams give their places back.
        assert wait_until(lambda: _open_then_close(live, ops) == 200, 5, 0.05)


def _open_then_close(live: Live, auth: dict[str, str]) -> int:
    with ExitStack() as stack:
        return _open(stack, live, auth).status_code


def test_a_stream_ends_once_its_job_ended_and_its_last_samples_were_sent(live: Live) -> None:
    viewer = live.login("viewer")
    live.ingest(0)
    with ExitStack() as stack:
        stream = _stream(stack, live, viewer)
        assert stream.next_event()[1]["seq"] == 0
        live.ingest(1)
        live.end_job()
        rest = stream.rest()
    assert [(kind, data.get("seq")) for kind, data in rest] == [("sample", 1), ("end", None)]
    assert rest[-1][1]["status"] == "stopped"
    # Nothing more can come: a client that reconnects gets 204, which tells an
    # EventSource to stop reconnecting; one that missed samples gets them, then the end.
    with ExitStack() as stack:
        again = _open(stack, live, viewer, after_id=2**40)
        assert again.status_code == 204
    with ExitStack() as stack:
        replay = _stream(stack, live, viewer).rest()
    assert [data.get("seq") for _, data in replay] == [0, 1, None]
    # A long poll for news of an ended job answers at once instead of waiting.
    started = time.monotonic()
    answer = httpx.get(
        f"{live.url}{API}/jobs/{live.job_id}/metrics",
        params={"newer_than": 2**40, "wait_s": 20},
        headers=viewer,
        timeout=30,
    )
    assert answer.status_code == 200
    assert [s["seq"] for s in answer.json()["samples"]] == [0, 1]
    assert time.monotonic() - started < READ_TIMEOUT_S


def test_a_stream_ends_when_its_token_is_revoked(live: Live) -> None:
    admin = live.login("admin")
    leaver_id = next(
        u["id"]
        for u in httpx.get(f"{live.url}{API}/users", headers=admin).json()
        if u["username"] == "leaver"
    )
    revocations = {
        # Logging out in this process: its streams hear of it at once.
        "logout": lambda auth: httpx.post(f"{live.url}{API}/auth/logout", headers=auth),
        # Another API process deleted the token: seen at the next periodic check.
        "elsewhere": lambda auth: _delete_token(live, auth),
        "deactivated": lambda auth: httpx.patch(
            f"{live.url}{API}/users/{leaver_id}", json={"active": False}, headers=admin
        ),
    }
    for why, revoke in revocations.items():
        leaver = live.login("leaver")
        with ExitStack() as stack:
            stream = _stream(stack, live, leaver)
            live.ingest(len(why))  # some activity before the revocation
            assert stream.next_event()[0] == "sample"
            revoke(leaver)
            rest = stream.rest()
        assert rest and rest[-1][0] == "end", why
        assert "revoked" in rest[-1][1]["reason"], why


def _delete_token(live: Live, auth: dict[str, str]) -> None:
    digest = token_digest(auth["Authorization"].removeprefix("Bearer "))
    with Session(live.app.state.engine) as session:
        session.execute(delete(ApiToken).where(ApiToken.digest == digest))
        session.commit()


def test_idle_streams_read_the_database_rarely(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """Idle streams on a job that is neither sending nor ended, at the default intervals:
    database reads (SELECT statements) per stream and second."""
    streams, window_s = 4, 1.0
    defaults = {
        name: Settings.model_fields[name].default
        for name in ("metrics_poll_s", "metrics_token_recheck_s", "metrics_streams_total")
    }
    settings = live.app.state.settings.model_copy(
        update={**defaults, "metrics_streams_per_user": streams}
    )
    monkeypatch.setattr(live.app.state, "live_readers", LiveReaders.from_settings(settings))
    viewer = live.login("viewer")
    reads: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            reads.append(statement)

    with ExitStack() as stack:
        for _ in range(streams):
            _stream(stack, live, viewer)
        time.sleep(0.3)  # every stream past its opening read
        event.listen(live.app.state.engine, "before_cursor_execute", count)
        time.sleep(window_s)
        event.remove(live.app.state.engine, "before_cursor_execute", count)
    per_stream_s = len(reads) / streams / window_s
    assert per_stream_s <= 2.0, f"{per_stream_s:.2f} reads per idle stream per second"

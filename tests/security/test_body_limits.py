"""Probe (issue 42, finding 1): one unauthenticated request stalled the API for ~25 s.

``POST /api/v1/auth/login`` with a 50 MB JSON body (no token) was read whole, parsed on
the event loop (22.6 s of CPU) and echoed back whole in its 422; a 2 MB body held
``/health`` for 0.9 s. Only JSON bodies were even looked at, chunked ones not bounded.

These probes drive the real app: at the ASGI level, counting the body bytes the app pulls
(a body over its route's limit is refused before the app reads past the limit); through
the test client (errors echo only an excerpt of an input); and, for the issue's "done
when", a real uvicorn process sent the probe's 50 MB body with a Content-Length and again
chunked, while ``/health`` is measured.
"""

from __future__ import annotations

import asyncio
import gc
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.types import Message

from backend.api import body_guard
from backend.errors import parameter_error_detail
from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from spark_runner.core.errors import ParameterError
from tests.backend.test_jobs_api import _sample
from tests.security.test_inputs import _free_port

MB = 1_000_000
PROBE_BYTES = 50 * MB
LOGIN = "/api/v1/auth/login"
INGEST = "/api/v1/jobs/{job_id}/metrics"
_JSON_TEXT = st.recursive(
    st.sampled_from(["NaN", "1e400", "0" * 20, '"\\"]"', '"a[b"', "1", "true"]),
    lambda inner: (
        st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
        | st.lists(inner, max_size=3).map(
            lambda xs: "{" + ",".join(f'"k{i}]":{x}' for i, x in enumerate(xs)) + "}"
        )
    ),
    max_leaves=40,
).map(lambda text: ("[" * 30 + text + "]" * 30).encode())
"""Bodies near the depth limit, with what the screen looks for: risky numbers, brackets
inside strings and keys, escaped quotes."""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    """The real app; no test here reaches its database."""
    data_dir = tmp_path_factory.mktemp("body-limits")
    return create_app(Settings(data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'h.db'}"))


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    pulled: int
    """Body bytes the app pulled through ``receive``."""

    def detail(self) -> Any:
        return json.loads(self.body)["detail"]


async def acall(
    app: FastAPI,
    method: str,
    path: str,
    chunks: Iterable[bytes],
    headers: dict[str, str],
) -> Answer:
    """One request through the app's ASGI interface, its body pulled chunk by chunk
    (nothing is produced before the app asks for it)."""
    pieces = iter(chunks)
    upcoming = next(pieces, None)
    pulled = 0
    sent: list[Message] = []

    async def receive() -> Message:
        nonlocal upcoming, pulled
        if upcoming is None:
            return {"type": "http.disconnect"}
        chunk, upcoming = upcoming, next(pieces, None)
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": upcoming is not None}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50_000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    found = {k.decode(): v.decode() for k, v in start["headers"]}
    return Answer(start["status"], found, body, pulled)


def call(
    app: FastAPI, method: str, path: str, chunks: Iterable[bytes], headers: dict[str, str]
) -> Answer:
    return asyncio.run(acall(app, method, path, chunks, headers))


def filler(total: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """``total`` bytes in chunks, made as they are pulled."""
    piece = b"x" * chunk
    for _ in range(total // chunk):
        yield piece
    yield b"x" * (total % chunk)


def _assert_refused(answer: Answer, route: str) -> None:
    assert answer.status == 413, (answer.status, answer.body[:300])
    detail = answer.detail()
    limit = json.loads(answer.body)["limit_bytes"]
    assert route in detail and f"at most {limit} bytes" in detail, detail
    assert answer.headers.get("connection") == "close"  # the rest is never read


@pytest.mark.parametrize(
    ("method", "path", "route", "content_type"),
    [
        ("POST", LOGIN, f"POST {LOGIN}", "application/json"),
        ("POST", LOGIN, f"POST {LOGIN}", "text/plain"),
        ("POST", LOGIN, f"POST {LOGIN}", "multipart/form-data; boundary=x"),
        ("GET", "/api/v1/health", "GET /api/v1/health", None),
        ("POST", "/api/v1/jobs/7/metrics", f"POST {INGEST}", "application/json"),
        ("PUT", "/api/v1/scenarios/3", "PUT /api/v1/scenarios/{scenario_id}", "application/json"),
        ("POST", "/api/v1/nowhere", "POST /api/v1/nowhere", "application/json"),
    ],
)
def test_a_content_length_over_the_routes_limit_is_refused_before_a_byte_is_read(
    app: FastAPI, method: str, path: str, route: str, content_type: str | None
) -> None:
    headers = {"content-length": str(PROBE_BYTES)}
    if content_type:
        headers["content-type"] = content_type
    answer = call(app, method, path, filler(PROBE_BYTES), headers)
    _assert_refused(answer, route)
    assert answer.pulled == 0


@pytest.mark.parametrize(
    ("path", "route", "content_type", "chunk"),
    [
        (LOGIN, f"POST {LOGIN}", "application/json", 16 * 1024),
        (LOGIN, f"POST {LOGIN}", "application/octet-stream", 16 * 1024),
        ("/api/v1/jobs/7/metrics", f"POST {INGEST}", "application/json", 1024 * 1024),
    ],
)
def test_a_chunked_body_is_refused_as_soon_as_the_bytes_read_pass_the_limit(
    app: FastAPI, path: str, route: str, content_type: str, chunk: int
) -> None:
    answer = call(app, "POST", path, filler(PROBE_BYTES, chunk), {"content-type": content_type})
    _assert_refused(answer, route)
    limit = json.loads(answer.body)["limit_bytes"]
    assert limit < answer.pulled <= limit + chunk  # it stopped at the chunk that passed it


def test_each_route_has_its_own_limit(app: FastAPI) -> None:
    """A 1 MB batch of samples is within the ingest route's limit (it gets as far as the
    token check), and far beyond the login's."""
    batch = json.dumps({"samples": [_sample(seq) for seq in range(6_000)]}).encode()
    assert len(batch) > MB
    headers = {"content-type": "application/json", "content-length": str(len(batch))}
    ingest = call(app, "POST", "/api/v1/jobs/7/metrics", [batch], headers)
    assert ingest.status == 401, ingest.body[:300]
    login = call(app, "POST", LOGIN, [batch], headers)
    _assert_refused(login, f"POST {LOGIN}")


def _small_error(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text[:300]
    assert len(response.content) < 3_000, response.text[:3_000]
    items: list[dict[str, Any]] = response.json()["detail"]
    for item in items:
        echoed = json.dumps(item["input"], ensure_ascii=False)
        assert len(echoed) <= 82 and len(item["msg"]) <= 1_000, item
        assert all(len(str(part)) <= 80 for part in item["loc"]), item
    return items


@pytest.mark.parametrize("migrated_engine", ["sqlite"], indirect=True)
def test_an_error_echoes_only_an_excerpt_of_a_2_mb_input(client: TestClient) -> None:
    big = "é" * (2 * MB)
    [item] = _small_error(client.post("/api/v1/scenarios", json={"yaml": big}))
    assert item["loc"] == ["body", "yaml"] and "at most 1000000 characters" in item["msg"]
    assert item["input"].startswith("éé")
    plain = {"content-type": "text/plain"}  # validated as bytes
    [item] = _small_error(client.post("/api/v1/scenarios", content=b"x" * 2 * MB, headers=plain))
    stream = {"name": "s", "columns": [{"name": "amount", "type": "double"}]}
    [item] = _small_error(client.post("/api/v1/streams", json={**stream, "description": big}))
    assert item["loc"] == ["body", "description"]
    [item] = _small_error(client.post("/api/v1/streams", json={**stream, big: 1}))
    assert item["type"] == "extra_forbidden"  # a 2 MB key is a location: cut too
    created = client.post("/api/v1/classes", json={"name": "c", "priority": 1, "delay_target_s": 1})
    assert created.status_code == 201, created.text
    operator = {"kind": "filter", "predicate": "value > 0.5 " + "x" * MB}
    query = {"name": "q", "source": "s", "operators": [operator]}
    # The rule quotes the predicate: its start and its end are kept.
    _small_error(client.post(f"/api/v1/classes/{created.json()['id']}/queries", json=query))


def test_a_core_rule_echoes_an_excerpt_and_never_a_secret() -> None:
    detail = parameter_error_detail(ParameterError("name", "x" * (2 * MB), "must be short"))
    assert len(json.dumps(detail)) < 400 and detail["msg"].endswith("must be short")
    secret = parameter_error_detail(ParameterError("password", "hunter2-4711", "is too weak"))
    assert "4711" not in json.dumps(secret)


@pytest.fixture(scope="module")
def batch() -> bytes:
    """10 MB of samples: within the ingest route's limit."""
    return json.dumps({"samples": [_sample(seq) for seq in range(55_000)]}).encode()


@pytest.mark.parametrize(
    ("spoil", "status"),
    [
        (lambda body: body, 401),  # the token is checked after the parse
        (lambda body: body[:-1], 422),  # cut short: not JSON
        (lambda body: body.replace(b"fraud", b"fr\xffud"), 422),  # not UTF-8
    ],
    ids=["batch", "cut-short", "not-utf-8"],
)
def test_a_large_body_is_screened_and_parsed_off_the_event_loop(
    app: FastAPI,
    monkeypatch: pytest.MonkeyPatch,
    batch: bytes,
    spoil: Callable[[bytes], bytes],
    status: int,
) -> None:
    """A 10 MB body is screened and parsed in a worker thread, once, and answered 422 there
    if it is no JSON: FastAPI's own json.loads of it held the event loop for ~400 ms, and
    the screen for ~300 ms more."""
    on_the_loop: list[str] = []
    loads, screen = json.loads, body_guard.may_break_rules

    def spy_loads(text: str | bytes, **options: Any) -> Any:
        if len(text) > MB and threading.current_thread() is threading.main_thread():
            on_the_loop.append("json.loads")
        return loads(text, **options)

    def spy_screen(body: bytes, *args: Any) -> bool:
        if threading.current_thread() is threading.main_thread():
            on_the_loop.append("may_break_rules")
        return screen(body, *args)

    monkeypatch.setattr(json, "loads", spy_loads)
    monkeypatch.setattr(body_guard, "may_break_rules", spy_screen)
    body = spoil(batch)
    assert len(body) > 10 * MB
    headers = {"content-type": "application/json", "content-length": str(len(body))}
    answer = call(app, "POST", "/api/v1/jobs/7/metrics", [body], headers)
    assert answer.status == status, answer.body[:300]
    if status == 422:
        [item] = answer.detail()
        assert item["type"] == "json_invalid" and item["loc"][0] == "body", item
    assert on_the_loop == []


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200) | _JSON_TEXT, st.integers(1, 40))
def test_the_screen_answers_the_same_slice_by_slice(body: bytes, slice_bytes: int) -> None:
    """A large body is screened in slices (so the thread screening it lets the loop run
    between them); the answer is the one the whole body gets."""
    whole = body_guard.may_break_rules(body, slice_bytes=len(body) + 1)
    assert body_guard.may_break_rules(body, slice_bytes=slice_bytes) == whole


# --- the "done when": a real uvicorn process ---------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A real API process (uvicorn) on a migrated SQLite database."""
    data_dir = tmp_path_factory.mktemp("body-limits-server")
    settings = Settings(
        data_dir=data_dir,
        database_url=f"sqlite:///{data_dir / 'h.db'}",
        api_host="127.0.0.1",
        api_port=_free_port(),
    )
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings)
    stack.start_api()
    try:
        stack.wait_healthy()
        yield settings
    finally:
        stack.stop()


def _login_probe(chunked: bool) -> tuple[bytes, Iterator[bytes]]:
    """The probe's request: a login whose username is 50 MB of numbers; its head and its
    body, made as it is sent."""
    start, end = b'{"username": [', b'0], "password": "x"}'
    piece = b"0," * (32 * 1024)
    count = (PROBE_BYTES - len(start) - len(end)) // len(piece)
    parts = [start, *[piece] * count, end]
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {sum(map(len, parts))}"
    head = (
        f"POST {LOGIN} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{framing}\r\n\r\n"
    ).encode()
    if not chunked:
        return head, iter(parts)
    return head, (b"%x\r\n%b\r\n" % (len(part), part) for part in [*parts, b""])


def _send_until_answered(
    settings: Settings, head: bytes, body: Iterator[bytes]
) -> tuple[float, bytes, int]:
    """Send ``head`` and then ``body`` until the server answers or closes the connection:
    the seconds from the first byte sent to that, the answer's first bytes (empty when
    closed) and the body bytes sent."""
    with socket.create_connection((settings.api_host, settings.api_port)) as sock:
        sock.setblocking(False)
        started = time.perf_counter()
        pending, sent = head, -len(head)
        while time.perf_counter() - started < 5.0:
            readable, writable, _ = select.select([sock], [sock] if pending else [], [], 0.05)
            try:
                if readable:
                    return time.perf_counter() - started, sock.recv(4096), sent
                if writable:
                    count = sock.send(pending)
                    sent += count
                    pending = pending[count:] or next(body, b"")
            except (ConnectionResetError, BrokenPipeError):
                return time.perf_counter() - started, b"", sent
    raise AssertionError(f"no answer within 5 s ({sent} bytes of the body sent)")


class HealthProbe(threading.Thread):
    """Times ``GET /health``, one request after the other, until stopped."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(daemon=True)
        self.url = f"{settings.public_api_url}/api/v1/health"
        self.seconds: list[float] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=10) as client:
            client.get(self.url)  # the connection is made before timing
            while not self.stopped.is_set():
                before = time.perf_counter()
                assert client.get(self.url).status_code == 200
                self.seconds.append(time.perf_counter() - before)


@contextmanager
def _no_collection_pauses() -> Iterator[None]:
    """The timed stretch without this process's cyclic garbage collection: the probes time
    the server, and a full collection in a test process that has run the suite's Spark
    tests before pauses every thread here for tenths of a second (3 million tracked
    objects take 0.5 s on this machine)."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.timing
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_the_probes_50_mb_login_is_refused_at_once_while_health_answers(
    server: Settings, chunked: bool
) -> None:
    health = HealthProbe(server)
    with _no_collection_pauses():
        health.start()
        time.sleep(0.1)
        elapsed_s, answer, sent = _send_until_answered(server, *_login_probe(chunked))
        time.sleep(0.2)  # /health just after, too
        health.stopped.set()
        health.join(15)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert elapsed_s < 0.1, (elapsed_s, sent)
    assert sent < PROBE_BYTES // 10  # the rest was never sent: the server had answered
    assert len(health.seconds) >= 5 and max(health.seconds) < 0.05, health.seconds

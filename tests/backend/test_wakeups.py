"""A stored change wakes its waiting readers at once: the job's long poll answers a new
configuration version, a live stream pushes newly ingested samples, and a live view's
metrics long poll answers them, without waiting for their re-read interval (set to 30 s
here, so only the bell can answer in time; the metrics readers' shared poll through
``metrics_poll_s``).

A real app on its own SQLite file (not the rolled-back test session): the waiting request
and the change run concurrently on separate connections, as in production.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.bell import bell, config_key, metrics_key
from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings
from backend.tuning import routes as tuning_routes
from backend.users.models import Role
from tests.api_fixtures import login_headers, make_user
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample
from tests.waiting import wait_until

RECHECK_S = 30.0  # far beyond every deadline below


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[TestClient, int, dict[str, str]]]:
    url = f"sqlite:///{tmp_path / 'wake.db'}"
    upgrade(url)
    settings = Settings(data_dir=tmp_path, database_url=url, metrics_poll_s=RECHECK_S)
    app = create_app(settings, RecordingDispatcher())
    with Session(app.state.engine) as session:
        make_user(session, "ops", Role.OPERATOR)
    with TestClient(app) as client:
        client.headers.update(login_headers(client, "ops"))
        created = client.post(
            "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2}
        )
        assert created.status_code == 201, created.text
        job_id = client.post("/api/v1/jobs", json={}).json()["id"]
        with Session(app.state.engine) as session:
            job_auth = _job_token(session, job_id)
        yield client, job_id, job_auth
    app.state.engine.dispose()


def test_long_poll_answers_as_soon_as_a_version_is_stored(
    live: tuple[TestClient, int, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tuning_routes, "RECHECK_S", RECHECK_S)
    client, job_id, job_auth = live
    answer: dict[str, object] = {}

    def poll() -> None:
        response = client.get(
            f"/api/v1/jobs/{job_id}/control",
            params={"after_version": 0, "wait_s": 20},
            headers=job_auth,
        )
        answer.update(status=response.status_code, body=response.json(), at=time.monotonic())

    poller = threading.Thread(target=poll)
    poller.start()
    assert wait_until(lambda: bell.listening(config_key(job_id)) == 1, 10, 0.01)
    stored_at = time.monotonic()
    patched = client.patch(
        f"/api/v1/jobs/{job_id}/config", json={"classes": {"fraud": {"delay_target_s": 3}}}
    )
    assert patched.status_code == 200, patched.text
    poller.join(25)
    assert answer["status"] == 200
    assert answer["body"]["config"]["version"] == 1  # type: ignore[index]
    assert float(answer["at"]) - stored_at < 5  # type: ignore[arg-type]
    assert bell.listening(config_key(job_id)) == 0  # the poll left


def test_stream_pushes_an_ingested_sample_at_once(
    live: tuple[TestClient, int, dict[str, str]],
) -> None:
    client, job_id, job_auth = live
    ingested_at: list[float] = []

    def ingest() -> None:
        assert wait_until(lambda: bell.listening(metrics_key(job_id)) == 1, 10, 0.01)
        ingested_at.append(time.monotonic())
        response = client.post(
            f"/api/v1/jobs/{job_id}/metrics", json={"samples": [_sample(0)]}, headers=job_auth
        )
        assert response.status_code == 202, response.text

    sender = threading.Thread(target=ingest)
    with client.stream("GET", f"/api/v1/jobs/{job_id}/metrics/stream") as response:
        sender.start()
        for line in response.iter_lines():
            if line.startswith("data: "):
                sample = json.loads(line[6:])
                break
        received_at = time.monotonic()
    sender.join(10)
    assert sample["class_name"] == "fraud" and sample["seq"] == 0
    assert received_at - ingested_at[0] < 5


def test_metrics_long_poll_answers_when_a_newer_sample_is_stored(
    live: tuple[TestClient, int, dict[str, str]],
) -> None:
    """A live view showing sample 0 asks for its look-back window and waits for news."""
    client, job_id, job_auth = live
    url = f"/api/v1/jobs/{job_id}/metrics"
    first = _sample(0)
    assert client.post(url, json={"samples": [first]}, headers=job_auth).status_code == 202
    shown_t = float(first["t"])  # type: ignore[arg-type]
    # Nothing to wait for: the window already has a sample (no newer_than) → at once.
    assert [s["seq"] for s in client.get(url, params={"wait_s": 20}).json()["samples"]] == [0]
    answer: dict[str, object] = {}

    def poll() -> None:
        window = {"since": shown_t - 10, "newer_than": shown_t, "wait_s": 20}
        response = client.get(url, params=window)
        answer.update(status=response.status_code, body=response.json(), at=time.monotonic())

    poller = threading.Thread(target=poll)
    poller.start()
    assert wait_until(lambda: bell.listening(metrics_key(job_id)) == 1, 10, 0.01)
    stored_at = time.monotonic()
    stored = client.post(url, json={"samples": [_sample(1)]}, headers=job_auth)
    assert stored.status_code == 202, stored.text
    poller.join(25)
    assert answer["status"] == 200
    assert [s["seq"] for s in answer["body"]["samples"]] == [0, 1]  # type: ignore[index]
    assert float(answer["at"]) - stored_at < 5  # type: ignore[arg-type]


def test_metrics_long_poll_rules(live: tuple[TestClient, int, dict[str, str]]) -> None:
    client, job_id, _ = live
    url = f"/api/v1/jobs/{job_id}/metrics"
    for field, bad in (("wait_s", -1), ("wait_s", 31), ("wait_s", "soon"), ("newer_than", "x")):
        response = client.get(url, params={field: bad})
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == ["query", field]
    assert client.get("/api/v1/jobs/4242/metrics", params={"wait_s": 5}).status_code == 404

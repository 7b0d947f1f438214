"""Probe: a job's ingest token and the samples it may post (issue 11, item 3).

Before: a failed job's token still posted samples; one sample with ``t = 1e308`` blanked
every ``last_s`` window on PostgreSQL, and ``response_time_max_s = 1e308`` poisoned the
run summary. Now the token is revoked when the job reaches a terminal state (in
``Job.move_to``, the one place a status changes), every ``t`` must lie between the job's
creation and the server's clock (each widened by ``CLOCK_SKEW_S``), and every count and
time field has a finite, non-negative range a real run stays within.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.jobs import service
from backend.jobs.models import Job
from backend.jobs.states import JobStatus
from backend.metrics.schemas import CLOCK_SKEW_S, MAX_RESPONSE_TIME_S
from backend.settings import Settings
from backend.users.security import new_token, token_digest
from tests.backend.test_jobs_api import RecordingDispatcher


@pytest.fixture
def job_id(client: TestClient) -> int:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    made = client.post(
        "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1}
    )
    assert made.status_code == 201, made.text
    job = client.post("/api/v1/jobs", json={})
    assert job.status_code == 201, job.text
    return int(job.json()["id"])


def launched(db_session: Session, job_id: int) -> dict[str, str]:
    """What the launch task does (without a process): a fresh token, its digest stored,
    the job starting."""
    token = new_token()
    job = db_session.get(Job, job_id)
    assert job is not None
    job.ingest_token_digest = token_digest(token)
    job.move_to(JobStatus.STARTING)
    db_session.commit()
    return {"Authorization": f"Bearer {token}"}


def sample(seq: int, **fields: object) -> dict[str, object]:
    return {
        "class_name": "fraud",
        "seq": seq,
        "t": time.time(),
        "period_s": 1.0,
        "arrived_count": 100,
        "output_count": 90,
        "arrival_rate": 100.0,
        "response_time_mean_s": 0.2,
        "response_time_max_s": 0.5,
        **fields,
    }


def post(
    client: TestClient, job_id: int, auth: dict[str, str], *samples: dict[str, object]
) -> httpx.Response:
    response: httpx.Response = client.post(
        f"/api/v1/jobs/{job_id}/metrics", json={"samples": list(samples)}, headers=auth
    )
    return response


def test_a_stopped_jobs_token_is_revoked(
    client: TestClient, db_session: Session, job_id: int, tmp_path: Path
) -> None:
    auth = launched(db_session, job_id)
    assert post(client, job_id, auth, sample(0)).status_code == 202
    assert client.get(f"/api/v1/jobs/{job_id}/control", headers=auth).status_code in (200, 204)

    assert client.post(f"/api/v1/jobs/{job_id}/stop").status_code == 202
    # The watchdog finds no process and records the stop (as it does in production).
    service.watch(db_session, Settings(data_dir=tmp_path), job_id)
    db_session.commit()
    assert client.get(f"/api/v1/jobs/{job_id}").json()["status"] == "stopped"

    refused = post(client, job_id, auth, sample(1))
    assert refused.status_code == 401, refused.text
    assert client.get(f"/api/v1/jobs/{job_id}/control", headers=auth).status_code == 401
    assert [s["seq"] for s in client.get(f"/api/v1/jobs/{job_id}/metrics").json()["samples"]] == [0]


def test_a_failed_jobs_token_is_revoked(
    client: TestClient, db_session: Session, job_id: int
) -> None:
    auth = launched(db_session, job_id)
    assert post(client, job_id, auth, sample(0)).status_code == 202
    job = db_session.get(Job, job_id)
    assert job is not None
    job.move_to(JobStatus.FAILED)  # what the watchdog does when the process dies
    db_session.commit()
    assert job.ingest_token_digest is None and job.stopped_at is not None
    assert post(client, job_id, auth, sample(1)).status_code == 401


@pytest.mark.parametrize(
    ("t", "why"),
    [
        (1e308, "far future"),
        (time.time() + 3600, "an hour ahead"),
        (1.0, "1970"),
        (time.time() - 3600, "an hour before the job existed"),
    ],
    ids=["far future", "an hour ahead", "1970", "an hour before the job existed"],
)
def test_t_outside_the_run_is_refused(
    client: TestClient, db_session: Session, job_id: int, t: float, why: str
) -> None:
    auth = launched(db_session, job_id)
    refused = post(client, job_id, auth, sample(0), sample(1, t=t))
    assert refused.status_code == 422, (why, refused.text)
    [item] = refused.json()["detail"]
    assert item["loc"] == ["body", "samples[1].t"], item
    assert "must lie between the job's creation" in item["msg"]
    assert f"widened by {CLOCK_SKEW_S:g} s" in item["msg"]
    # Nothing of the batch is stored.
    assert client.get(f"/api/v1/jobs/{job_id}/metrics").json()["samples"] == []


def test_t_within_the_clock_skew_is_accepted(
    client: TestClient, db_session: Session, job_id: int
) -> None:
    auth = launched(db_session, job_id)
    ahead = sample(0, t=time.time() + CLOCK_SKEW_S / 2)
    assert post(client, job_id, auth, ahead).status_code == 202


@pytest.mark.parametrize(
    ("field", "value", "bound"),
    [
        ("response_time_max_s", 1e308, str(int(MAX_RESPONSE_TIME_S))),
        ("response_time_mean_s", MAX_RESPONSE_TIME_S + 1, str(int(MAX_RESPONSE_TIME_S))),
        ("violation_max_s", 1e12, str(int(MAX_RESPONSE_TIME_S))),
        ("period_s", 1e9, "3600"),
        ("arrival_rate", 1e300, "1000000000"),
        ("waiting_count", 2**40, "2147483647"),
        ("arrived_count", 2**40, "2147483647"),
        ("load", -1.0, "0"),
    ],
)
def test_count_and_time_fields_beyond_a_real_run_are_refused_with_the_bound(
    client: TestClient, db_session: Session, job_id: int, field: str, value: float, bound: str
) -> None:
    auth = launched(db_session, job_id)
    refused = post(client, job_id, auth, sample(0, **{field: value}))
    assert refused.status_code == 422, refused.text
    [item] = refused.json()["detail"]
    assert item["loc"] == ["body", "samples", "0", field], item
    assert bound in item["msg"], item

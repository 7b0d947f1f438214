"""A job's control-action log: ingest (a re-post with the verdict replaces the action),
the bounds an action must keep, and the log an operator reads."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.backend.test_jobs_api import SAMPLE_EPOCH_S, RecordingDispatcher, _job_token


@pytest.fixture
def job(client: TestClient, db_session: Session) -> tuple[int, dict[str, str]]:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post(
        "/api/v1/classes",
        json={"name": "fraud", "priority": 6, "delay_target_s": 1.5, "tau3": 0.9},
    )
    client.post(
        "/api/v1/classes", json={"name": "ads", "priority": 1, "delay_target_s": 3, "tau0": 0.1}
    )
    job_id = int(client.post("/api/v1/jobs", json={}).json()["id"])
    return job_id, _job_token(db_session, job_id)


def scale_out(seq: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "seq": seq,
        "at_s": SAMPLE_EPOCH_S + seq,
        "kind": "scale_out",
        "usage": 1.3,
        "threshold": 0.9,
        "held_s": 10.0,
        "executors_before": 1,
        "executors_after": 3,
        "shed_before": 0.2,
        "shed_after": 0.05,
        **extra,
    }


def shed_more(seq: int, class_name: str = "ads") -> dict[str, Any]:
    return {
        "seq": seq,
        "at_s": SAMPLE_EPOCH_S + seq,
        "kind": "shed_more",
        "class_name": class_name,
        "usage": 1.4,
        "manager_state": "overloaded",
        "shed_before": 0.0,
        "shed_after": 0.3,
    }


VERDICT = {
    "outcome": "improved",
    "periods": 5,
    "violation_before_s": 1.2,
    "violation_after_s": 0.0,
    "loss_before": 0.2,
    "loss_after": 0.0,
}


def test_an_action_is_posted_then_judged_and_the_log_reads_oldest_first(
    client: TestClient, job: tuple[int, dict[str, str]]
) -> None:
    job_id, token = job
    url = f"/api/v1/jobs/{job_id}/actions"
    posted = client.post(url, json={"actions": [scale_out(), shed_more(1)]}, headers=token)
    assert posted.status_code == 202, posted.text
    log = client.get(url).json()
    assert [(a["seq"], a["kind"], a["verdict"]) for a in log["actions"]] == [
        (0, "scale_out", None),
        (1, "shed_more", None),
    ]
    # the job's thresholds: the lowest of its classes' (fraud's tau3, ads' tau0)
    assert log["thresholds"] == {"tau0": 0.1, "tau1": 0.4, "tau2": 0.8, "tau3": 0.9}
    again = client.post(url, json={"actions": [scale_out(verdict=VERDICT)]}, headers=token)
    assert again.status_code == 202
    log = client.get(url).json()
    assert len(log["actions"]) == 2 and log["actions"][0]["verdict"] == VERDICT
    assert log["truncated"] is False
    only = client.get(url, params={"kind": "shed_more", "class_name": "ads"}).json()
    assert [a["seq"] for a in only["actions"]] == [1]
    newest = client.get(url, params={"limit": 1}).json()
    assert [a["seq"] for a in newest["actions"]] == [1] and newest["truncated"] is True


@pytest.mark.parametrize(
    ("action", "field", "words"),
    [
        (scale_out(kind="scale_sideways"), "kind", "scale_out"),
        (scale_out(usage=-1), "usage", "greater than or equal to 0"),
        (scale_out(shed_after=1.5), "shed_after", "less than or equal to 1"),
        (scale_out(executors_after=10_001), "executors_after", "10000"),
        (scale_out(threshold=0), "threshold", "greater than 0"),
        (scale_out(verdict={**VERDICT, "outcome": "great"}), "outcome", "improved"),
    ],
)
def test_a_broken_action_is_422_naming_the_field(
    client: TestClient,
    job: tuple[int, dict[str, str]],
    action: dict[str, Any],
    field: str,
    words: str,
) -> None:
    job_id, token = job
    response = client.post(
        f"/api/v1/jobs/{job_id}/actions", json={"actions": [action]}, headers=token
    )
    assert response.status_code == 422, response.text
    [detail] = response.json()["detail"]
    assert detail["loc"][-1] == field and words in detail["msg"], detail
    assert client.get(f"/api/v1/jobs/{job_id}/actions").json()["actions"] == []


def test_an_action_of_another_class_or_time_is_refused(
    client: TestClient, job: tuple[int, dict[str, str]]
) -> None:
    job_id, token = job
    url = f"/api/v1/jobs/{job_id}/actions"
    stranger = client.post(url, json={"actions": [shed_more(0, "nobody")]}, headers=token)
    assert stranger.status_code == 409 and "'nobody' is not a class" in stranger.text
    early = client.post(url, json={"actions": [scale_out(at_s=1_000.0)]}, headers=token)
    assert early.status_code == 422
    assert early.json()["detail"][0]["loc"] == ["body", "actions[0].at_s"]


def test_only_the_jobs_own_token_may_post(
    client: TestClient, job: tuple[int, dict[str, str]]
) -> None:
    job_id, _ = job
    response = client.post(
        f"/api/v1/jobs/{job_id}/actions",
        json={"actions": [scale_out()]},
        headers={"Authorization": "Bearer not-the-token"},
    )
    assert response.status_code == 401
    assert client.get(f"/api/v1/jobs/{job_id + 1000}/actions").status_code == 404

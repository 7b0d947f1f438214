"""Probe: an ``Idempotency-Key`` stands for one request (issue 11, item 10).

Before, a key reused with a different body silently returned the first job: the caller
believed a new job ran with its new settings. Now the same key with the same body returns
the first job (200, nothing launched again) and with another body is a 422, as payment
APIs answer.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.backend.test_jobs_api import RecordingDispatcher


def test_a_key_reused_for_another_body_is_refused(client: TestClient) -> None:
    dispatcher = RecordingDispatcher()
    client.app.state.dispatcher = dispatcher  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1})
    key = {"Idempotency-Key": "run-42"}

    first = client.post("/api/v1/jobs", json={"rate_per_s": 100}, headers=key)
    assert first.status_code == 201, first.text
    again = client.post("/api/v1/jobs", json={"rate_per_s": 100}, headers=key)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]

    other = client.post("/api/v1/jobs", json={"rate_per_s": 900}, headers=key)
    assert other.status_code == 422, other.text
    [item] = other.json()["detail"]
    assert item["loc"] == ["header", "Idempotency-Key"], item
    assert "Idempotency-Key: 'run-42' was used for another request" in item["msg"]
    assert f"job {first.json()['id']}" in item["msg"]
    assert dispatcher.launched == [first.json()["id"]]
    assert len(client.get("/api/v1/jobs").json()) == 1


def test_the_same_body_with_defaults_spelled_out_is_the_same_request(
    client: TestClient,
) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1})
    key = {"Idempotency-Key": "run-43"}
    first = client.post("/api/v1/jobs", json={}, headers=key)
    same = client.post("/api/v1/jobs", json={"rate_per_s": 200.0}, headers=key)
    assert same.status_code == 200 and same.json()["id"] == first.json()["id"]

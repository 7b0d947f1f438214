"""Run summaries (pure) and the history endpoints."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.history.summary import summarize
from spark_runner.job.samples import MetricSample
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample


def _s(seq: int, **fields: object) -> MetricSample:
    base: dict[str, object] = {
        "class_name": "ads",
        "seq": seq,
        "t": 100.0 + seq,
        "period_s": 1.0,
        "arrival_rate": 100.0,
        "arrived_count": 100,
    }
    return MetricSample(**{**base, **fields})  # type: ignore[arg-type]


def test_summary_weights_by_output_and_compares_with_the_oracle() -> None:
    samples = [
        _s(
            0,
            output_count=10,
            response_time_mean_s=1.0,
            response_time_max_s=2.0,
            response_time_p95_s=1.8,
            shed_count=20,
            shed_fraction=0.2,
            oracle_shed_fraction=0.1,
        ),
        _s(
            1,
            output_count=30,
            response_time_mean_s=3.0,
            response_time_max_s=5.0,
            response_time_p95_s=4.0,
            shed_count=10,
            shed_fraction=0.1,
            oracle_shed_fraction=0.1,
        ),
    ]
    [ads] = summarize(samples, {"ads": 2.5})
    assert ads.mean_response_time_s == pytest.approx(2.5)  # (10·1 + 30·3) / 40
    assert ads.p95_response_time_s == 4.0 and ads.max_response_time_s == 5.0
    assert ads.loss_fraction == pytest.approx(30 / 200)
    assert ads.oracle_loss_fraction == pytest.approx(0.1)
    assert ads.oracle_gap == pytest.approx(1.5)
    assert ads.max_violation_s == pytest.approx(2.5)
    assert ads.late_period_fraction == pytest.approx(0.5)
    assert ads.mean_violation_s == pytest.approx(30 * 0.5 / 40)


def test_class_without_samples_is_listed_empty() -> None:
    [empty] = summarize([], {"fraud": 1.0})
    assert empty.periods == 0 and empty.mean_response_time_s is None


def test_summary_and_compare_endpoints(client: TestClient, db_session: Session) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    first = client.post("/api/v1/jobs", json={}).json()["id"]
    second = client.post("/api/v1/jobs", json={}).json()["id"]
    for job_id in (first, second):
        client.post(
            f"/api/v1/jobs/{job_id}/metrics",
            json={"samples": [_sample(0, "fraud"), _sample(1, "fraud")]},
            headers=_job_token(db_session, job_id),
        )
    summary = client.get(f"/api/v1/jobs/{first}/summary").json()
    [fraud] = summary["classes"]
    assert fraud["class_name"] == "fraud" and fraud["periods"] == 2
    assert fraud["mean_response_time_s"] == pytest.approx(0.3)
    assert fraud["delay_target_s"] == 1.5
    compared = client.get("/api/v1/runs/compare", params={"a": first, "b": second}).json()
    assert compared["a"]["job"]["id"] == first and compared["b"]["job"]["id"] == second
    assert client.get("/api/v1/runs/compare", params={"a": first, "b": 999}).status_code == 404

"""Prometheus exposition: per-class gauges from ingested samples, request metrics."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample

SCRAPE_TOKEN = "monitoring-test-scrape-token"


def scrape(client: TestClient) -> str:
    """``GET /metrics`` as Prometheus does, with the scrape token (see
    tests/security/test_metrics_endpoint.py for the refusals)."""
    app = client.app
    app.state.settings = app.state.settings.model_copy(update={"metrics_token": SCRAPE_TOKEN})  # type: ignore[attr-defined]
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {SCRAPE_TOKEN}"})
    assert answer.status_code == 200, answer.text
    return str(answer.text)


def test_metrics_endpoint_exposes_class_gauges_and_requests(
    client: TestClient, db_session: Session
) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    sample = {
        **_sample(3),
        "headroom": 0.7,
        "shed_fraction": 0.25,
        "capacity_usage": 1.2,
        "response_time_p95_s": 0.5,
    }
    ingest = client.post(
        f"/api/v1/jobs/{job_id}/metrics",
        json={"samples": [sample]},
        headers=_job_token(db_session, job_id),
    )
    assert ingest.status_code == 202, ingest.text

    text = scrape(client)
    labels = f'job="{job_id}",query_class="fraud"'
    assert f"headroom_class_shed_fraction{{{labels}}} 0.25" in text
    assert f"headroom_class_headroom{{{labels}}} 0.7" in text
    assert f"headroom_class_capacity_usage{{{labels}}} 1.2" in text
    assert f"headroom_class_delay_target_seconds{{{labels}}} 1.5" in text
    assert f'headroom_class_response_time_seconds{{{labels},stat="p95"}} 0.5' in text
    assert 'route="/api/v1/jobs/{job_id}/metrics"' in text  # templated, not raw paths
    assert "headroom_metric_samples_ingested_total 1.0" in text


def test_request_metrics_label_status_and_route_template(client: TestClient) -> None:
    assert client.get("/api/v1/classes/424242").status_code == 404
    assert client.get("/api/v1/classes/not-a-number").status_code == 422
    assert client.get("/no/such/path").status_code == 404
    text = scrape(client)
    requests = "headroom_http_requests_total"
    assert f'{requests}{{method="GET",route="/api/v1/classes/{{class_id}}",status="404"}}' in text
    assert f'{requests}{{method="GET",route="/api/v1/classes/{{class_id}}",status="422"}}' in text
    assert f'{requests}{{method="GET",route="unmatched",status="404"}}' in text
    assert 'headroom_http_request_duration_seconds_count{method="GET",route="unmatched"}' in text


def test_the_delay_target_gauge_follows_the_version_each_sample_ran(
    client: TestClient, db_session: Session
) -> None:
    """A target tuned live shows once the job reports a sample of that version; a sample
    of the launch configuration still reads the launch target."""
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    tuned = client.patch(
        f"/api/v1/jobs/{job_id}/config", json={"classes": {"fraud": {"delay_target_s": 2.5}}}
    )
    assert tuned.status_code == 200, tuned.text
    gauge = f'headroom_class_delay_target_seconds{{job="{job_id}",query_class="fraud"}}'
    for seq, version, target in ((1, 0, 1.5), (2, 1, 2.5)):
        ingest = client.post(
            f"/api/v1/jobs/{job_id}/metrics",
            json={"samples": [{**_sample(seq), "config_version": version}]},
            headers=_job_token(db_session, job_id),
        )
        assert ingest.status_code == 202, ingest.text
        assert f"{gauge} {target}" in scrape(client)

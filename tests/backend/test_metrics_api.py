"""Metric queries: windows, server-side downsampling, CSV export and the live stream."""

from __future__ import annotations

import csv
import io
import json

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.metrics.downsample import downsample
from spark_runner.job.samples import MetricSample
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample


@pytest.fixture
def job_with_samples(client: TestClient, db_session: Session) -> int:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    client.post("/api/v1/classes", json={"name": "ads", "priority": 1, "delay_target_s": 3})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    samples = [_sample(seq, name) for seq in range(10) for name in ("fraud", "ads")]
    response = client.post(
        f"/api/v1/jobs/{job_id}/metrics",
        json={"samples": samples},
        headers=_job_token(db_session, job_id),
    )
    assert response.status_code == 202
    return int(job_id)


def test_last_window_and_class_filter(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    newest = client.get(url, params={"last_s": 3, "class_name": "fraud"}).json()["samples"]
    assert [s["seq"] for s in newest] == [7, 8, 9]
    until = client.get(url, params={"until": 1_763_700_001.0}).json()["samples"]
    assert {s["seq"] for s in until} == {0, 1}


def test_server_side_downsampling(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    buckets = client.get(url, params={"step_s": 5, "class_name": "ads"}).json()["samples"]
    assert len(buckets) == 2
    assert [b["arrived_count"] for b in buckets] == [500, 500]
    assert all(b["period_s"] == 5 and b["arrival_rate"] == 100 for b in buckets)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"step_s": 0}, "step_s"),
        ({"last_s": -1}, "last_s"),
        ({"since": "nan"}, "since"),
        ({"limit": 0}, "limit"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_window_is_422(client: TestClient, job_with_samples: int, params, field) -> None:
    response = client.get(f"/api/v1/jobs/{job_with_samples}/metrics", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"][-1] == field


def test_csv_export(client: TestClient, job_with_samples: int) -> None:
    response = client.get(f"/api/v1/jobs/{job_with_samples}/metrics/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 20
    assert rows[0]["class_name"] in ("fraud", "ads") and rows[0]["arrived_count"] == "100"


def test_stream_pushes_samples_with_ids(client: TestClient, job_with_samples: int) -> None:
    events: list[dict[str, object]] = []
    ids: list[int] = []
    url = f"/api/v1/jobs/{job_with_samples}/metrics/stream"
    with client.stream("GET", url) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("id: "):
                ids.append(int(line[4:]))
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
            if len(events) == 20:
                break
    assert {e["class_name"] for e in events} == {"fraud", "ads"}
    assert ids == sorted(ids)
    # Resuming after the 15th id yields exactly the remaining 5.
    resumed: list[int] = []
    with client.stream("GET", url, headers={"Last-Event-ID": str(ids[14])}) as response:
        for line in response.iter_lines():
            if line.startswith("id: "):
                resumed.append(int(line[4:]))
            if len(resumed) == 5:
                break
    assert resumed == ids[15:]


def test_stream_of_unknown_job_is_404(client: TestClient) -> None:
    assert client.get("/api/v1/jobs/4242/metrics/stream").status_code == 404


def test_downsample_weights_means_by_output() -> None:
    base = {"class_name": "c", "period_s": 1.0, "arrival_rate": 10.0, "arrived_count": 10}
    a = MetricSample(
        **base,
        seq=0,
        t=100.2,
        output_count=1,
        response_time_mean_s=1.0,
        response_time_max_s=1.0,
        shed_fraction=0.0,
    )
    b = MetricSample(
        **base,
        seq=1,
        t=100.9,
        output_count=3,
        response_time_mean_s=2.0,
        response_time_max_s=4.0,
        shed_fraction=0.5,
        redistributed=True,
    )
    [merged] = downsample([a, b], step_s=1.0)
    assert merged.response_time_mean_s == pytest.approx(1.75)
    assert merged.response_time_max_s == 4.0
    assert merged.output_count == 4 and merged.arrived_count == 20
    assert merged.shed_fraction == pytest.approx(0.25)
    assert merged.redistributed and merged.t == 100.9 and merged.seq == 0


def test_retention_compacts_old_and_deletes_expired(
    client: TestClient, job_with_samples: int, db_session: Session
) -> None:
    from backend.metrics.retention import apply_retention

    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    before = client.get(url).json()["samples"]
    arrived_before = sum(s["arrived_count"] for s in before)
    # Samples sit at t = 1_763_700_000 + seq; "now" is 100 s later.
    now = 1_763_700_100.0
    result = apply_retention(db_session, now, retention_s=10**6, compact_after_s=50, step_s=5)
    db_session.commit()
    assert (result.deleted, result.compacted_from, result.compacted_to) == (0, 20, 4)
    after = client.get(url).json()["samples"]
    assert len(after) == 4 and sum(s["arrived_count"] for s in after) == arrived_before
    again = apply_retention(db_session, now, retention_s=10**6, compact_after_s=50, step_s=5)
    assert again.compacted_from == 0  # merged rows are not merged again
    gone = apply_retention(db_session, now, retention_s=50, compact_after_s=50, step_s=5)
    db_session.commit()
    assert gone.deleted == 4 and client.get(url).json()["samples"] == []

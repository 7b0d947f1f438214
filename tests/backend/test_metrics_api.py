"""Metric queries: windows, server-side downsampling, CSV export and the live stream."""

from __future__ import annotations

import csv
import io
import json

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from backend.metrics.downsample import (
    downsample,
    downsample_stream,
    newest_buckets,
    oldest_buckets,
)
from spark_runner.contract.samples import MetricSample
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
        ({"limit": 100_001}, "limit"),
        ({"step_s": "inf"}, "step_s"),
        ({"step_s": 1e-300}, "step_s"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_window_is_422(client: TestClient, job_with_samples: int, params, field) -> None:
    response = client.get(f"/api/v1/jobs/{job_with_samples}/metrics", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"][-1] == field


def _seqs(samples: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(s["seq"], s["class_name"]) for s in samples]


def test_limit_with_last_s_keeps_the_newest(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    body = client.get(url, params={"last_s": 5, "limit": 4}).json()
    assert _seqs(body["samples"]) == [(8, "ads"), (8, "fraud"), (9, "ads"), (9, "fraud")]
    assert body["truncated"] is True
    whole = client.get(url, params={"last_s": 5, "limit": 10}).json()
    assert len(whole["samples"]) == 10 and whole["truncated"] is False


def test_limit_without_last_s_keeps_the_oldest(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    body = client.get(url, params={"limit": 3}).json()
    assert _seqs(body["samples"]) == [(0, "ads"), (0, "fraud"), (1, "ads")]
    assert body["truncated"] is True
    assert client.get(url, params={"limit": 20}).json()["truncated"] is False
    # since + limit pages forward.
    page = client.get(url, params={"since": body["samples"][-1]["t"], "limit": 2}).json()
    assert _seqs(page["samples"]) == [(2, "ads"), (2, "fraud")]


def test_downsampling_comes_before_the_limit(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics"
    # Buckets of 2 s hold seq (0, 1), (2, 3), ... (8, 9): five per class.
    newest = client.get(
        url, params={"class_name": "ads", "step_s": 2, "last_s": 100, "limit": 2}
    ).json()
    assert [(b["seq"], b["arrived_count"]) for b in newest["samples"]] == [(6, 200), (8, 200)]
    assert newest["samples"][-1]["t"] == 1_763_700_009.0 and newest["truncated"] is True
    oldest = client.get(url, params={"class_name": "ads", "step_s": 2, "limit": 2}).json()
    assert [(b["seq"], b["arrived_count"]) for b in oldest["samples"]] == [(0, 200), (2, 200)]
    # limit counts buckets, not raw samples: one bucket of 5 periods, not 1 period.
    [one] = client.get(url, params={"step_s": 5, "last_s": 100, "limit": 1}).json()["samples"]
    assert (one["class_name"], one["seq"], one["arrived_count"]) == ("fraud", 5, 500)
    every = client.get(url, params={"step_s": 5, "limit": 4}).json()
    assert len(every["samples"]) == 4 and every["truncated"] is False


def _make(seq: int, class_name: str, t: float, **fields: object) -> MetricSample:
    values: dict[str, object] = {
        "class_name": class_name,
        "seq": seq,
        "t": t,
        "period_s": 0.5,
        "arrived_count": seq % 7,
        "output_count": seq % 3,
        "arrival_rate": 2.0 * (seq % 7),
        "response_time_mean_s": 0.1 * (seq % 5) if seq % 3 else None,
        "response_time_max_s": 0.2 * (seq % 5) if seq % 3 else None,
        "shed_fraction": (seq % 4) / 4,
        "manager_state": f"s{seq}",
    }
    return MetricSample.model_validate({**values, **fields})


@settings(max_examples=200, deadline=None)
@given(
    periods=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 4)), min_size=0, max_size=40
    ),
    step_s=st.sampled_from([0.5, 1.0, 1.5, 3.0, 10.0]),
    limit=st.integers(1, 12),
)
def test_windowed_downsampling_agrees_with_downsampling_everything(periods, step_s, limit):
    """Bucketing newest-first or oldest-first with a limit keeps exactly the last or first
    ``limit`` buckets of merging everything; streaming yields every bucket in order."""
    clock = {"a": 100.0, "b": 100.0, "c": 100.0}
    seq = {"a": 0, "b": 0, "c": 0}
    samples = []
    for name, periods_ahead in periods:
        clock[name] += 0.5 * periods_ahead
        samples.append(_make(seq[name], name, clock[name]))
        seq[name] += 1
    ordered = sorted(samples, key=lambda s: (s.t, s.class_name))
    everything = downsample(ordered, step_s)
    assert list(downsample_stream(ordered, step_s)) == everything
    assert oldest_buckets(ordered, step_s, limit) == (everything[:limit], len(everything) > limit)
    newest, truncated = newest_buckets(reversed(ordered), step_s, limit)
    assert truncated == (len(everything) > limit)
    expected = everything[-limit:]
    assert [(s.class_name, s.t, s.seq, s.arrived_count) for s in newest] == [
        (s.class_name, s.t, s.seq, s.arrived_count) for s in expected
    ]
    for got, want in zip(newest, expected, strict=True):
        for name in ("response_time_mean_s", "shed_fraction"):
            assert getattr(got, name) == pytest.approx(getattr(want, name))
        assert got.manager_state == want.manager_state  # the newest sample's


def _csv(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.text)))


def test_csv_export(client: TestClient, job_with_samples: int) -> None:
    response = client.get(f"/api/v1/jobs/{job_with_samples}/metrics/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    assert response.headers["x-headroom-truncated"] == "false"
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 20
    assert rows[0]["class_name"] in ("fraud", "ads") and rows[0]["arrived_count"] == "100"


def test_ingest_stores_and_returns_warmup(client: TestClient, db_session: Session) -> None:
    """A warm-up sample is stored and read back as one: in the series, the CSV export and
    the buckets, where a bucket is warm-up only when all its periods are."""
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    samples = [{**_sample(seq), "warmup": seq < 3} for seq in range(6)]
    posted = client.post(
        f"/api/v1/jobs/{job_id}/metrics",
        json={"samples": samples},
        headers=_job_token(db_session, job_id),
    )
    assert posted.status_code == 202, posted.text
    url = f"/api/v1/jobs/{job_id}/metrics"
    stored = client.get(url).json()["samples"]
    assert [s["warmup"] for s in stored] == [True, True, True, False, False, False]
    exported = _csv(client.get(f"{url}/export"))
    assert [r["warmup"] for r in exported] == ["True", "True", "True", "False", "False", "False"]
    # Buckets of 2 s: periods 0-1 (warm-up), 2-3 (mixed), 4-5 (ordinary).
    buckets = client.get(url, params={"step_s": 2}).json()["samples"]
    assert [b["warmup"] for b in buckets] == [True, False, False]


def test_csv_export_streams_every_sample_page_by_page(
    client: TestClient, job_with_samples: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No silent cap: without ``limit`` the export reads keyset pages (3 rows here, in a
    short session each) until the window is exhausted."""
    from backend.metrics import service

    monkeypatch.setattr(service, "EXPORT_PAGE_ROWS", 3)
    url = f"/api/v1/jobs/{job_with_samples}/metrics/export"
    rows = list(csv.DictReader(io.StringIO(client.get(url).text)))
    expected = [(str(seq), name) for seq in range(10) for name in ("ads", "fraud")]
    assert [(r["seq"], r["class_name"]) for r in rows] == expected
    window = list(
        csv.DictReader(
            io.StringIO(
                client.get(url, params={"since": 1_763_700_004.0, "class_name": "ads"}).text
            )
        )
    )
    assert [r["seq"] for r in window] == ["5", "6", "7", "8", "9"]
    buckets = list(csv.DictReader(io.StringIO(client.get(url, params={"step_s": 5}).text)))
    assert [(r["seq"], r["class_name"], r["arrived_count"]) for r in buckets] == [
        ("0", "ads", "500"),
        ("0", "fraud", "500"),
        ("5", "ads", "500"),
        ("5", "fraud", "500"),
    ]


def test_csv_export_with_a_limit_says_it_was_cut(client: TestClient, job_with_samples: int) -> None:
    url = f"/api/v1/jobs/{job_with_samples}/metrics/export"
    cut = client.get(url, params={"last_s": 100, "limit": 3})
    assert cut.headers["x-headroom-truncated"] == "true"
    rows = list(csv.DictReader(io.StringIO(cut.text)))
    assert [(r["seq"], r["class_name"]) for r in rows] == [
        ("8", "fraud"),
        ("9", "ads"),
        ("9", "fraud"),
    ]
    whole = client.get(url, params={"limit": 20})
    assert whole.headers["x-headroom-truncated"] == "false"
    assert client.get("/api/v1/jobs/4242/metrics/export").status_code == 404
    assert client.get("/api/v1/jobs/4242/metrics/export", params={"limit": 5}).status_code == 404
    bad = client.get(url, params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "limit"


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
    a = MetricSample.model_validate(
        {
            **base,
            "seq": 0,
            "t": 100.2,
            "output_count": 1,
            "response_time_mean_s": 1.0,
            "response_time_max_s": 1.0,
            "shed_fraction": 0.0,
        }
    )
    b = MetricSample.model_validate(
        {
            **base,
            "seq": 1,
            "t": 100.9,
            "output_count": 3,
            "response_time_mean_s": 2.0,
            "response_time_max_s": 4.0,
            "shed_fraction": 0.5,
            "redistributed": True,
        }
    )
    [merged] = downsample([a, b], step_s=1.0)
    assert merged.response_time_mean_s == pytest.approx(1.75)
    assert merged.response_time_max_s == 4.0
    assert merged.output_count == 4 and merged.arrived_count == 20
    assert merged.shed_fraction == pytest.approx(0.25)
    assert merged.redistributed and merged.t == 100.9 and merged.seq == 0
    assert not merged.warmup
    warm = [s.model_copy(update={"warmup": True}) for s in (a, b)]
    assert [m.warmup for m in downsample(warm, step_s=1.0)] == [True]
    assert [m.warmup for m in downsample([warm[0], b], step_s=1.0)] == [False]


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

"""Run summaries (pure) and the history endpoints."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.history.summary import summarize
from spark_runner.contract.samples import MetricSample
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


def test_each_period_is_judged_against_the_target_of_its_configuration_version() -> None:
    """A target tuned live from 2.5 to 1 s: the periods of version 1 are late at 2 s, and
    the summary names the target in force at the end."""
    samples = [
        _s(
            seq,
            output_count=10,
            response_time_mean_s=1.5,
            response_time_max_s=2.0,
            config_version=version,
        )
        for seq, version in enumerate((0, 0, 1, 1))
    ]
    [ads] = summarize(samples, {"ads": 2.5}, {0: {"ads": 2.5}, 1: {"ads": 1.0}})
    assert ads.late_period_fraction == pytest.approx(0.5)
    assert ads.mean_violation_s == pytest.approx(0.5 * 0.5)  # (2·0 + 2·0.5) / 4 periods alike
    assert ads.max_violation_s == pytest.approx(1.0)
    assert ads.delay_target_s == 1.0
    [launch] = summarize(samples, {"ads": 2.5})
    assert launch.late_period_fraction == 0 and launch.delay_target_s == 2.5


def test_warmup_periods_are_left_out_of_response_times_and_violations() -> None:
    """A warm-up period's wait measures Spark's start: it is counted apart and judged
    against nothing, while its tuples and losses count like any period's."""
    warmup = _s(
        0,
        warmup=True,
        output_count=50,
        response_time_mean_s=20.0,
        response_time_max_s=30.0,
        response_time_p95_s=28.0,
        violation_mean_s=18.0,
        violation_max_s=28.0,
        shed_count=10,
    )
    ordinary = [
        _s(
            1,
            output_count=10,
            response_time_mean_s=1.0,
            response_time_max_s=1.5,
            response_time_p95_s=1.4,
            violation_mean_s=0.0,
            violation_max_s=0.0,
            shed_count=0,
        ),
        _s(
            2,
            output_count=10,
            response_time_mean_s=2.0,
            response_time_max_s=3.5,
            response_time_p95_s=3.0,
            violation_mean_s=0.5,
            violation_max_s=1.5,
            shed_count=0,
        ),
    ]
    [ads] = summarize([warmup, *ordinary], {"ads": 2.0})
    assert (ads.periods, ads.warmup_periods) == (3, 1)
    assert ads.late_period_fraction == pytest.approx(0.5)  # period 2 of the two ordinary ones
    assert ads.max_violation_s == pytest.approx(1.5)
    assert ads.mean_violation_s == pytest.approx(0.25)
    assert ads.mean_response_time_s == pytest.approx(1.5)
    assert ads.max_response_time_s == pytest.approx(3.5)
    assert ads.p95_response_time_s == pytest.approx(3.0)
    assert (ads.arrived, ads.output, ads.shed) == (300, 70, 10)
    assert ads.loss_fraction == pytest.approx(10 / 300)
    # Only warm-up periods: nothing to judge the target by.
    [start] = summarize([warmup], {"ads": 2.0})
    assert start.warmup_periods == 1
    assert start.late_period_fraction is None and start.mean_response_time_s is None


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
    assert fraud["warmup_periods"] == 0
    assert fraud["mean_response_time_s"] == pytest.approx(0.3)
    assert fraud["delay_target_s"] == 1.5
    compared = client.get("/api/v1/runs/compare", params={"a": first, "b": second}).json()
    assert compared["a"]["job"]["id"] == first and compared["b"]["job"]["id"] == second
    assert client.get("/api/v1/runs/compare", params={"a": first, "b": 999}).status_code == 404


@pytest.fixture
def two_runs(client: TestClient, db_session: Session) -> tuple[int, int]:
    """Two runs of one class, 5 periods each, the second started 1000 s after the first."""
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    runs = []
    for shift in (0.0, 1000.0):
        job_id = client.post("/api/v1/jobs", json={}).json()["id"]
        samples = [{**_sample(seq), "t": 1_763_700_000.0 + seq + shift} for seq in range(5)]
        client.post(
            f"/api/v1/jobs/{job_id}/metrics",
            json={"samples": samples},
            headers=_job_token(db_session, job_id),
        )
        runs.append(job_id)
    return runs[0], runs[1]


def test_compare_over_seconds_into_each_run(client: TestClient, two_runs) -> None:
    a, b = two_runs
    params = {"a": a, "b": b, "since_s": 1, "until_s": 2}
    compared = client.get("/api/v1/runs/compare", params=params)
    assert compared.status_code == 200, compared.text
    for side, first_t in (("a", 1_763_700_000.0), ("b", 1_763_701_000.0)):
        assert compared.json()[side]["first_sample_t"] == first_t
        assert compared.json()[side]["classes"][0]["periods"] == 2  # offsets 1 and 2
    whole = client.get("/api/v1/runs/compare", params={"a": a, "b": b}).json()
    assert [whole[s]["classes"][0]["periods"] for s in "ab"] == [5, 5]
    from_start = client.get("/api/v1/runs/compare", params={"a": a, "b": b, "until_s": 0}).json()
    assert [from_start[s]["classes"][0]["periods"] for s in "ab"] == [1, 1]  # the first sample


def test_compare_over_absolute_times(client: TestClient, two_runs) -> None:
    a, b = two_runs
    params = {"a": a, "b": b, "since": 1_763_700_000.5, "until": 1_763_700_003.0}
    compared = client.get("/api/v1/runs/compare", params=params).json()
    assert compared["a"]["classes"][0]["periods"] == 3  # t = +1, +2, +3
    assert compared["b"]["classes"][0]["periods"] == 0  # run b is later
    summary = client.get(f"/api/v1/jobs/{a}/summary", params={"since_s": 3}).json()
    assert summary["classes"][0]["periods"] == 2


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"since": 10, "since_s": 1}, "since_s", "not both"),
        ({"until": 10, "until_s": 1}, "until_s", "not both"),
        ({"since": 10, "until": 10}, "until", "must be > since=10.0"),
        ({"since_s": 5, "until_s": 1}, "until_s", "must be >= since_s=5.0"),
        ({"since_s": -1}, "since_s", "greater than or equal to 0"),
        ({"until_s": "nan"}, "until_s", "finite"),
        ({"since": "soon"}, "since", "valid number"),
        ({"bogus": 1}, "bogus", "Extra inputs"),
    ],
)
def test_bad_range_is_a_422_naming_the_field(
    client: TestClient, two_runs, params, field, words
) -> None:
    a, b = two_runs
    for url, extra in (
        ("/api/v1/runs/compare", {"a": a, "b": b}),
        (f"/api/v1/jobs/{a}/summary", {}),
    ):
        response = client.get(url, params={**extra, **params})
        assert response.status_code == 422, response.text
        [item] = response.json()["detail"]
        assert item["loc"][-1] == field, item
        assert field in item["msg"] and words in item["msg"], item
        assert not isinstance(item["input"], dict), item  # the field's value, not the query


def test_compare_needs_two_valid_run_ids(client: TestClient) -> None:
    missing = client.get("/api/v1/runs/compare", params={"a": 1})
    [item] = missing.json()["detail"]
    assert missing.status_code == 422 and item["loc"][-1] == "b"
    assert item["msg"] == "b=None is invalid: Field required" and item["input"] is None
    zero = client.get("/api/v1/runs/compare", params={"a": 0, "b": 1})
    assert zero.status_code == 422 and zero.json()["detail"][0]["loc"][-1] == "a"

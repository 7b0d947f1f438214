"""The walking skeleton end to end: class → job via a real Celery worker → real Spark
metrics in the database → stop. Once on the embedded defaults, once on PostgreSQL+Redis."""

from __future__ import annotations

import time

import pytest

from backend.jobs import launcher
from backend.stack import Stack
from tests.e2e.conftest import StackFactory, api_client, log_of
from tests.waiting import poll_for

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FIRST_METRIC_DEADLINE_S = 60.0


def run_lifecycle(stack: Stack) -> float:
    """Create classes, launch, see metrics, stop. Returns seconds from POST /jobs to the
    first stored metric of every class."""
    api = api_client(stack)
    for name, priority, target in (("fraud", 6, 2.0), ("ads", 1, 4.0)):
        created = api.post(
            "/classes", json={"name": name, "priority": priority, "delay_target_s": target}
        )
        assert created.status_code == 201, created.text

    started = time.monotonic()
    response = api.post("/jobs", json={"rate_per_s": 100, "control_period_s": 1.0})
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]

    def classes_with_metrics() -> set[str] | None:
        samples = api.get(f"/jobs/{job_id}/metrics").json()["samples"]
        names = {s["class_name"] for s in samples}
        return names if names == {"fraud", "ads"} else None

    got = poll_for(classes_with_metrics, FIRST_METRIC_DEADLINE_S + 30)
    first_metric_s = time.monotonic() - started
    assert got, f"no metrics for both classes within the deadline\n{log_of(stack)}"

    job = api.get(f"/jobs/{job_id}").json()
    assert job["status"] == "running", job
    pid = job["pid"]
    assert pid and launcher.group_alive(pid)

    samples = api.get(f"/jobs/{job_id}/metrics").json()["samples"]
    for sample in samples:
        assert 0 <= sample["output_count"] <= sample["arrived_count"]
        if sample["output_count"]:
            assert 0 < sample["response_time_mean_s"] <= sample["response_time_max_s"] < 60

    assert api.post(f"/jobs/{job_id}/stop").status_code == 202
    stopped = poll_for(
        lambda: api.get(f"/jobs/{job_id}").json()["status"] in ("stopped", "failed"), 60
    )
    final = api.get(f"/jobs/{job_id}").json()
    assert stopped and final["status"] == "stopped", f"{final}\n{log_of(stack)}"
    assert final["exit_code"] == 0
    assert poll_for(lambda: not launcher.group_alive(pid), 10), "the job's JVM outlived it"
    # History survives the stop.
    assert len(api.get(f"/jobs/{job_id}/metrics").json()["samples"]) >= len(samples)
    return first_metric_s


def test_embedded_defaults_sqlite_and_filesystem_broker(start_stack: StackFactory, tmp_path):
    stack = start_stack(f"sqlite:///{tmp_path / 'headroom.db'}", "filesystem://")
    first_metric_s = run_lifecycle(stack)
    assert first_metric_s < FIRST_METRIC_DEADLINE_S
    print(f"\nembedded: POST /jobs → first stored metric of every class: {first_metric_s:.1f} s")


@pytest.mark.services
def test_postgresql_and_redis(
    start_stack: StackFactory, empty_postgres_url: str, redis_url: str
) -> None:
    # a database of its own: the stack commits for real, and the session's shared one
    # holds only rolled-back rows of the API tests
    stack = start_stack(empty_postgres_url, redis_url)
    first_metric_s = run_lifecycle(stack)
    assert first_metric_s < FIRST_METRIC_DEADLINE_S
    print(
        f"\npostgres+redis: POST /jobs → first stored metric of every class: {first_metric_s:.1f} s"
    )

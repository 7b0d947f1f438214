"""A job's life through the real product, as both end-to-end files check it: its first
metrics for every class, sane samples, a stop that exits 0 and leaves no JVM, and its
history kept."""

from __future__ import annotations

import time

import httpx

from backend.jobs import launcher
from backend.stack import Stack
from tests.e2e.conftest import log_of
from tests.waiting import poll_for

FIRST_METRIC_DEADLINE_S = 60.0


def see_metrics_then_stop(stack: Stack, api: httpx.Client, job_id: int, posted_at: float) -> float:
    """Wait for a metric of every class of the running job ``job_id``, check its samples,
    stop it and check the stop. Returns seconds from ``posted_at`` (monotonic, when the job
    was asked for) to the first stored metric of every class."""
    classes = {c["name"] for c in api.get("/classes").json()}

    def classes_with_metrics() -> set[str] | None:
        samples = api.get(f"/jobs/{job_id}/metrics").json()["samples"]
        names = {s["class_name"] for s in samples}
        return names if names == classes else None

    got = poll_for(classes_with_metrics, FIRST_METRIC_DEADLINE_S + 30)
    first_metric_s = time.monotonic() - posted_at
    assert got, f"no metrics for every class within the deadline\n{log_of(stack)}"

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

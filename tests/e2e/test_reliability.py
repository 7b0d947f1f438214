"""Failures of real parts while a real Spark job runs: the API restarts, the driver is
killed with SIGKILL, the broker (Redis) goes away for 30 s. The first test runs on the
embedded defaults (SQLite, the filesystem broker), and its restarted job lives the whole
life ``test_job_lifecycle.py`` checks on PostgreSQL+Redis."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.jobs import launcher
from backend.processes import is_running, running_descendants
from tests.e2e.conftest import StackFactory, api_client, free_port, log_of
from tests.e2e.lifecycle import FIRST_METRIC_DEADLINE_S, see_metrics_then_stop
from tests.waiting import poll_for, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.timeout(420)]


def start_job(api: httpx.Client) -> int:
    for name, priority, target in (("fraud", 6, 3.0), ("ads", 1, 5.0)):
        api.post("/classes", json={"name": name, "priority": priority, "delay_target_s": target})
    response = api.post("/jobs", json={"rate_per_s": 50})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def seqs(api: httpx.Client, job_id: int) -> dict[str, list[int]]:
    by_class: dict[str, list[int]] = {}
    for sample in api.get(f"/jobs/{job_id}/metrics").json()["samples"]:
        by_class.setdefault(sample["class_name"], []).append(sample["seq"])
    return by_class


def reached(api: httpx.Client, job_id: int, seq: int) -> bool:
    have = seqs(api, job_id)
    return len(have) == 2 and all(max(v) >= seq for v in have.values())


@pytest.mark.timing
def test_api_restart_loses_no_metric_then_sigkill_marks_failed_and_restart_works(
    start_stack: StackFactory, tmp_path: Path
) -> None:
    stack = start_stack(f"sqlite:///{tmp_path / 'r.db'}", "filesystem://")
    api = api_client(stack)
    job_id = start_job(api)
    assert poll_for(lambda: reached(api, job_id, 2), 90), log_of(stack)

    # The API goes away for a while; the job keeps running and buffers its samples.
    before = max(max(v) for v in seqs(api, job_id).values())
    pid = api.get(f"/jobs/{job_id}").json()["pid"]
    stack.stop_service(stack.service("api"))
    # Five seconds without the API: the job must stay up (and buffer what it measures).
    assert poll_for(lambda: not launcher.group_alive(pid), 5) is None, log_of(stack)
    stack.start_api()
    stack.wait_healthy()
    api = api_client(stack)
    assert poll_for(lambda: reached(api, job_id, before + 6), 60), log_of(stack)
    for name, got in seqs(api, job_id).items():
        assert sorted(got) == list(range(min(got), max(got) + 1)), f"{name} lost samples: {got}"

    # kill -9 of the driver: failed within 5 s, with a reason, history intact; its JVM
    # (in a session of its own, out of reach of the job's group) exits by itself.
    stored = sum(len(v) for v in seqs(api, job_id).values())
    helpers = running_descendants(pid)
    assert helpers, "expected a JVM and Python workers under the job"
    os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    failed = poll_for(lambda: api.get(f"/jobs/{job_id}").json()["status"] == "failed", 10, 0.1)
    detected_s = time.monotonic() - killed_at
    job = api.get(f"/jobs/{job_id}").json()
    assert failed and detected_s <= 5, f"{job} after {detected_s:.1f} s"
    assert "killed" in job["failure_reason"] or "exited" in job["failure_reason"]
    assert sum(len(v) for v in seqs(api, job_id).values()) >= stored
    print(f"\nkill -9 detected after {detected_s:.2f} s")
    assert wait_until(lambda: not any(is_running(p) for p in helpers), 20), (
        f"left behind: {[p for p in helpers if is_running(p)]}"
    )

    posted_at = time.monotonic()
    restarted = api.post(f"/jobs/{job_id}/restart")
    assert restarted.status_code == 201, restarted.text
    assert restarted.json()["restart_of"] == job_id
    first_metric_s = see_metrics_then_stop(stack, api, restarted.json()["id"], posted_at)
    assert first_metric_s < FIRST_METRIC_DEADLINE_S
    print(f"embedded: restart → first stored metric of every class: {first_metric_s:.1f} s")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """A Redis server of our own (stopping the shared one would disturb other tests)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/install test installs it)")
    port = free_port()
    processes: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp_path),
            ],
            stdout=subprocess.DEVNULL,
        )
        processes.append(process)
        assert poll_for(lambda: _answers(port), 10)
        return process

    start.port = port  # type: ignore[attr-defined]
    yield start
    for process in processes:
        process.kill()
        process.wait()


def _answers(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


def test_redis_outage_job_keeps_controlling_and_work_resumes(
    start_stack: StackFactory, tmp_path: Path, private_redis: Any
) -> None:
    server = private_redis()
    stack = start_stack(
        f"sqlite:///{tmp_path / 'b.db'}", f"redis://127.0.0.1:{private_redis.port}/0"
    )
    api = api_client(stack)
    job_id = start_job(api)
    assert poll_for(lambda: reached(api, job_id, 1), 90), log_of(stack)

    pid = api.get(f"/jobs/{job_id}").json()["pid"]
    server.terminate()
    server.wait()
    outage_started = time.monotonic()
    at_outage = max(max(v) for v in seqs(api, job_id).values())
    # 30 s without a broker: the job keeps running and reporting; a stop requested now
    # cannot be queued but is recorded.
    assert poll_for(lambda: reached(api, job_id, at_outage + 10), 40), log_of(stack)
    remaining = 30 - (time.monotonic() - outage_started)
    assert poll_for(lambda: not launcher.group_alive(pid), max(0.0, remaining)) is None
    assert api.post(f"/jobs/{job_id}/stop").status_code == 202

    private_redis()  # the broker is back on the same port
    stopped = poll_for(lambda: api.get(f"/jobs/{job_id}").json()["status"] == "stopped", 90)
    assert stopped, f"{api.get(f'/jobs/{job_id}').json()}\n{log_of(stack)}"
    have = seqs(api, job_id)
    for name, got in have.items():
        assert sorted(got) == list(range(min(got), max(got) + 1)), f"{name} lost samples"

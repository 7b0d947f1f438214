"""The real job on a real local Spark, as the launcher runs it: a process in its own
session, stopped by SIGTERM to its process group.

Spark start-up dominates (5-15 s on 2 cores); every wait polls against a deadline.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import spark_runner
from backend.processes import is_running, running_descendants
from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from tests.job_launch import launch_job
from tests.waiting import wait_until

from .capture import CaptureServer

pytestmark = pytest.mark.spark

PACKAGE_ROOT = Path(spark_runner.__file__).resolve().parent.parent
RATES_PER_S = {"gold": 50.0, "bronze": 20.0}
FIRST_SAMPLES_DEADLINE_S = 120.0
STOP_DEADLINE_S = 45.0


def snapshot(api_url: str, tmp_path: Path, **overrides: Any) -> JobSnapshot:
    fields: dict[str, Any] = {
        "job_id": 11,
        "api_url": api_url,
        "spark_master": "local[2]",
        "control_period_s": 1.0,
        "checkpoint_dir": str(tmp_path / "checkpoint"),
        "duration_s": None,
        "classes": (
            ClassSnapshot(name="gold", rate_per_s=50, selectivity=0.5),
            ClassSnapshot(name="bronze", rate_per_s=20, selectivity=0.25),
        ),
        "control": LiveConfig(
            classes={
                "gold": ClassControl(priority=6, delay_target_s=2),
                "bronze": ClassControl(priority=1, delay_target_s=5),
            }
        ),
    }
    fields.update(overrides)
    return JobSnapshot(**fields)


def launch(config: JobSnapshot, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    return launch_job(config, tmp_path), tmp_path / "job.log"


def assert_no_errors(log: str) -> None:
    for marker in ("Traceback", "StackOverflowError", " ERROR "):
        at = log.find(marker)
        assert at < 0, log[max(0, at - 1500) : at + 3000]


@pytest.fixture
def job_process() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Kills whatever a failed test left running."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def test_job_reports_both_classes_and_stops_cleanly_on_sigterm(
    capture_server: CaptureServer, tmp_path: Path, job_process: list[subprocess.Popen[bytes]]
) -> None:
    launched_at = time.time()
    process, log_path = launch(snapshot(capture_server.base_url, tmp_path), tmp_path)
    job_process.append(process)

    def steady_samples_for_both() -> bool:
        assert process.poll() is None, log_path.read_text()
        # Batch 0 includes Spark's warm-up; wait for one ordinary batch as well.
        return {s["class_name"] for s in capture_server.accepted_samples() if s["seq"] >= 1} == {
            "gold",
            "bronze",
        }

    assert wait_until(steady_samples_for_both, FIRST_SAMPLES_DEADLINE_S), log_path.read_text()
    first_post_at = min(
        r["received_at"] for r in capture_server.requests if r["path"].endswith("/metrics")
    )
    print(f"\nfirst sample POSTed {first_post_at - launched_at:.1f} s after launch")

    helpers = running_descendants(process.pid)
    assert helpers, "expected a JVM and Python workers under the job"

    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(STOP_DEADLINE_S) == 0, log_path.read_text()
    assert wait_until(lambda: not any(is_running(p) for p in helpers), 15.0), (
        f"left behind: {[p for p in helpers if is_running(p)]}"
    )
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)

    log = log_path.read_text()
    assert "SIGTERM received" in log
    assert "query stopped" in log
    assert_no_errors(log)

    samples = capture_server.accepted_samples()
    assert {s["class_name"] for s in samples} == {"gold", "bronze"}
    keys = [(s["class_name"], s["seq"]) for s in samples]
    assert len(keys) == len(set(keys))
    for name in ("gold", "bronze"):
        seqs = [s["seq"] for s in samples if s["class_name"] == name]
        assert seqs == list(range(len(seqs)))  # one per batch, none lost
    for s in samples:
        assert 0 <= s["output_count"] <= s["arrived_count"]
        # The window's arrivals are exactly the scheduled ones, up to rounding at its ends.
        assert abs(s["arrived_count"] - RATES_PER_S[s["class_name"]] * s["period_s"]) <= 1.01
        if s["output_count"]:
            # batch 1 answers what arrived while batch 0 warmed Spark up: up to ~30 s here
            assert 0 < s["response_time_mean_s"] <= s["response_time_max_s"] < 90
        # warm-up: batch 0 and the batch that serves what arrived while it ran
        assert s["warmup"] == (s["seq"] < 2), s
    for name, rate in RATES_PER_S.items():
        # the streams start when the query first asks for an offset, not when the job
        # started: batch 0 holds no backlog of the JVM's and the plan's start-up
        first = next(s for s in samples if s["class_name"] == name and s["seq"] == 0)
        assert first["arrived_count"] <= rate, first
    steady = [s for s in samples if s["seq"] >= 2 and s["output_count"]]
    # Steady state: tuples wait about half a period plus the batch's processing.
    assert all(s["response_time_max_s"] < 10 for s in steady)


def test_bad_master_exits_3(capture_server: CaptureServer, tmp_path: Path) -> None:
    config = snapshot(capture_server.base_url, tmp_path, spark_master="nonsense://x")
    path = tmp_path / "job.json"
    config.dump(path)
    result = subprocess.run(
        [sys.executable, "-m", "spark_runner.job", "--config", str(path)],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 3, result.stderr
    [line] = [ln for ln in result.stderr.splitlines() if " CRITICAL " in ln]
    assert "Spark failed to start on master 'nonsense://x'" in line


def test_unusable_checkpoint_exits_4(capture_server: CaptureServer, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    config = snapshot(capture_server.base_url, tmp_path, checkpoint_dir=str(blocker / "checkpoint"))
    path = tmp_path / "job.json"
    config.dump(path)
    result = subprocess.run(
        [sys.executable, "-m", "spark_runner.job", "--config", str(path)],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 4, result.stderr
    [line] = [ln for ln in result.stderr.splitlines() if " CRITICAL " in ln]
    assert "streaming query failed to start" in line
    assert f"checkpoint directory {blocker / 'checkpoint'} is unusable: Not a directory" in line


def test_duration_ends_the_job_with_exit_0(capture_server: CaptureServer, tmp_path: Path) -> None:
    config = snapshot(capture_server.base_url, tmp_path, duration_s=3.0)
    path = tmp_path / "job.json"
    config.dump(path)
    result = subprocess.run(
        [sys.executable, "-m", "spark_runner.job", "--config", str(path)],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # 3 s after the query starts, batch 0 (Spark's warm-up) is usually still running:
    # this also covers stopping in the middle of a batch.
    assert result.returncode == 0, result.stderr
    assert "duration elapsed" in result.stderr
    assert_no_errors(result.stderr)

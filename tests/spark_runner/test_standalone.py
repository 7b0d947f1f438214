"""The same job on a Spark standalone cluster: a master and two 1-core workers on this
machine, started and stopped by the test; the job is ``headroom run`` against it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spark_runner.engine.cluster import StandaloneCluster
from spark_runner.engine.executors import master_status

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """
version: 1
name: cluster-smoke
seed: 2
duration_s: 45  # measured after the warm-up: a few periods even with 8 s batches
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, arrival: {kind: constant, rate_per_s: 300}}
  - {name: b, arrival: {kind: constant, rate_per_s: 300}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: q
        source: a
        operators:
          - {kind: filter, predicate: "value < 0.5"}
          - {kind: map, expression: "value * 3", output: v3, cpu_cost_per_tuple_s: 0}
  - name: bronze
    priority: 1
    delay_target_s: 8
    queries:
      - name: q
        source: b
        operators:
          - {kind: window_aggregate, window: {type: sliding, size_s: 2, slide_s: 1}, function: avg}
"""


def test_a_scenario_runs_unchanged_on_a_standalone_cluster(tmp_path: Path) -> None:
    scenario = tmp_path / "cluster.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "results.json"
    with StandaloneCluster(tmp_path / "cluster", workers=2, cores=1) as cluster:
        result = subprocess.run(
            [
                sys.executable, "-m", "headroom", "run", str(scenario),
                "--master", cluster.master_url, "--out", str(out), "--sink", "parquet",
                "--sink-path", str(tmp_path / "sink"), "--log-level", "INFO", "--warmup", "12",
            ],
            cwd=ROOT, capture_output=True, text=True, timeout=200, check=False,
        )  # fmt: skip
        worker_logs = " ".join(
            p.read_text(errors="replace") for p in (tmp_path / "cluster").glob("worker*.log")
        )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "parallelism 2" in result.stderr  # two executors' cores
    assert "Launching executor" in worker_logs or "Asked to launch executor" in worker_logs
    results = json.loads(out.read_text())
    assert results["engine"]["master"] == cluster.master_url
    for name in ("gold", "bronze"):
        summary = results["classes"][name]
        assert summary["outputs"] > 0
        assert summary["mean_response_time_s"] < 8
    assert "gold" in result.stdout and "bronze" in result.stdout  # the per-class table
    assert list((tmp_path / "sink").glob("batch_id=*/*.parquet"))


def headroom(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headroom", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_headroom_cluster_up_leaves_a_cluster_running_until_down(tmp_path: Path) -> None:
    where = ("--dir", str(tmp_path / "dev"))
    started = headroom("cluster", "up", "--workers", "2", *where)
    try:
        assert started.returncode == 0, started.stderr
        master = next(x.split()[1] for x in started.stdout.splitlines() if x.startswith("master"))
        ui = next(x.split()[2] for x in started.stdout.splitlines() if x.startswith("web UI"))
        assert master.startswith("spark://") and ui.startswith("http://")
        status = master_status(ui)
        assert (status.alive_workers, status.cores) == (2, 2)
        assert headroom("cluster", "status", *where).returncode == 0
        again = headroom("cluster", "up", *where)
        assert again.returncode == 1 and "already runs" in again.stdout
    finally:
        stopped = headroom("cluster", "down", *where)
    assert stopped.returncode == 0 and "stopped 3 processes" in stopped.stdout
    gone = headroom("cluster", "status", *where)
    assert gone.returncode == 1 and gone.stdout.strip() == "no cluster"

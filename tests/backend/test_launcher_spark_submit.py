"""The launcher's spark-submit mode on a real Spark standalone cluster (a master and one
2-core worker on this machine, started and stopped by the test): the job starts under
``spark-submit --deploy-mode client``, pushes metrics, is stopped the way the control plane
stops it, and exits 0 with its results written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backend.jobs import launcher
from backend.settings import Settings
from spark_runner.engine.cluster import StandaloneCluster
from spark_runner.job.submit_entry import DRIVER_PID_FILE
from spark_runner.scenario import parse_scenario
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.scenario.snapshots import job_snapshot
from tests.backend.test_launcher import exited
from tests.job.capture import CaptureServer
from tests.waiting import wait_until

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

TOKEN = "launch-token"
SCENARIO = """
version: 1
name: submit-smoke
seed: 3
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, arrival: {kind: constant, rate_per_s: 100}}
  - {name: b, arrival: {kind: constant, rate_per_s: 100}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: q
        source: a
        operators:
          - {kind: filter, predicate: "value < 0.5"}
          - {kind: map, expression: "value * 3", output: v3, cpu_cost_per_tuple_s: 0.0001}
  - name: bronze
    priority: 1
    delay_target_s: 8
    queries:
      - name: q
        source: b
        operators:
          - {kind: project, columns: [key, value]}
"""


def _parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[-1].split()[1])


def _java_children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _parent_of(int(entry.name)) == pid:
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"java" in command.split(b"\0", 1)[0]:
                found.append(int(entry.name))
    return found


def test_spark_submit_launch_on_a_standalone_cluster(tmp_path: Path) -> None:
    scenario = parse_scenario(SCENARIO)
    job_dir = tmp_path / "jobs" / "7"
    job_dir.mkdir(parents=True)
    config = job_dir / "config.json"
    log_path = job_dir / "job.log"
    results_path = job_dir / "results.json"
    settings = Settings(data_dir=tmp_path, launch_mode="spark-submit")
    server = CaptureServer()
    server.start()
    try:
        with StandaloneCluster(tmp_path / "cluster", workers=1, cores=2) as cluster:
            snapshot = job_snapshot(
                scenario.model_dump(mode="json"),
                control=scenario_live_config(scenario),
                job_id=7,
                api_url=server.base_url,
                spark_master=cluster.master_url,
                checkpoint_dir=str(job_dir / "checkpoint"),
                ingest_token=TOKEN,
                results_path=str(results_path),
            )
            command = launcher.prepare_launch(settings, snapshot, config)
            pid = launcher.start_job_process(command, log_path)
            try:

                def both_classes_report() -> bool:
                    assert launcher.process_state(pid, job_dir).alive, log_path.read_text()
                    steady = {s["class_name"] for s in server.accepted_samples() if s["seq"] >= 1}
                    return steady == {"gold", "bronze"}

                assert wait_until(both_classes_report, 180), log_path.read_text()[-4000:]
                driver = int((job_dir / DRIVER_PID_FILE).read_text())
                # The driver is spark-submit's child and uses its JVM: it started none.
                assert _parent_of(driver) == pid
                assert _java_children(driver) == []

                launcher.request_stop(pid, job_dir)  # what the stop task does
                states: list[launcher.ProcessState] = []
                assert wait_until(lambda: exited(pid, job_dir, states), 90)
            finally:
                launcher.kill_group(pid)
            master_log = (tmp_path / "cluster" / "master.log").read_text(errors="replace")
    finally:
        server.stop()

    log = log_path.read_text(errors="replace")
    assert states[-1].exit_code == 0, log[-4000:]
    assert "SIGTERM received" in log  # stopped by the signal, not by an error
    assert "Registering app headroom-job-7" in master_log
    assert {r["authorization"] for r in server.requests} == {f"Bearer {TOKEN}"}
    results = json.loads(results_path.read_text())
    assert results["engine"]["master"] == cluster.master_url
    if shutil.which("javac") is not None:
        # The burn UDF's jar reached the driver's class path, set before the JVM started.
        assert results["engine"]["burn"] == "udf"
    for name in ("gold", "bronze"):
        assert results["classes"][name]["outputs"] > 0

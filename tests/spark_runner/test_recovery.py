"""A job killed with SIGKILL while windows and joins hold state resumes from its
checkpoint: the Parquet sink then holds every window result and join match of what the
offsets say was admitted, none twice and none missing.

The job is ``headroom run`` in its own process group (Python driver and JVM), killed
after a few committed batches and started again on the same checkpoint. Without the
controller's shedding (``--plain``) every waiting tuple is admitted, so the tuples that
arrived while it was down are read after the restart.

The offset and commit logs are written by Spark's ``FileSystem``-based checkpoint
manager (``sparkconf.CHECKPOINT_PROPERTIES``): a temporary file renamed into place, which
a kill must not leave half written.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds
import pytest

from backend.processes import is_running, running_descendants
from spark_runner.engine.dataflow.network import compile_network
from spark_runner.engine.sources.replay import final_values, join_matches
from spark_runner.scenario import parse_scenario
from tests.waiting import wait_until

from .spark_helpers import admitted

pytestmark = [pytest.mark.spark, pytest.mark.timeout(420)]

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """
version: 1
name: recovery
seed: 9
duration_s: 900
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, keys: 20, arrival: {kind: constant, rate_per_s: 100}}
  - {name: b, keys: 20, arrival: {kind: constant, rate_per_s: 50}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: counts
        source: a
        operators:
          - {kind: window_aggregate, window: {size_s: 4}, function: count}
  - name: bronze
    priority: 1
    delay_target_s: 5
    queries:
      - name: pairs
        source: a
        operators:
          - {kind: filter, predicate: "key < 3"}
          - kind: window_join
            right: b
            window: {size_s: 2}
            on_column: key
            sim: {selectivity: 1}
"""


def committed(checkpoint: Path) -> int:
    """The newest batch Spark has committed (-1: none)."""
    ids = [int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")]
    return max(ids, default=-1)


def start_job(scenario: Path, checkpoint: Path, sink: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "headroom", "run", str(scenario), "--engine", "spark",
        "--plain", "--checkpoint", str(checkpoint), "--sink", "parquet",
        "--sink-path", str(sink), "--log-level", "INFO",
    ]  # fmt: skip
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=out, start_new_session=True)


def test_a_killed_job_resumes_its_windows_and_joins_from_the_checkpoint(tmp_path: Path) -> None:
    scenario = tmp_path / "recovery.yaml"
    scenario.write_text(SCENARIO)
    checkpoint, sink, log = tmp_path / "checkpoint", tmp_path / "sink", tmp_path / "job.log"

    job = start_job(scenario, checkpoint, sink, log)
    try:
        assert wait_until(lambda: committed(checkpoint) >= 3, 180), log.read_text()[-3000:]
        doomed = [job.pid, *running_descendants(job.pid)]
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError):  # gone with its parent already
                os.kill(pid, signal.SIGKILL)
        job.wait(10)
        assert wait_until(lambda: not any(is_running(pid) for pid in doomed), 30)
        before = committed(checkpoint)

        job = start_job(scenario, checkpoint, sink, log)
        # four new batches: at least three control periods measured (``headroom run`` exits 7
        # with fewer), whether or not the last one is stepped before the stop
        assert wait_until(lambda: committed(checkpoint) >= before + 4, 180), log.read_text()[-3000:]
        job.send_signal(signal.SIGTERM)
        assert job.wait(60) == 0, log.read_text()[-3000:]
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    last = committed(checkpoint)

    plan = compile_network(parse_scenario(SCENARIO))
    data = admitted(checkpoint, plan, last)
    rows = ds.dataset(sink, format="parquet", partitioning="hive").to_table().to_pylist()
    rows = [r for r in rows if r["batch_id"] <= last]

    assert_recovery_outputs(rows, data)


def assert_recovery_outputs(
    rows: list[dict[str, Any]], data: dict[tuple[str, str], dict[str, np.ndarray]]
) -> None:
    """``rows`` (the sink's, up to the last committed batch) hold gold's window counts
    and bronze's join matches of the ``data`` admitted, exactly."""
    # every window's newest update counts every admitted tuple once
    a = data[("gold", "a")]
    expected = Counter(zip(np.floor(a["arrival_s"] / 4) * 4, a["key"].astype(float), strict=True))
    assert final_values(r for r in rows if r["class"] == "gold") == {
        cell: float(n) for cell, n in expected.items()
    }

    # every join match once: a replayed batch replaced its directory
    left = {c: v[data[("bronze", "a")]["key"] < 3] for c, v in data[("bronze", "a")].items()}
    pairs = join_matches(left, data[("bronze", "b")], on="key", size_s=2.0, values=("value",) * 2)
    joined = Counter((r["key"], r["value"], r["value_r"]) for r in rows if r["class"] == "bronze")
    assert joined == pairs and joined

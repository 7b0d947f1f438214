"""A job that runs a query per priority tier (``--queries tier``), killed with SIGKILL
while windows and joins hold state and started again on its checkpoint: each tier's query
writes its own classes' results, exactly those of what its offsets admitted (none twice,
none missing), and the job stops cleanly.

The job is ``headroom run`` in its own process group (Python driver and JVM, in Spark's
FAIR mode): gold's window counts over ``a`` in the top tier's query, bronze's join of
``a`` with ``b`` in the lower tier's. ``--plain`` admits every waiting tuple, so each
tier's offsets say exactly what its outputs must hold, and the tuples that arrived while
it was down are read after the restart. The generated source replays the admitted tuples
from the offsets alone (``spark_helpers.admitted``).

The offset and commit logs are written by Spark's ``FileSystem``-based checkpoint
manager (``sparkconf.CHECKPOINT_PROPERTIES``): a temporary file renamed into place, which
a kill must not leave half written.
"""

from __future__ import annotations

import contextlib
import json
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
from spark_runner.engine.dataflow.tiers import tier_classes, tier_scenario
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


def start_job(scenario: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    # the test ends each run (a SIGKILL, then a SIGTERM) once its tiers have committed
    # enough batches: a cold JVM's first batches take a time that varies with the machine
    command = [
        sys.executable, "-m", "headroom", "run", str(scenario), "--engine", "spark",
        "--queries", "tier", "--plain", "--checkpoint", str(tmp_path / "checkpoint"),
        "--sink", "parquet", "--sink-path", str(tmp_path / "sink"), "--duration", "600",
        "--out", str(tmp_path / "r.json"), "--log-level", "INFO",
    ]  # fmt: skip
    with (tmp_path / "job.log").open("ab") as out:
        return subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=out, start_new_session=True)


def kill(job: subprocess.Popen[bytes]) -> None:
    doomed = [job.pid, *running_descendants(job.pid)]
    for pid in doomed:
        with contextlib.suppress(ProcessLookupError):  # gone with its parent already
            os.kill(pid, signal.SIGKILL)
    job.wait(10)
    assert wait_until(lambda: not any(is_running(pid) for pid in doomed), 30)


def test_each_tier_query_writes_exactly_its_classes_results_across_a_kill(
    tmp_path: Path,
) -> None:
    scenario_file = tmp_path / "tiers.yaml"
    scenario_file.write_text(SCENARIO)
    checkpoint, log = tmp_path / "checkpoint", tmp_path / "job.log"
    tiers_committed = lambda n: all(committed(checkpoint / f"tier{i}") >= n for i in (0, 1))  # noqa: E731
    job = start_job(scenario_file, tmp_path)
    try:
        assert wait_until(lambda: tiers_committed(3), 180), log.read_text()[-3000:]
        kill(job)
        log.write_text("")  # the second run's log alone is judged below
        restarted_at = min(committed(checkpoint / f"tier{i}") for i in (0, 1))
        job = start_job(scenario_file, tmp_path)
        # three measured periods after the replayed batch (the run needs three to be judged)
        assert wait_until(lambda: tiers_committed(restarted_at + 4), 240), log.read_text()[-3000:]
        job.send_signal(signal.SIGTERM)
        assert job.wait(120) == 0, log.read_text()[-3000:]
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    text = log.read_text()
    assert "FAIR pools: tier0" in text, text[-3000:]
    assert " ERROR " not in text and "Traceback" not in text, text[-3000:]
    assert "replaced a previously registered data source" not in text, text[-3000:]

    results = json.loads((tmp_path / "r.json").read_text())
    assert [t["classes"] for t in results["engine"]["tiers"]] == [["gold"], ["bronze"]]
    assert all(results["classes"][n]["outputs"] > 0 for n in ("gold", "bronze"))

    scenario = parse_scenario(SCENARIO)
    tiers = tier_classes(scenario)
    assert tiers == [["gold"], ["bronze"]]
    data, rows = {}, {}
    for i, names in enumerate(tiers):
        tier_checkpoint = checkpoint / f"tier{i}"
        last = committed(tier_checkpoint)
        plan = compile_network(tier_scenario(scenario, names, top=i == 0))
        data.update(admitted(tier_checkpoint, plan, last))
        table = ds.dataset(tmp_path / "sink" / f"tier={i}", format="parquet", partitioning="hive")
        rows[i] = [r for r in table.to_table().to_pylist() if r["batch_id"] <= last]
        assert {r["class"] for r in rows[i]} == set(names)

    assert_outputs([*rows[0], *rows[1]], data)
    # the sink's directory reads as one table, the tier a column
    whole = ds.dataset(tmp_path / "sink", format="parquet", partitioning="hive").to_table()
    assert set(whole.column("tier").to_pylist()) == {0, 1}


def assert_outputs(
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

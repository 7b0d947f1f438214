"""A job that runs a query per priority tier (``--queries tier``): each tier's query
writes its own classes' results, exactly those of what its offsets admitted, and the job
stops cleanly.

The job is ``headroom run`` in its own process (its own JVM, in Spark's FAIR mode) on the
recovery test's scenario: gold's window counts over ``a`` in the top tier's query,
bronze's join of ``a`` with ``b`` in the lower tier's. ``--plain`` admits every waiting
tuple, so each tier's offsets say exactly what its outputs must hold.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spark_runner.engine.dataflow.network import compile_network
from spark_runner.engine.dataflow.tiers import tier_classes, tier_scenario
from spark_runner.scenario import parse_scenario

from .spark_helpers import admitted
from .test_recovery import ROOT, SCENARIO, assert_recovery_outputs, committed

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


def test_each_tier_query_writes_exactly_its_classes_results(tmp_path: Path) -> None:
    scenario_file = tmp_path / "tiers.yaml"
    scenario_file.write_text(SCENARIO)
    checkpoint, sink, out = tmp_path / "checkpoint", tmp_path / "sink", tmp_path / "r.json"
    # long enough for a few periods after each tier's first batch, which pays for a cold
    # JVM's start (the run needs three measured periods to be judged)
    command = [
        sys.executable, "-m", "headroom", "run", str(scenario_file), "--engine", "spark",
        "--queries", "tier", "--plain", "--checkpoint", str(checkpoint), "--sink", "parquet",
        "--sink-path", str(sink), "--duration", "25", "--out", str(out), "--log-level", "INFO",
    ]  # fmt: skip
    job = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False
    )
    log = job.stderr
    assert job.returncode == 0, log[-3000:]
    assert "FAIR pools: tier0" in log, log[-3000:]
    assert " ERROR " not in log and "Traceback" not in log, log[-3000:]
    assert "replaced a previously registered data source" not in log, log[-3000:]

    results = json.loads(out.read_text())
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
        table = ds.dataset(sink / f"tier={i}", format="parquet", partitioning="hive").to_table()
        rows[i] = [r for r in table.to_pylist() if r["batch_id"] <= last]
        assert {r["class"] for r in rows[i]} == set(names)

    assert_recovery_outputs([*rows[0], *rows[1]], data)
    # the sink's directory reads as one table, the tier a column
    whole = ds.dataset(sink, format="parquet", partitioning="hive").to_table()
    assert set(whole.column("tier").to_pylist()) == {0, 1}

"""The job's executors resized on a real standalone cluster (a master and two 1-core
workers started by the test) through Spark's executor allocation API, with no restart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_runner.engine.cluster import StandaloneCluster
from spark_runner.engine.executors import LOCAL_REASON, ExecutorPool

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]


def test_a_standalone_application_grows_and_shrinks_its_executors(tmp_path: Path) -> None:
    with StandaloneCluster(tmp_path / "cluster", workers=2, cores=1, memory="768m") as cluster:
        probe = subprocess.run(
            [sys.executable, "-m", "tests.spark_runner.pool_probe", cluster.master_url,
             cluster.ui_url],
            cwd=ROOT, capture_output=True, text=True, timeout=200, check=False,
        )  # fmt: skip
    line = next((x for x in probe.stdout.splitlines() if x.startswith("POOL ")), None)
    assert probe.returncode == 0 and line is not None, probe.stderr[-3000:]
    seen = json.loads(line.removeprefix("POOL "))
    print(seen)  # the start-up delay docs/spark-runner.md reports (pytest -s)
    assert seen["elastic"] is True
    assert seen["free_at_one"] == 1  # one worker's core left, and the job may hold 2
    assert seen["count"] == 200_000  # the grown pool ran a job
    assert seen["free_at_two"] == 0
    assert seen["serving_after"] == 1


def test_a_local_master_says_it_cannot_scale(spark: SparkSession) -> None:
    pool = ExecutorPool(spark, max_executors=4)
    assert pool.reason == LOCAL_REASON and not pool.elastic
    pool.resize(3)  # nothing to do, nothing raised
    assert pool.serving() == [] and pool.free_executors() == 3

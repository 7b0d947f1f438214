"""The scenario's operators run as Spark operators: their results, against the same
operators computed here from the tuples the offsets say each batch admitted; and what a
batch sends to the driver.

Runs without the controller's shedding (``plain``: every waiting tuple is admitted), so
the reference is every tuple of the log up to the last batch.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from pyspark.sql import SparkSession

from spark_runner.engine.controller import ControllerOptions
from spark_runner.scenario import parse_scenario
from tests.waiting import wait_until

from .spark_helpers import Run, admitted, join_pairs

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

THREE_KINDS = """
version: 1
name: three-kinds
seed: 7
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, keys: 40, arrival: {kind: constant, rate_per_s: 300}}
  - {name: b, keys: 40, arrival: {kind: constant, rate_per_s: 200}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: small
        source: a
        operators:
          - {kind: filter, predicate: "value < 0.5"}
          - {kind: project, columns: [key, value]}
  - name: silver
    priority: 3
    delay_target_s: 5
    queries:
      - name: sums
        source: b
        operators:
          - {kind: map, expression: "value * 10", output: v10, cpu_cost_per_tuple_s: 0}
          - kind: window_aggregate
            window: {type: sliding, size_s: 2, slide_s: 1}
            function: sum
            column: v10
  - name: bronze
    priority: 1
    delay_target_s: 5
    queries:
      - name: pairs
        source: a
        operators:
          - {kind: filter, predicate: "key < 10"}
          - kind: window_join
            right: b
            window: {size_s: 1}
            on_column: key
            sim: {selectivity: 1}
"""


def test_filters_windows_and_joins_compute_on_spark_what_the_scenario_says(
    spark: SparkSession, tmp_path: Path
) -> None:
    run = Run(
        spark,
        parse_scenario(THREE_KINDS),
        tmp_path,
        options=ControllerOptions(plain=True),
        sink="memory",
    )
    try:
        run.start().until(lambda: run.engine.reported_batch >= 6, timeout_s=120)
        run.engine.hold()
        assert wait_until(
            lambda: (
                not run.engine.query
                or (
                    not run.engine.query.status["isTriggerActive"]
                    and not run.engine.unreported_batches()
                )
            ),
            30,
        )
        last = run.engine.reported_batch
        rows = [r.asDict() for r in spark.table(run.engine.settings.name).collect()]
    finally:
        run.stop()
    data = admitted(run.engine.settings.checkpoint_dir, run.engine.plan, last)

    # a stateless query: exactly the admitted tuples its filter keeps
    a = data[("gold", "a")]
    keep = a["value"] < 0.5
    expected = Counter(zip(a["key"][keep].astype(float), a["value"][keep], strict=True))
    got = Counter((r["key"], r["value"]) for r in rows if r["class"] == "gold")
    assert got == expected and got

    # a sliding window sum: the last update of every window is the sum over its tuples
    b = data[("silver", "b")]
    finals: dict[tuple[float, float], float] = {}
    for r in rows:
        if r["class"] == "silver":
            cell = (r["window_start_s"], r["key"])
            finals[cell] = max(finals.get(cell, 0.0), r["value"])
    reference: dict[tuple[float, float], float] = {}
    for t, k, v in zip(b["arrival_s"], b["key"], b["value"], strict=True):
        for start in (np.floor(t) - 1.0, np.floor(t)):
            cell = (float(start), float(k))
            reference[cell] = reference.get(cell, 0.0) + 10 * v
    assert finals.keys() == reference.keys()
    for cell, total in reference.items():
        assert finals[cell] == pytest.approx(total, rel=1e-9)

    # a window join: every pair with equal keys at most 1 s apart, once
    pairs = join_pairs(data[("bronze", "a")], data[("bronze", "b")], key_below=10, size_s=1.0)
    joined = Counter((r["key"], r["value"], r["value2"]) for r in rows if r["class"] == "bronze")
    assert joined == pairs and joined


def driver_result_bytes(spark: SparkSession) -> tuple[int, int]:
    """(stages, bytes their tasks returned to the driver) since the session started."""
    store = spark.sparkContext._jsc.sc().statusStore()
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    gateway = spark.sparkContext._gateway
    assert gateway is not None
    stages = store.stageList(
        jvm.java.util.ArrayList(),
        False,
        False,
        gateway.new_array(jvm.double, 0),
        jvm.java.util.ArrayList(),
    )
    total = sum(int(stages.apply(i).resultSize()) for i in range(stages.size()))
    return stages.size(), total


def result_bytes_per_batch(spark: SparkSession, tmp_path: Path, scale: int) -> tuple[float, float]:
    """(bytes the tasks return to the driver, tuples admitted) per batch, over 4 batches
    after the first 3, with the test scenario's rates times ``scale``."""
    text = (
        THREE_KINDS.replace("rate_per_s: 300}", f"rate_per_s: {300 * scale}}}")
        .replace("rate_per_s: 200}", f"rate_per_s: {200 * scale}}}")
        .replace("key < 10", "key < 2")
    )
    run = Run(spark, parse_scenario(text), tmp_path, options=ControllerOptions(plain=True))
    try:
        run.start().until(lambda: run.engine.reported_batch >= 3, timeout_s=120)
        _, before = driver_result_bytes(spark)
        first = run.engine.reported_batch
        run.until(lambda: run.engine.reported_batch >= first + 4, timeout_s=120)
        _, after = driver_result_bytes(spark)
        last = run.engine.reported_batch
    finally:
        run.stop()
    tuples = sum(
        c["admitted"]
        for entry in run.engine.controller.series
        if first < entry["batch"] <= last
        for c in entry["classes"].values()
    )
    return (after - before) / (last - first), tuples / (last - first)


def test_a_batch_sends_the_driver_measurements_not_tuples(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Through a filter, a window aggregate and a join, what the tasks of a batch return
    to the driver is their metrics (counts, arrival sketches): the same few hundred kB
    per batch at five times the tuples. A collect would grow with them (tens of bytes
    per tuple)."""
    low_bytes, low_tuples = result_bytes_per_batch(spark, tmp_path / "low", 1)
    high_bytes, high_tuples = result_bytes_per_batch(spark, tmp_path / "high", 5)
    assert high_tuples > 3.5 * low_tuples, (low_tuples, high_tuples)
    assert high_bytes < 1.3 * low_bytes + 20_000, (low_bytes, high_bytes)
    assert high_bytes < 400_000

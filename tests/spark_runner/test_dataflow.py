"""The scenario's operators run as Spark operators: their results, against the same
operators computed here from the tuples the offsets say each batch admitted; and what a
batch sends to the driver.

Runs without the controller's shedding (``plain``: every waiting tuple is admitted), so
the reference is every tuple of the log up to the last batch.
"""

from __future__ import annotations

import calendar
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from pyspark.sql import SparkSession

from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.engine.sources.replay import join_matches
from spark_runner.scenario import parse_scenario
from tests.waiting import wait_until

from .spark_helpers import Run, admitted

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

THREE_KINDS = """
version: 1
name: three-kinds
seed: 7
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, keys: 40, arrival: {kind: constant, rate_per_s: 150}}
  - name: b
    arrival: {kind: constant, rate_per_s: 100}
    columns:
      - {name: key, type: long, generator: {kind: zipf, n: 40, s: 1.2}}
      - {name: amount, type: double, generator: {kind: normal, mean: 50, sd: 10}}
      - name: country
        type: string
        generator: {kind: choice, values: [FR, DE, US], weights: [3, 2, 1]}
      - {name: ts, type: timestamp, generator: {kind: arrival, lag_max_s: 0.5}}
    event_time: ts
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
          - {kind: map, expression: "amount * 10", output: v10, cpu_cost_per_tuple_s: 0}
          - kind: window_aggregate
            window: {type: sliding, size_s: 2, slide_s: 1}
            function: sum
            column: v10
            group_by: [key, country]
  - name: analyst
    priority: 2
    delay_target_s: 5
    queries:
      - name: averages
        source: b
        operators:
          - kind: sql
            statement: >-
              SELECT window(event_time, '2 seconds') AS w, key, avg(amount) AS avg_amount,
              count(*) AS n FROM b WHERE amount > 40 GROUP BY 1, key
      - name: matches
        source: a
        operators:
          - kind: sql
            statement: >-
              SELECT a.key, a.value, b.amount FROM a JOIN b ON a.key = b.key
              AND b.event_time BETWEEN a.event_time - INTERVAL 1 SECONDS
              AND a.event_time + INTERVAL 1 SECONDS WHERE a.key < 5
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


@dataclass(frozen=True)
class ThreeKinds:
    """One run of THREE_KINDS (Parquet sink), the two tests below read: the rows the sink
    holds, the tuples the offset log says each point admitted, and per batch the bytes
    its tasks returned to the driver and the tuples it admitted."""

    rows: list[dict[str, Any]]
    data: dict[tuple[str, str], dict[str, np.ndarray]]
    sent: dict[int, int]
    tuples: dict[int, int]
    read_s: dict[str, float]
    """Per query output (class.query), the seconds its sources took over the run."""


@pytest.fixture(scope="module")
def three_kinds(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> ThreeKinds:
    tmp_path = tmp_path_factory.mktemp("three_kinds")
    sink = tmp_path / "sink"
    run = Run(
        spark,
        parse_scenario(THREE_KINDS),
        tmp_path,
        options=ControllerOptions(plain=True),
        sink="parquet",
        sink_path=str(sink),
    )
    try:
        run.start().until(lambda: run.engine.reported_batch >= 5, timeout_s=120)
        query = run.engine.query
        assert query is not None
        run.engine.hold()
        assert wait_until(
            lambda: not query.status["isTriggerActive"] and not run.engine.unreported_batches(),
            30,
        )
        sent = result_bytes_by_batch(spark, str(query.runId))
        last = run.engine.reported_batch
    finally:
        run.stop()
    rows = [r.asDict(recursive=True) for r in spark.read.parquet(str(sink)).collect()]
    tuples = {
        entry["batch"]: sum(c["admitted"] for c in entry["classes"].values())
        for entry in run.engine.controller.series
    }
    data = admitted(run.engine.settings.checkpoint_dir, run.engine.plan, last)
    read = run.engine.controller.source_read_s
    read_s = {".".join(n.output or ()): read.get(n.index, 0.0) for n in run.engine.plan.outputs}
    return ThreeKinds(rows, data, sent, tuples, read_s)


def test_filters_windows_and_joins_compute_on_spark_what_the_scenario_says(
    three_kinds: ThreeKinds,
) -> None:
    rows, data = three_kinds.rows, three_kinds.data

    # a stateless query: exactly the admitted tuples its filter keeps
    a = data[("gold", "a")]
    keep = a["value"] < 0.5
    expected = Counter(zip(a["key"][keep].astype(float), a["value"][keep], strict=True))
    got = Counter((r["key"], r["value"]) for r in rows if r["class"] == "gold")
    assert got == expected and got

    # a sliding window sum over a stream with its own columns, grouped by two of them, in
    # the stream's event time (up to 0.5 s before arrival): the last update of every
    # window is the sum over its tuples
    b = data[("silver", "b")]
    finals: dict[tuple[float, int, str], float] = {}
    for r in rows:
        if r["class"] == "silver":
            cell = (r["window_start_s"], r["key"], r["country"])
            finals[cell] = max(finals.get(cell, 0.0), r["value"])
    reference: dict[tuple[float, int, str], float] = {}
    for ts, k, country, amount in zip(b["ts"], b["key"], b["country"], b["amount"], strict=True):
        t = ts / 1e6
        for start in (np.floor(t) - 1.0, np.floor(t)):
            cell = (float(start), int(k), str(country))
            reference[cell] = reference.get(cell, 0.0) + 10 * amount
    assert finals.keys() == reference.keys()
    for cell, total in reference.items():
        assert finals[cell] == pytest.approx(total, rel=1e-9)

    # a window join of the two streams: every pair with equal keys whose event times are
    # at most 1 s apart, once; the right side's clashing key is key_r
    left = {c: v[data[("bronze", "a")]["key"] < 10] for c, v in data[("bronze", "a")].items()}
    left["t"] = np.floor(left["arrival_s"] * 1e6 + 0.5)  # as Spark rounds it (half up), µs
    right = {**data[("bronze", "b")], "t": data[("bronze", "b")]["ts"]}
    pairs = join_matches(
        left, right, on="key", size_s=1e6, values=("value", "amount"), times=("t", "t")
    )
    bronze = [r for r in rows if r["class"] == "bronze"]
    assert all(r["key_r"] == r["key"] for r in bronze)
    joined = Counter((r["key"], r["value"], r["amount"]) for r in bronze)
    assert joined == pairs and joined

    # the same two kinds written in SQL: a windowed average and count per key, and a join
    sql = [r for r in rows if r["class"] == "analyst"]
    newest: dict[tuple[float, int], tuple[float, int]] = {}
    for r in (r for r in sql if r["query"] == "averages"):
        slot = (float(calendar.timegm(r["w"]["start"].timetuple())), int(r["key"]))
        if r["n"] >= newest.get(slot, (0.0, 0))[1]:
            newest[slot] = (r["avg_amount"], r["n"])
    b = data[("analyst", "b")]
    over = b["amount"] > 40
    sums: dict[tuple[float, int], list[float]] = {}
    for ts, k, amount in zip(b["ts"][over], b["key"][over], b["amount"][over], strict=True):
        sums.setdefault((float(np.floor(ts / 2e6) * 2), int(k)), []).append(float(amount))
    assert newest.keys() == sums.keys() and newest
    for window, amounts in sums.items():
        assert newest[window][1] == len(amounts)
        assert newest[window][0] == pytest.approx(statistics.fmean(amounts), rel=1e-9)
    left = {c: v[data[("analyst", "a")]["key"] < 5] for c, v in data[("analyst", "a")].items()}
    left["t"] = np.floor(left["arrival_s"] * 1e6 + 0.5)  # as Spark rounds it (half up), µs
    right = {**data[("analyst", "b")], "t": data[("analyst", "b")]["ts"]}
    pairs = join_matches(
        left, right, on="key", size_s=1e6, values=("value", "amount"), times=("t", "t")
    )
    joined = Counter((r["key"], r["value"], r["amount"]) for r in sql if r["query"] == "matches")
    assert joined == pairs and joined


def result_bytes_by_batch(spark: SparkSession, run_id: str) -> dict[int, int]:
    """Per batch of the query run ``run_id``, the bytes its tasks returned to the driver
    (Spark's status store: the jobs a batch ran carry ``batch = N`` in their description)."""
    sc = spark.sparkContext
    store = sc._jsc.sc().statusStore()
    jvm = sc._jvm
    assert jvm is not None
    jobs = store.jobsList(jvm.java.util.ArrayList())
    found: dict[int, int] = {}
    for i in range(jobs.size()):
        job = jobs.apply(i)
        description = job.description()
        text = str(description.get()) if description.isDefined() else ""
        batch = re.search(r"batch = (\d+)", text)
        if f"runId = {run_id}" not in text or batch is None:
            continue
        stages = job.stageIds()
        size = sum(
            int(store.lastStageAttempt(stages.apply(j)).resultSize()) for j in range(stages.size())
        )
        found[int(batch.group(1))] = found.get(int(batch.group(1)), 0) + size
    return found


def test_every_query_counts_its_sources_reading(three_kinds: ThreeKinds) -> None:
    """Each scan of a point sums its rows' ``read_s`` on Spark, and every query's branch
    gets its sources' time: the cost model's share of the Python reader's work."""
    assert three_kinds.read_s and all(s > 0 for s in three_kinds.read_s.values()), (
        three_kinds.read_s
    )


def test_a_batch_sends_the_driver_measurements_not_tuples(three_kinds: ThreeKinds) -> None:
    """Through a filter, a window aggregate and a join, what the tasks of a batch return
    to the driver is their metrics (counts, arrival sketches: 0.92 MB per batch, whatever
    its size, in a run at twice these rates): the largest batch (the second holds what
    arrived while the first paid for Spark's start) returns less than 4 bytes per extra
    tuple over the smallest one that holds a tenth of its tuples (the first batch, a
    handful of tuples, returns sparser sketches, which would read as growth). A collect
    grows with the tuples (a tuple's key and value alone are 16 bytes); the Parquet
    sink's rows are written by the executors."""
    sent, tuples = three_kinds.sent, three_kinds.tuples
    batches = [b for b in tuples if b in sent]
    assert len(batches) >= 4, (sent, tuples)
    big = max(batches, key=lambda b: tuples[b])
    small = min((b for b in batches if tuples[b] >= 0.1 * tuples[big]), key=lambda b: tuples[b])
    extra = tuples[big] - tuples[small]
    assert extra > 0.25 * tuples[small], (sent, tuples)
    assert sent[big] - sent[small] < 4 * extra, (sent, tuples)
    assert max(sent.values()) < 1_500_000, sent

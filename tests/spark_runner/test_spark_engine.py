"""The engine on a real local Spark (the session the Spark tests share): a live update
while a class sheds, the Redis and files sources end to end, expressions as written
(priority under load: :mod:`test_spark_priority`).

Every wait polls against a deadline. Start-up of the JVM, the Python workers and the
first batches takes seconds; the runs use a short warm-up (discarded) before they count.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import redis
from pyspark.sql import SparkSession

from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.engine.dataflow.network import stream_specs
from spark_runner.engine.dataflow.sink import batch_marker
from spark_runner.engine.sources.redis_log import Producer, id_seconds, stream_key
from spark_runner.scenario import parse_scenario
from spark_runner.scenario.compose import scenario_live_config
from tests.waiting import wait_until

from .control_plane import ControlPlaneServer
from .spark_helpers import Run

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]


OVERLOAD = """
version: 1
name: overload
seed: 11
duration_s: 600
control: {{period_s: 1.0, mode: {mode}}}
streams:
  - {{name: small, arrival: {{kind: constant, rate_per_s: 40}}}}
  - {{name: flood, arrival: {{kind: constant, rate_per_s: {flood}}}}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    manager: {{kind: aloma, params: {{max_shed: 0.99}}}}
    queries:
      - name: q
        source: small
        operators:
          - {{kind: filter, predicate: "value < 0.8"}}
          - {{kind: project, columns: [key, value]}}
  - name: bronze
    priority: 1
    delay_target_s: 3
    manager: {{kind: aloma, params: {{max_shed: 0.99}}}}
    queries:
      - name: q
        source: flood
        operators:
          - {{kind: map, expression: "value * 2", output: v2, cpu_cost_per_tuple_s: 0.0005}}
          - {{kind: project, columns: [key, v2]}}
"""


def overload(mode: str = "dilos", flood: int = 4000) -> str:
    # bronze asks for 4000 × 0.5 ms = 2 s of CPU per second: on 2 cores, with a batch's
    # fixed cost, well over what the engine can do; gold's 40 tuples/s cost nothing
    return OVERLOAD.format(mode=mode, flood=flood)


@pytest.mark.timing
def test_a_live_update_takes_effect_within_two_batches(spark: SparkSession, tmp_path: Path) -> None:
    """Recommend-only switched on while bronze sheds: from the second batch after the
    control plane hands the new version over, nothing is shed, and the manager's decisions
    are still reported (ALoMa recommends shedding once the response time passes its
    thresholds: in one CI run that was after the second batch, so the test waits for it)."""
    from spark_runner.job.control_client import ControlPoller

    scenario = parse_scenario(overload())
    plane = ControlPlaneServer()
    plane.start()
    run = Run(spark, scenario, tmp_path, options=ControllerOptions(warmup_s=4.0))
    poller = ControlPoller(
        plane.base_url, 1, run.engine.controller.offer, token=plane.token, wait_s=2.0
    )
    poller.start()
    try:
        run.start().until(lambda: sum(s.shed_count or 0 for s in run.of("bronze")) > 0, 90)
        live = scenario_live_config(scenario)
        plane.publish(
            live.model_copy(update={"version": 1, "recommend_only": True}).model_dump(mode="json")
        )
        run.until(lambda: 1 in plane.delivered_at, timeout_s=10)
        delivered = plane.delivered_at[1]

        def recommended() -> bool:
            after = [s for s in run.of("bronze") if s.t > delivered]
            return len(after) >= 3 and (after[-1].shed_fraction or 0) > 0

        run.until(recommended, 30)
    finally:
        run.stop()
        poller.close()
        plane.stop()
    after = [s for s in run.of("bronze") if s.t > delivered]
    assert after[0].config_version == 1  # applied at the first step after delivery
    assert all(s.shed_count == 0 for s in after[1:])  # took effect
    assert (after[-1].shed_fraction or 0) > 0  # the manager still recommends shedding
    assert plane.acks[-1] == 1
    assert all(s.config_version == 0 for s in run.of("bronze") if s.t <= delivered)


REDIS_SCENARIO = """
version: 1
name: redis-e2e
seed: 5
duration_s: 120
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: orders, arrival: {kind: constant, rate_per_s: 200}}
  - {name: clicks, arrival: {kind: constant, rate_per_s: 300}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 4
    queries:
      - name: big
        source: orders
        operators:
          - {kind: filter, predicate: "value < 0.5"}
  - name: bronze
    priority: 1
    delay_target_s: 6
    queries:
      - name: per_key
        source: clicks
        operators:
          - {kind: window_aggregate, window: {size_s: 2}, function: count}
"""


@pytest.mark.services
def test_redis_source_end_to_end(spark: SparkSession, tmp_path: Path, redis_url: str) -> None:
    """Read from Redis streams, write to a Redis stream (the redis sink)."""
    scenario = parse_scenario(REDIS_SCENARIO)
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    out_key = f"{prefix}:out"
    client = redis.Redis.from_url(redis_url)
    producer = Producer(client, stream_specs(scenario), prefix)
    stop = threading.Event()
    feeder = threading.Thread(
        target=producer.run, args=(600.0,), kwargs={"should_stop": stop.is_set}, daemon=True
    )
    run = Run(
        spark,
        scenario,
        tmp_path,
        source="redis",
        redis_url=redis_url,
        redis_prefix=prefix,
        sink="redis",
        sink_path=out_key,
    )
    try:
        run.start()
        feeder.start()
        run.until(lambda: run.measured_periods() >= 8, timeout_s=90)
    finally:
        run.stop()
        stop.set()
        feeder.join(5)
    try:
        record = run.engine.controller.last_record
        assert record is not None
        for point, state in zip(run.engine.plan.points, record.end.points, strict=True):
            # exact: the samples' arrivals add up to what the log holds past the start
            key = stream_key(prefix, point.stream)
            assert state.arrived <= int(client.xinfo_stream(key)["entries-added"]) - state.base
            reported = sum(s.arrived_count for s in run.of(point.class_name))
            assert reported == state.arrived
            assert state.taken == state.kept + state.shed
        written = cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(out_key))
        rows = [json.loads(f[b"json"]) for _, f in written]
        # each batch once, in order (a batch's entries and its id in one transaction)
        batches = [int(f[b"batch_id"]) for _, f in written]
        assert batches == sorted(batches)
        assert int(client.get(batch_marker(out_key)) or -1) >= max(batches)
        gold = [r for r in rows if r["class"] == "gold"]
        assert gold and {r["query"] for r in rows} == {"big", "per_key"}
        # a gold output's arrival instant is its entry's append instant (the id)
        entries = cast(
            "list[tuple[bytes, dict[bytes, bytes]]]",
            client.xrange(stream_key(prefix, "orders"), count=5000),
        )
        appended = {int(f[b"seq"]): id_seconds(i.decode()) for i, f in entries}
        by_value = {round(float(f[b"value"]), 12): int(f[b"seq"]) for _, f in entries}
        for r in gold[:50]:
            assert r["arrival_s"] == appended[by_value[round(r["value"], 12)]]
        # bronze's window updates (update mode) carry their newest input's arrival
        assert all(
            r["window_end_s"] - r["window_start_s"] == 2.0 for r in rows if r["query"] == "per_key"
        )
    finally:
        client.delete(
            out_key, batch_marker(out_key), *(stream_key(prefix, s.name) for s in scenario.streams)
        )
        client.close()
    assert wait_until(lambda: not run.engine.query or not run.engine.query.isActive, 5)


FILES_SCENARIO = """
version: 1
name: files-e2e
seed: 5
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - name: orders
    arrival: {kind: constant, rate_per_s: 100}
    columns:
      - {name: account, type: long, generator: {kind: zipf, n: 10}}
      - {name: amount, type: double}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: big
        source: orders
        operators:
          - kind: sql
            statement: "SELECT account, amount * 2 AS doubled FROM orders WHERE amount > 10"
"""


def test_a_growing_directory_of_files_feeds_a_sql_query(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A producer renames JSON-lines, CSV and Parquet files into the stream's directory
    while the job runs; the SQL query's outputs (the json sink: a directory per batch)
    are exactly the admitted rows it keeps."""
    orders = tmp_path / "in" / "orders"
    orders.mkdir(parents=True)
    manifest_path = tmp_path / "checkpoint" / "headroom" / "files" / "orders.json"
    written: dict[str, list[tuple[int, float]]] = {}
    stop = threading.Event()

    def produce() -> None:
        n = 0
        while not stop.wait(0.2):
            rows = [(n * 10 + i, float((n * 7 + i * 13) % 40)) for i in range(10)]
            name = f"{n:05d}.{('json', 'csv', 'parquet')[n % 3]}"
            written[name] = rows
            hidden = orders / f".{n:05d}"
            if n % 3 == 0:
                hidden.write_text(
                    "\n".join(json.dumps({"account": a, "amount": v}) for a, v in rows)
                )
            elif n % 3 == 1:
                hidden.write_text("account,amount\n" + "\n".join(f"{a},{v}" for a, v in rows))
            else:
                pq.write_table(
                    pa.table({"account": [a for a, _ in rows], "amount": [v for _, v in rows]}),
                    hidden,
                )
            os.replace(hidden, orders / name)
            n += 1

    feeder = threading.Thread(target=produce, daemon=True)
    run = Run(
        spark,
        parse_scenario(FILES_SCENARIO),
        tmp_path,
        source="files",
        files_dir=str(tmp_path / "in"),
        sink="json",
        sink_path=str(tmp_path / "out"),
        options=ControllerOptions(plain=True),
    )
    try:
        run.start()
        # files added once the sources have looked (what was there before is not read)
        run.until(manifest_path.exists, timeout_s=60)
        feeder.start()
        run.until(lambda: run.engine.reported_batch >= 5, timeout_s=90)
        stop.set()
        run.engine.hold()
        query = run.engine.query
        assert query is not None
        assert wait_until(
            lambda: not query.status["isTriggerActive"] and not run.engine.unreported_batches(),
            30,
        )
        rows = [
            json.loads(line)
            for part in (tmp_path / "out").glob("batch_id=*/part-*.json")
            for line in part.read_text().splitlines()
        ]
        record = run.engine.controller.last_record
    finally:
        stop.set()
        run.stop()
        if feeder.is_alive():
            feeder.join(5)
    assert record is not None
    manifest = json.loads(manifest_path.read_text())
    admitted = record.end.points[0].kept
    in_order = [row for name, _, _ in manifest["files"] for row in written[name]]
    assert admitted > 0 and manifest["files"]
    expected = Counter((a, 2 * v) for a, v in in_order[:admitted] if v > 10)
    got = Counter((r["account"], r["doubled"]) for r in rows)
    assert got == expected and got


@pytest.mark.parametrize(
    "expression",
    [
        "value * 2 + 1",
        "CASE WHEN value > 0.5 THEN key ELSE -key END",
        "cast(value * 100 AS INT) % 3 + pmod(key, 5) + hash(key) % 2",
        "coalesce(nullif(value, 0.25), 1) BETWEEN 0 AND 2",
        "log10(value) + log2(value) + ln(value) + pow(value, 2) + signum(value)",
        "if(key IN (1, 2, 3), length(concat('a', 'bc')), round(value, 1))",
        "'a' 'b' || upper(substr('xyz', 1, 2)) = 'abXY'",
    ],
)
def test_a_checked_expression_means_on_spark_what_its_author_wrote(
    spark: SparkSession, expression: str
) -> None:
    """Spark runs the checked tree rendered back to SQL, never the user's text: the
    rendering must compute the same values as the text itself."""
    from spark_runner.scenario.sql_allowlist import check_expression

    rows = spark.createDataFrame([(1, 0.25), (7, 0.75), (2, 0.5)], "key BIGINT, value DOUBLE")
    rendered = check_expression(expression).sql
    assert (
        rows.selectExpr(f"{rendered} AS x").collect()
        == rows.selectExpr(f"{expression} AS x").collect()
    )

"""The latency benchmarks' baseline: the classes' SQL as a user would write it on
plain Spark Structured Streaming.

    python -m bench.plain_latency --files-dir DIR --checkpoint DIR --duration 75 --out out.json
        [--workload trades]

One application, one streaming query per statement of each class of the workload
(:data:`bench.latency_workload.WORKLOADS`; ``trades``: three classes of one query): each
reads its class's stream ``DIR/<stream>/`` through its own CSV file source
(:func:`bench.plain_spark.stream`: ``event_time`` a copy of ``ts``, watermarked 30 s; a
join's other side ``<stream>_r`` through another), runs its statement through
``spark.sql`` over its own temporary views, and writes to the ``noop`` sink in the update
mode with its own checkpoint, on the default trigger (batches back to back). A workload
with calibrated maps gets the job's burn UDF (:mod:`spark_runner.engine.dataflow.jvm_burn`) on the
class path. The session is :func:`bench.plain_spark.session` (the RocksDB state store,
the job's shuffle partitions, no batch without data, AQE and the UI off) with the session
time zone UTC (the rows' ``ts`` are UTC); Spark's default checkpoint file manager unless
``--job-checkpoint-manager`` (headroom job's, which starts no process per log file:
``spark_runner.job.sparkconf.CHECKPOINT_PROPERTIES``). ``--one-query`` runs them as one
query instead (their outputs, each as one JSON column, unioned into one sink): the design
headroom's engine has, to tell what one query for every class costs from the rest.

Each query's input (a join's: its first side) carries an ``observe``, named
``<class>/<k>`` for the class's k-th statement, of its rows' ``ts`` (seconds after
``origin_s``): count, sum, min, max and the quantiles headroom's engine reports
(:data:`spark_runner.engine.measure.measures.QUANTILE_LEVELS`). The progress of every batch of
every query (start, durations, input rows, those metrics) goes to ``--out``, with
``started_s`` (the queries' start) and ``origin_s``. ``--ready`` is created once the
queries run (the benchmark starts its feeder then).
"""

from __future__ import annotations

import argparse
import json
import time
from functools import reduce
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.types import BooleanType

from bench.latency_workload import WORKLOADS, Workload
from bench.plain_spark import session, stream
from spark_runner.engine.dataflow.jvm_burn import CLASS_NAME, UDF_NAME, burn_jar
from spark_runner.engine.dataflow.operators import QUANTILE_ACCURACY
from spark_runner.engine.measure.measures import QUANTILE_LEVELS
from spark_runner.job.sparkconf import CHECKPOINT_PROPERTIES, LOCAL_BURN_CACHE, pyspark_home

POLL_S = 2.0
"""How often the progress is read: Spark keeps each query's last 100 (far more than
2 s of batches)."""


def observed(df: DataFrame, name: str, origin_ms: int) -> DataFrame:
    """``df`` with an ``observe`` named ``name`` of its rows' ``ts`` (s after the origin)."""
    rel = (F.unix_millis(F.col("ts")) - F.lit(origin_ms)) / 1000.0
    levels = F.array(*(F.lit(level) for level in QUANTILE_LEVELS))
    return df.observe(
        name,
        F.count(F.lit(1)).alias("n"),
        F.sum(rel).alias("sum"),
        F.min(rel).alias("min"),
        F.max(rel).alias("max"),
        F.percentile_approx(rel, levels, QUANTILE_ACCURACY).alias("q"),
    )


ONE_QUERY = "all_classes"
"""The name of the one query of ``--one-query``."""


def start_queries(
    spark: SparkSession,
    workload: Workload,
    files_dir: Path,
    checkpoint: Path,
    origin_ms: int,
    one_query: bool,
) -> dict[str, StreamingQuery]:
    """A query per statement, each over its own file sources and views (or one query of
    their union)."""
    outputs = {}
    for c in workload.classes:
        for k, statement in enumerate(c.statements):
            name = f"{c.name}/{k}"
            read = stream(spark, files_dir, c.stream, workload.columns)
            # spark.sql resolves the views now: each query keeps its own sources
            observed(read, name, origin_ms).createOrReplaceTempView(c.stream)
            stream(spark, files_dir, c.stream, workload.columns).createOrReplaceTempView(
                f"{c.stream}_r"
            )
            outputs[name] = spark.sql(statement)
    if one_query:
        rows = [
            df.select(F.lit(name).alias("class"), F.to_json(F.struct("*")).alias("row"))
            for name, df in outputs.items()
        ]
        outputs = {ONE_QUERY: reduce(DataFrame.unionByName, rows)}
    return {
        name: df.writeStream.format("noop")
        .outputMode("update")
        .queryName(name.replace("/", "_"))
        .option("checkpointLocation", str(checkpoint / name.replace("/", "_")))
        .start()
        for name, df in outputs.items()
    }


def collect(running: dict[str, StreamingQuery], into: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Every progress Spark still keeps, by class and batch id."""
    for query in running.values():
        for p in query.recentProgress:
            for name, metrics in p["observedMetrics"].items():
                into.setdefault(name, {})[p["batchId"]] = {
                    "batch": p["batchId"],
                    "timestamp": p["timestamp"],
                    "durations_ms": dict(p["durationMs"]),
                    "input_rows": p["numInputRows"],
                    "metrics": metrics.asDict(),
                }


def burn_udf_jar() -> Path:
    """The job's burn UDF jar (built once in the user's cache, as ``headroom run`` does)."""
    home = pyspark_home()
    jar = burn_jar(home / "jars", LOCAL_BURN_CACHE.expanduser()) if home else None
    if jar is None:
        raise SystemExit("the burn UDF needs a JDK (javac) and pyspark's jars")
    return Path(jar.path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files-dir", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds the queries run")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ready", type=Path, help="created once the queries run")
    parser.add_argument(
        "--job-checkpoint-manager",
        action="store_true",
        help="write the offset and commit logs as headroom's job does (not a user's default)",
    )
    parser.add_argument("--one-query", action="store_true", help="the classes as one query")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="trades")
    args = parser.parse_args()
    workload = WORKLOADS[args.workload]
    spark = session(args.master, burn_udf_jar() if workload.burn else None)
    if workload.burn:
        spark.udf.registerJavaFunction(UDF_NAME, CLASS_NAME, BooleanType())
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    if args.job_checkpoint_manager:
        for key, value in CHECKPOINT_PROPERTIES.items():
            spark.conf.set(key, value)
    origin_ms = int(time.time() * 1000)
    running = start_queries(
        spark, workload, args.files_dir, args.checkpoint, origin_ms, args.one_query
    )
    started = time.time()
    if args.ready is not None:
        args.ready.touch()
    progress: dict[str, dict[int, dict[str, Any]]] = {}
    while time.time() - started < args.duration:
        time.sleep(POLL_S)
        collect(running, progress)
    for query in running.values():
        query.stop()
    collect(running, progress)
    spark.stop()
    document = {
        "started_s": started,
        "origin_s": origin_ms / 1000,
        "batches": {
            name: sorted(b.values(), key=lambda r: r["batch"]) for name, b in progress.items()
        },
    }
    args.out.write_text(json.dumps(document))


if __name__ == "__main__":
    main()

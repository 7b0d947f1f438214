"""The overhead benchmark's baseline: the same SQL on plain Spark Structured Streaming.

    python -m bench.plain_spark --files-dir DIR --duration 60 --period 1 --out progress.json

No headroom: Spark's own CSV file source reads ``DIR/<stream>/`` (one source per query
input, as headroom has one per point), the queries of :data:`bench.overhead_workload.QUERIES`
run through ``spark.sql`` over views with the same columns (``event_time`` a copy of the
stream's ``ts``, watermarked 30 s behind), their outputs are unioned by name and written
to the ``noop`` sink in the update mode, one trigger every ``--period`` seconds. The
Spark settings are the job's (shuffle partitions, the RocksDB state store, no UI). The
progress of every batch (its start, ``triggerExecution``) goes to ``--out``; what each
batch read is in the checkpoint's source logs.
"""

from __future__ import annotations

import argparse
import json
import time
from functools import reduce
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from bench.overhead_workload import QUERIES, WATERMARK_S, spark_schema
from spark_runner.job.sparkconf import ROCKSDB_PROVIDER, SHUFFLE_PARTITIONS


def session(master: str, jar: Path | None = None) -> SparkSession:
    """The job's Spark settings; ``jar`` (the burn UDF's) on the class paths."""
    builder = SparkSession.builder
    if jar is not None:
        builder = builder.config("spark.driver.extraClassPath", str(jar)).config(
            "spark.executor.extraClassPath", str(jar)
        )
    return (
        builder.master(master)
        .appName("plain-spark-baseline")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.log.level", "WARN")
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )


def stream(
    spark: SparkSession, files_dir: Path, name: str, columns: tuple[str, str] | None = None
) -> DataFrame:
    return (
        spark.readStream.schema(spark_schema(name, columns))
        .option("header", True)
        .csv(str(files_dir / name))
        .withColumn("event_time", F.col("ts"))
        .withWatermark("event_time", f"{WATERMARK_S:g} seconds")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files-dir", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--period", type=float, default=1.0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    spark = session(args.master)
    outputs = []
    for query in QUERIES:
        for name in query.reads:  # a source per input, as headroom has a point per input
            stream(spark, args.files_dir, name).createOrReplaceTempView(name)
        outputs.append(spark.sql(query.statement).withColumn("query", F.lit(query.name)))
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), outputs)
    running = (
        union.writeStream.format("noop")
        .outputMode("update")
        .trigger(processingTime=f"{args.period:g} seconds")
        .option("checkpointLocation", str(args.checkpoint))
        .start()
    )
    started = time.time()
    progress: dict[int, dict[str, object]] = {}
    while time.time() - started < args.duration:
        time.sleep(0.5)
        for p in running.recentProgress:
            progress[p["batchId"]] = {
                "batch": p["batchId"],
                "timestamp": p["timestamp"],
                "trigger_s": p["durationMs"].get("triggerExecution", 0) / 1000,
            }
    running.stop()
    spark.stop()
    args.out.write_text(json.dumps({"started_s": started, "batches": list(progress.values())}))


if __name__ == "__main__":
    main()

"""The compiled stateless operators on the streaming DataFrame, and one batch's collect.

The projections of :mod:`expressions` are applied once, to the streaming DataFrame of the
source, when the query starts: Spark analyses the plan once and only re-plans each
micro-batch (a few ms), and a batch costs no py4j round trips beyond its collect. The
``foreachBatch`` handler collects every routed row as one Arrow table: outputs of
stateless queries, inputs of window operators, and one marker row per tuple a filter
dropped or an edge shed. Everything per tuple runs in the executors.
"""

from __future__ import annotations

import time

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_runner.engine.expressions import BURN_BYTES_PER_REPETITION, CompiledPipeline, burn_sql


def apply_pipeline(stream: DataFrame, compiled: CompiledPipeline) -> DataFrame:
    """``stream`` through every stage of ``compiled`` (lazy)."""
    df = stream
    for stage in compiled.stages:
        df = df.selectExpr(*stage)
    return df


def collect_batch(batch_df: DataFrame) -> pa.Table:
    """Run the batch and bring every routed row to the driver, in one Spark job."""
    return batch_df.toArrow()


def measure_repetition_s(
    spark: SparkSession,
    parallelism: int,
    rows: int = 8_000,
    repetitions: int = 300,
    rounds: int = 5,
    warmup_rounds: int = 3,
) -> float:
    """Seconds of CPU one burn repetition costs on the executors (median of ``rounds``).

    Runs the burn expression over ``rows`` rows in ``parallelism`` partitions, and the
    same job without it; the difference × parallelism / (rows × repetitions) is the cost
    of one repetition on one core. ``warmup_rounds`` go first: until the JIT compiler has
    compiled the hashing, a repetition costs several times more.
    """
    base = spark.range(rows, numPartitions=max(1, parallelism)).withColumnRenamed("id", "seq")
    burning = base.where(f"NOT ({burn_sql(str(repetitions))})")

    def timed(df: DataFrame) -> float:
        started = time.perf_counter()
        df.agg(F.count(F.lit(1))).collect()
        return time.perf_counter() - started

    for _ in range(warmup_rounds):
        timed(burning)
    samples = []
    for _ in range(rounds):
        plain = timed(base)
        burnt = timed(burning)
        samples.append(max(burnt - plain, 1e-4) * max(1, parallelism) / (rows * repetitions))
    samples.sort()
    return samples[len(samples) // 2]


__all__ = [
    "BURN_BYTES_PER_REPETITION",
    "apply_pipeline",
    "collect_batch",
    "measure_repetition_s",
]

"""The DataFrame side of the job: generated stream → per-class operators → batch statistics.

Every class is one continuous query over its own stream: a filter that keeps a tuple when
its ``value`` is below the class's selectivity, then a projection that derives ``score``.
The classes share one physical plan whose operators take per-class parameters, which
keeps one scan and one aggregation per micro-batch however many classes there are.

The skeleton's sink is a per-class digest of the output tuples (count, min and mean of
their arrival instants, sum of ``score``), computed in one Spark job per micro-batch
together with the per-class input counts (``observe`` on the batch's input).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from spark_runner.job.config import ClassSnapshot, JobSnapshot
from spark_runner.job.generator import ClassStream
from spark_runner.job.metrics import BatchStats, ClassOutputStats
from spark_runner.job.source import (
    OPTION_CLASSES,
    OPTION_ORIGIN_US,
    SOURCE_NAME,
    ClassStreamSource,
    encode_classes,
)


def class_streams(snapshot: JobSnapshot) -> tuple[ClassStream, ...]:
    """The generated streams; a class's id is its position in the snapshot."""
    return tuple(
        ClassStream(class_id=i, name=c.name, rate_per_s=c.rate_per_s)
        for i, c in enumerate(snapshot.classes)
    )


def read_stream(spark: SparkSession, snapshot: JobSnapshot, origin_us: int) -> DataFrame:
    spark.dataSource.register(ClassStreamSource)
    return (
        spark.readStream.format(SOURCE_NAME)
        .option(OPTION_CLASSES, encode_classes(class_streams(snapshot)))
        .option(OPTION_ORIGIN_US, str(origin_us))
        .load()
    )


def per_class(values: Sequence[float]) -> Column:
    """The value of the row's class, from a list indexed by ``class_id``."""
    return F.element_at(F.array(*[F.lit(float(v)) for v in values]), F.col("class_id") + 1)


def class_operators(df: DataFrame, classes: Sequence[ClassSnapshot]) -> DataFrame:
    """Each class's query: filter by selectivity, then project the output tuple."""
    selectivity = per_class([c.selectivity for c in classes])
    priority = per_class([c.priority for c in classes])
    return df.where(F.col("value") < selectivity).select(
        "class_id",
        "seq",
        "arrival_s",
        (F.col("value") / selectivity * priority).alias("score"),
    )


def measure_batch(
    batch_df: DataFrame,
    classes: Sequence[ClassSnapshot],
    clock: Callable[[], float] = time.time,
) -> BatchStats:
    """Input counts and output digest of one micro-batch, in one Spark job.

    The output instant is read right after the digest has been materialised on the
    driver, so the response times include all of the batch's processing.
    """
    arrivals = Observation("arrivals")
    observed = batch_df.observe(
        arrivals,
        *[F.count_if(F.col("class_id") == k).alias(f"arrived_{k}") for k in range(len(classes))],
    )
    rows = (
        class_operators(observed, classes)
        .groupBy("class_id")
        .agg(
            F.count(F.lit(1)).alias("output_count"),
            F.min("arrival_s").alias("arrival_min_s"),
            F.avg("arrival_s").alias("arrival_mean_s"),
            F.sum("score").alias("score_sum"),
        )
        .collect()
    )
    t_out_s = clock()
    arrived = arrivals.get
    return BatchStats(
        arrived={k: int(arrived[f"arrived_{k}"]) for k in range(len(classes))},
        outputs={
            int(r["class_id"]): ClassOutputStats(
                output_count=int(r["output_count"]),
                arrival_min_s=float(r["arrival_min_s"]),
                arrival_mean_s=float(r["arrival_mean_s"]),
                score_sum=float(r["score_sum"]),
            )
            for r in rows
        },
        t_out_s=t_out_s,
    )

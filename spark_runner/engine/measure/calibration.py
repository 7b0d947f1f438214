"""The CPU burn's calibration: what one hash repetition costs on the executors."""

from __future__ import annotations

import logging
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_runner.engine.dataflow.expressions import burn_sql

log = logging.getLogger(__name__)


DEFAULT_REPETITION_S = 1e-7
"""Used when a measurement is implausible (a loaded machine): about C2-compiled speed here."""
PLAUSIBLE_REPETITION_S = (5e-9, 5e-6)


def measure_repetition_s(
    spark: SparkSession,
    parallelism: int,
    rows: int = 4_000,
    rounds: int = 5,
    warmup_rounds: int = 3,
    min_burn_s: float = 0.3,
) -> float:
    """Seconds of CPU one burn repetition costs on the executors.

    Runs the burn expression over ``rows`` rows in ``parallelism`` partitions, and the
    same job without it; ``(burning − plain) × parallelism / (rows × repetitions)`` is the
    cost of one repetition on one core. The repetitions double until a burning job takes
    ``min_burn_s`` (so the difference stands out of scheduling noise), ``warmup_rounds``
    go first (until the JIT compiler has compiled the hashing, a repetition costs several
    times more), and the result compares the fastest burning and plain rounds: other
    processes only ever add time, so the fastest round is the least disturbed.
    An implausible result (outside ``PLAUSIBLE_REPETITION_S``) falls back to
    ``DEFAULT_REPETITION_S`` with a warning.
    """
    base = spark.range(rows, numPartitions=max(1, parallelism)).withColumnRenamed("id", "seq")

    def timed(repetitions: int | None) -> float:
        df = base if repetitions is None else base.where(f"NOT ({burn_sql(str(repetitions))})")
        started = time.perf_counter()
        df.agg(F.count(F.lit(1))).collect()
        return time.perf_counter() - started

    repetitions = 50
    for _ in range(warmup_rounds):
        timed(repetitions)
    while timed(repetitions) < min_burn_s and repetitions < 1_000_000:
        repetitions *= 2
    plain = min(timed(None) for _ in range(rounds))
    burnt = min(timed(repetitions) for _ in range(rounds))
    measured = (burnt - plain) * max(1, parallelism) / (rows * repetitions)
    low, high = PLAUSIBLE_REPETITION_S
    if not low <= measured <= high:
        log.warning(
            "burn calibration measured %.3g s per repetition (implausible); using %.3g s",
            measured,
            DEFAULT_REPETITION_S,
        )
        return DEFAULT_REPETITION_S
    return measured


__all__ = ["measure_repetition_s"]

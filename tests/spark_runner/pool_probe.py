"""Run by ``test_executor_pool``: one application on the standalone cluster whose
master is ``argv[1]`` (web UI ``argv[2]``) resizes its executors and prints what it saw
as JSON. A process of its own: the test session's local Spark holds the one
SparkContext a Python process may have."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from pyspark.sql import SparkSession

from spark_runner.engine.executors import ExecutorPool


def until(check: Callable[[], bool], timeout_s: float = 60.0) -> float:
    """Seconds until ``check`` holds (polled), or raise after ``timeout_s``."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"not within {timeout_s} s")
        time.sleep(0.1)
    return time.monotonic() - start


def main(master: str, ui_url: str) -> None:
    spark = (
        SparkSession.builder.master(master)
        .appName("pool-probe")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.executor.memory", "512m")
        .config("spark.dynamicAllocation.enabled", "false")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    try:
        pool = ExecutorPool(spark, max_executors=2, master_ui_url=ui_url)
        until(lambda: len(pool.serving()) == 2)  # a standalone application takes its max
        pool.resize(1)
        trim_s = until(lambda: len(pool.serving()) == 1)
        free_at_one = pool.free_executors()
        pool.resize(2)
        grow_s = until(lambda: len(pool.serving()) == 2)
        count = spark.range(0, 200_000, numPartitions=4).count()
        free_at_two = pool.free_executors()
        pool.resize(1)
        shrink_s = until(lambda: len(pool.serving()) == 1)
        for _ in range(10):  # a released executor stays released
            pool.reconcile()
            time.sleep(0.5)
        report = {
            "elastic": pool.elastic,
            "trim_s": trim_s,
            "free_at_one": free_at_one,
            "grow_s": grow_s,
            "count": count,
            "free_at_two": free_at_two,
            "shrink_s": shrink_s,
            "serving_after": len(pool.serving()),
        }
        print("POOL " + json.dumps(report), flush=True)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

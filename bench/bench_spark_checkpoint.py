"""A batch's checkpoint time on real Spark: Spark's default checkpoint manager against the
job's (``sparkconf.CHECKPOINT_PROPERTIES``), side by side.

    python -m bench.bench_spark_checkpoint [--duration 40] [--rate 1000] [--trigger 0.25]

Each side is its own process and JVM, with the job's Spark properties (``spark_properties``)
with and without the checkpoint manager's: a rate source (``--rate`` rows/s) through a
projection into Spark's ``noop`` sink, a batch every ``--trigger`` seconds, its checkpoint
in a temporary directory. Reported per side, over the batches after the first 10: the
median of each part of Spark's batch time (``durationMs``: the offset log's write, the
commit log's, planning, execution, the whole trigger), and the ratio of the two sides.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.bench_spark_common import ROOT, load_average, render_table

PARTS = ("walCommit", "commitOffsets", "queryPlanning", "addBatch", "triggerExecution")
SKIPPED = 10
"""The first batches (JIT, Python workers) are not measured."""
SIDES = {"spark default": False, "job's": True}
"""Each side's label, and whether it writes through the job's checkpoint manager."""


def one_side(job_manager: bool, duration_s: float, rate: int, trigger_s: float) -> dict[str, float]:
    """Median ms of each part of the batch time, in this process's own JVM."""
    from pyspark.sql import SparkSession

    from spark_runner.contract.control import ClassControl, LiveConfig
    from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
    from spark_runner.job.sparkconf import CHECKPOINT_PROPERTIES, spark_properties

    snapshot = JobSnapshot(
        job_id=0,
        api_url="",
        spark_master="local[2]",
        checkpoint_dir=tempfile.mkdtemp(prefix="bench-checkpoint-"),
        classes=(ClassSnapshot(name="x"),),
        control=LiveConfig(classes={"x": ClassControl(priority=1, delay_target_s=1)}),
    )
    properties = spark_properties(snapshot, python=sys.executable, jar=None)
    if not job_manager:
        properties = {k: v for k, v in properties.items() if k not in CHECKPOINT_PROPERTIES}
    builder = SparkSession.builder
    for key, value in properties.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", rate)
        .load()
        .selectExpr("value % 1000 AS key", "value * 2 AS v")
        .writeStream.format("noop")
        .option("checkpointLocation", snapshot.checkpoint_dir)
        .trigger(processingTime=f"{round(trigger_s * 1000)} milliseconds")
        .start()
    )
    time.sleep(duration_s)
    durations = [p.durationMs for p in query.recentProgress][SKIPPED:]
    query.stop()
    spark.stop()
    if not durations:
        raise RuntimeError(f"no batch after the first {SKIPPED} in {duration_s:g} s")
    medians = {part: statistics.median(d.get(part, 0) for d in durations) for part in PARTS}
    return {**medians, "batches": len(durations)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=40.0)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--trigger", type=float, default=0.25)
    parser.add_argument("--side", choices=list(SIDES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side is not None:  # one side, in its own process: its figures on stdout
        figures = one_side(SIDES[args.side], args.duration, args.rate, args.trigger)
        print(json.dumps(figures))
        return
    print(f"checkpoint benchmark, {load_average()} at start", flush=True)
    results: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        cmd = [
            sys.executable, "-m", "bench.bench_spark_checkpoint", "--side", side,
            "--duration", str(args.duration), "--rate", str(args.rate),
            "--trigger", str(args.trigger),
        ]  # fmt: skip
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{side}: exit {done.returncode}: {done.stderr[-3000:]}")
        results[side] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"  {side} done ({results[side]['batches']} batches measured)", flush=True)
    default, job = results["spark default"], results["job's"]
    rows = [
        [
            part,
            f"{default[part]:.0f}",
            f"{job[part]:.0f}",
            f"{default[part] / max(job[part], 1):.1f}",
        ]
        for part in PARTS
    ]
    print(render_table(["median ms a batch", *SIDES, "default ÷ job's"], rows))
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

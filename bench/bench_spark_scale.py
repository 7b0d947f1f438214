"""Scale on a real Spark standalone cluster: the same job on one and on two workers.

    python -m bench.bench_spark_scale [--duration 60] [--warmup 25] [--cost 0.0003]

A master and ``n`` one-core workers on this machine (:mod:`spark_runner.engine.cluster`),
then ``headroom run`` against it, unchanged: the overload benchmark's three classes
(filter → calibrated CPU map → project), every stream far above capacity and no load
manager, so each configuration runs saturated and its throughput is its capacity: the
tuples/s the class scheduler admits over the second half of the run. Target: two workers
≥ 1.7× one. On a 2-core machine the driver, its source processes and the master share
the cores with the executors, so the second worker gets less than a whole core.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.bench_spark_common import (
    load_average,
    median,
    render_table,
    run_spark,
    series_values,
    three_classes,
)
from spark_runner.control.calibrated_oracle import steady_throughput
from spark_runner.engine.cluster import StandaloneCluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=25.0)
    parser.add_argument("--period", type=float, default=1.0)
    parser.add_argument("--cost", type=float, default=0.0003, help="map CPU s per tuple")
    parser.add_argument("--rate", type=float, default=4000.0, help="tuples/s per stream")
    args = parser.parse_args()
    print(f"scale benchmark, {load_average()} at start")
    doc = three_classes(
        [args.rate] * 3, [30, 30, 30], cost_s=args.cost, period_s=args.period, mode="none"
    )
    results: dict[int, tuple[float, float]] = {}
    for workers in (1, 2):
        started = time.monotonic()
        with (
            tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp,
            StandaloneCluster(Path(tmp), workers=workers, cores=1) as cluster,
        ):
            r = run_spark(
                doc,
                duration_s=args.duration + args.warmup,
                warmup_s=args.warmup,
                master=cluster.master_url,
            )
        results[workers] = (
            steady_throughput(r),
            median(series_values(r, "batch_s")),
        )
        print(f"  {workers} worker(s) done ({time.monotonic() - started:.0f} s wall)", flush=True)
    one = results[1][0]
    rows = [
        [str(n), f"{tput:.0f}", f"{tput / one:.2f}", f"{1000 * batch:.0f}"]
        for n, (tput, batch) in results.items()
    ]
    print(render_table(["workers", "tuples/s", "× one", "batch ms"], rows))
    ratio = results[2][0] / one
    print(f"target two workers >= 1.7x one: {'PASS' if ratio >= 1.7 else 'FAIL'} ({ratio:.2f}x)")
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

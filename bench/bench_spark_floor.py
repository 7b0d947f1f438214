"""The lowest delay target the Spark runner honours on this machine, against plain Spark.

    python -m bench.bench_spark_floor [--targets 0.5,0.75,1,1.5,2,3] [--duration 40]
        [--warmup 10] [--rate 200] [--queries stateless,stateful] [--rounds 1]

One lightly loaded class reading the latency benchmark's ``trades`` CSV files
(:mod:`bench.latency_workload`, written every 0.25 s at ``--rate`` rows/s), one Spark
SQL query each (:data:`bench.latency_workload.FLOOR_CLASSES`): *stateless* (a filter)
and *stateful* (the filter, then a 2 s tumbling count per account, its state in
RocksDB). Per query and round, side by side on the same files: plain Spark
(:mod:`bench.plain_latency`: the query as a user would run it, batches back to back),
then headroom (``--source files``, ALoMa under DILoS) at each target with the control
period at ``--period-share`` × the target (the thesis uses ¼–½). Response time = the
batch's commit − the row's ``ts`` on both sides.

A target is *honoured* when, over the measured run, the promise holds (mean violation
at most 5 % of the target), headroom's p95 is within 1.1× plain Spark's p95 of that
round, and (the load being light) under 1 % of the tuples were shed (issue 43, item 3).
The closing lines give, per query, the lowest honoured target against plain Spark's mean
response at that load (the bar: within 1.2×).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.bench_spark_common import (
    WITHIN_TARGET,
    RunFailed,
    load_average,
    median,
    render_table,
    series_values,
)
from bench.bench_spark_latency import ClassResult, fmt, plain, run_on_files
from bench.latency_workload import FLOOR_CLASSES, WORKLOADS, scenario

P95_OF_PLAIN = 1.1
"""Headroom's p95 may be at most this many times plain Spark's (issue 43, item 3)."""
FLOOR_OF_PLAIN = 1.2
"""The lowest honoured target's bar: this many times plain Spark's mean response."""


@dataclass
class Row:
    query: str
    round_: int
    target_s: float | None
    """None: plain Spark's row."""
    mean_s: float | None
    p95_s: float | None
    max_s: float | None
    violation_s: float | None = None
    shed_fraction: float = 0.0
    batch_ms: float | None = None

    def honoured(self, plain_p95_s: float | None) -> bool:
        t = self.target_s
        return (
            t is not None
            and self.violation_s is not None
            and self.violation_s <= WITHIN_TARGET * t
            and self.p95_s is not None
            and plain_p95_s is not None
            and self.p95_s <= P95_OF_PLAIN * plain_p95_s
            and self.shed_fraction <= 0.01
        )


def run_plain(args: argparse.Namespace, query: str, round_: int) -> Row:
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        r = plain(args, args.rate, Path(tmp), job_manager=False, workload=f"floor-{query}")
    c: ClassResult = r.classes["c"]
    print(f"  {query} round {round_ + 1}, plain Spark: {r.notes[0]}", flush=True)
    return Row(query, round_, None, c.mean_s, c.p95_s, c.max_s)


def run_headroom(args: argparse.Namespace, query: str, round_: int, target: float) -> Row:
    period = round(args.period_share * target, 3)
    cls = replace(FLOOR_CLASSES[query], target_s=target)
    doc = scenario(args.rate, args.duration, (cls,), period)
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        workload = WORKLOADS[f"floor-{query}"]
        r: dict[str, Any] = run_on_files(doc, args, workload, args.rate, Path(tmp))
    c = r["classes"]["c"]
    print(f"  {query} round {round_ + 1}, D {target:g} s done ({r['wall_s']:.0f} s wall)")
    return Row(
        query,
        round_,
        target,
        c["mean_response_time_s"],
        c["p95_response_time_s"],
        c["max_response_time_s"],
        c["mean_violation_s"],
        c["shed_fraction"],
        1000 * median(series_values(r, "batch_s")),
    )


def measure(args: argparse.Namespace, query: str, round_: int) -> list[Row]:
    """Plain Spark, then headroom at every target, on fresh files each."""
    rows = []
    for target in [None, *(float(t) for t in args.targets.split(","))]:
        try:
            if target is None:
                rows.append(run_plain(args, query, round_))
            else:
                rows.append(run_headroom(args, query, round_, target))
        except RunFailed as exc:
            label = "plain Spark" if target is None else f"D {target:g} s"
            print(f"  {query} round {round_ + 1}, {label}: FAILED: {exc}", flush=True)
    return rows


def report(rows: list[Row], queries: list[str]) -> None:
    plain_p95 = {(r.query, r.round_): r.p95_s for r in rows if r.target_s is None}
    table = []
    for r in rows:
        honoured = r.honoured(plain_p95.get((r.query, r.round_)))
        table.append(
            [
                r.query, str(r.round_ + 1),
                "plain Spark" if r.target_s is None else f"headroom, D {r.target_s:g} s",
                fmt(r.mean_s), fmt(r.p95_s), fmt(r.max_s), fmt(r.violation_s),
                f"{100 * r.shed_fraction:.2f}",
                "-" if r.batch_ms is None else f"{r.batch_ms:.0f}",
                "-" if r.target_s is None else ("yes" if honoured else "no"),
            ]
        )  # fmt: skip
    headers = ["query", "round", "side", "rt mean s", "rt p95 s", "rt max s", "viol mean s"]
    headers += ["shed %", "batch ms", "honoured"]
    print(render_table(headers, table))
    for query in queries:
        mine = [r for r in rows if r.query == query]
        plain_means = [r.mean_s for r in mine if r.target_s is None and r.mean_s is not None]
        passed = [
            t
            for r in mine
            if (t := r.target_s) is not None and r.honoured(plain_p95.get((r.query, r.round_)))
        ]
        floor = min(passed, default=None)
        base = statistics.fmean(plain_means) if plain_means else None
        print(
            f"{query}: lowest honoured target {fmt(floor)} s; plain Spark's mean at this load "
            f"{fmt(base)} s; ratio "
            f"{'-' if floor is None or not base else f'{floor / base:.2f}'} "
            f"(bar {FLOOR_OF_PLAIN:g})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="0.5,0.75,1,1.5,2,3")
    parser.add_argument("--queries", default="stateless,stateful")
    parser.add_argument("--rate", type=float, default=200.0, help="rows/s of trades")
    parser.add_argument("--duration", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--period-share", type=float, default=0.4)
    args = parser.parse_args()
    queries = [q for q in args.queries.split(",") if q]
    unknown = set(queries) - set(FLOOR_CLASSES)
    if unknown:
        parser.error(f"unknown query kind(s): {', '.join(sorted(unknown))}")
    print(f"floor benchmark, trades at {args.rate:g} rows/s; {load_average()} at start")
    rows = [r for round_ in range(args.rounds) for q in queries for r in measure(args, q, round_)]
    report(rows, queries)
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

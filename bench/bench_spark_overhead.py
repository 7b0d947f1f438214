"""Overhead of headroom against plain Spark Structured Streaming: the same SQL, the same
input, the same sink, side by side.

    python -m bench.bench_spark_overhead [--low 1000] [--high 10000] [--steps 3]
        [--duration 40] [--warmup 20] [--period 4]

The workload (:mod:`bench.overhead_workload`): two streams of CSV files (trades, quotes)
written every 0.25 s at a rate of rows/s each, and two SQL queries: a filter, a map and a
5 s window aggregate per account over trades; a stream-stream join of trades and quotes
within 1 s. Configurations, each run on a fresh directory fed the same way:

- ``plain Spark`` (:mod:`bench.plain_spark`): Spark's own CSV file source, ``spark.sql``,
  the ``noop`` sink, a trigger every period; no headroom;
- ``headroom u=1.0``: ``headroom run --source files`` with the controller on (DILoS, one
  ALoMa per class), targets of 600 s (nothing to shed), batches allowed the whole period:
  the same bound as plain, so the ratio is headroom's own cost;
- ``headroom u=0.9``: the default, a 10 % reserve against jitter (costs that much
  throughput by design), run at the rate found for u=1.0 and below.

A rate is *sustainable* when the engine keeps up with its period (the trigger interval
of plain Spark, the control period of headroom: the same latency bound for both): the
median batch takes at most the period, and at the end what waits (input written before
the last batch started, not yet read) is under a period and two seconds of input, with
nothing shed. (Without the batch bound plain Spark "keeps up" with ever longer batches, trading
latency for throughput, which headroom's pace does not do.) The highest sustainable
rate of each configuration is found by bisection between ``--low`` and ``--high``
(rows/s per stream). Throughput counts input tuples per query input (trades is read by
both queries). Target: headroom u=1.0 / plain ≥ 0.95.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from bench.bench_spark_common import ROOT, load_average, median, render_table, run_spark
from bench.overhead_workload import QUERIES, Feeder, scenario

TARGET_S = 600.0
POINTS = sum(len(q.reads) for q in QUERIES)  # query inputs: trades twice, quotes once


def plain(args: argparse.Namespace, rate: float, tmp: Path) -> dict[str, Any]:
    feeder = Feeder(tmp / "in", rate).start()
    out = tmp / "plain.json"
    try:
        subprocess.run(
            [
                sys.executable, "-m", "bench.plain_spark", "--files-dir", str(tmp / "in"),
                "--checkpoint", str(tmp / "checkpoint"), "--duration",
                str(args.duration + args.warmup), "--period", str(args.period),
                "--out", str(out),
            ],
            cwd=ROOT, check=True, capture_output=True, text=True,
        )  # fmt: skip
    finally:
        feeder.stop()
    run = json.loads(out.read_text())
    taken = taken_by_batch(tmp / "checkpoint", feeder.rows_per_file)
    batches = [
        {
            "start": datetime.fromisoformat(b["timestamp"].replace("Z", "+00:00")).timestamp(),
            "rows": taken.get(b["batch"], 0),
            "trigger_s": b["trigger_s"],
        }
        for b in run["batches"]
    ]
    measured = [b for b in batches if b["start"] >= run["started_s"] + args.warmup]
    if len(measured) < 3:
        raise RuntimeError(f"plain Spark ran only {len(measured)} measured batches")
    last = measured[-1]
    return {
        "throughput": sum(b["rows"] for b in measured[:-1])
        / (last["start"] - measured[0]["start"]),
        "cycle_s": median([b["trigger_s"] for b in measured]),
        "backlog": max(0, POINTS * feeder.rows_until(last["start"]) - sum(taken.values())),
        "shed": 0,
    }


def taken_by_batch(checkpoint: Path, rows_per_file: int) -> dict[int, int]:
    """Rows each batch read, from Spark's own record of the files each file source read
    (``<checkpoint>/sources/<n>/``: JSON lines with the path and batch id; compacted)."""
    files: dict[tuple[str, str], int] = {}
    for log in (checkpoint / "sources").glob("*/[0-9]*"):  # not the .crc files
        for line in log.read_text().splitlines()[1:]:  # after the version line
            entry = json.loads(line)
            files[(log.parent.name, entry["path"])] = int(entry["batchId"])
    taken: dict[int, int] = {}
    for batch in files.values():
        taken[batch] = taken.get(batch, 0) + rows_per_file
    return taken


def headroom(
    args: argparse.Namespace, rate: float, tmp: Path, utilization: float
) -> dict[str, Any]:
    feeder = Feeder(tmp / "in", rate).start()
    try:
        r = run_spark(
            scenario(args.period, TARGET_S),
            duration_s=args.duration + args.warmup,
            warmup_s=args.warmup,
            utilization=utilization,
            extra=["--source", "files", "--files-dir", str(tmp / "in")],
        )
    finally:
        feeder.stop()
    admitted = sum(c["admitted"] for s in r["series"] for c in s["classes"].values())
    return {
        "throughput": admitted / r["scenario"]["duration_s"],
        "cycle_s": median([s["batch_s"] for s in r["series"] if s.get("batch_s") is not None]),
        "backlog": sum(c["backlog_tuples"] for c in r["classes"].values()),
        "shed": sum(c["shed_tuples"] for c in r["classes"].values()),
    }


Run = Callable[[float, Path], dict[str, Any]]


def probe(name: str, run: Run, rate: float, args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        r = run(rate, Path(tmp))
    r["rate"] = rate
    r["ok"] = r["shed"] == 0 and r["backlog"] <= 3 * rate * POINTS and r["cycle_s"] <= args.period
    print(
        f"  {name} at {rate:.0f} rows/s per stream: {'sustained' if r['ok'] else 'not sustained'}"
        f" (taken {r['throughput']:.0f} tuples/s, median batch {1000 * r['cycle_s']:.0f} ms, "
        f"backlog {r['backlog']}, shed {r['shed']}; {time.monotonic() - started:.0f} s wall)",
        flush=True,
    )
    return r


def highest(name: str, run: Run, args: argparse.Namespace) -> dict[str, Any] | None:
    """The run at the highest sustainable rate found by bisection (None: not even --low)."""
    low, high = args.low, args.high
    best = probe(name, run, low, args)
    if not best["ok"]:
        return None
    for _ in range(args.steps):
        mid = round((low + high) / 2)
        r = probe(name, run, mid, args)
        if r["ok"]:
            low, best = mid, r
        else:
            high = mid
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--low", type=float, default=1000.0, help="rows/s per stream")
    parser.add_argument("--high", type=float, default=10000.0, help="rows/s per stream")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--duration", type=float, default=40.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=20.0)
    parser.add_argument("--period", type=float, default=4.0)
    args = parser.parse_args()
    print(f"overhead benchmark, {load_average()} at start")
    print(yaml.safe_dump({q.name: q.statement for q in QUERIES}, width=200, sort_keys=False))
    found = {
        "plain Spark": highest("plain Spark", lambda rate, tmp: plain(args, rate, tmp), args),
        "headroom u=1.0": highest(
            "headroom u=1.0", lambda rate, tmp: headroom(args, rate, tmp, 1.0), args
        ),
    }
    u1 = found["headroom u=1.0"]
    if u1 is not None:
        args.high = u1["rate"] + 1
        found["headroom u=0.9"] = highest(
            "headroom u=0.9", lambda rate, tmp: headroom(args, rate, tmp, 0.9), args
        )
    base = found["plain Spark"]
    rows = [
        [name, "-", "-", "-", "-"]
        if r is None
        else [
            name,
            f"{r['rate']:.0f}",
            f"{r['throughput']:.0f}",
            f"{r['rate'] / base['rate']:.3f}" if base else "-",
            f"{1000 * r['cycle_s']:.0f}",
        ]
        for name, r in found.items()
    ]
    headers = ["configuration", "rows/s per stream", "tuples/s taken", "ratio", "batch ms"]
    print(render_table(headers, rows))
    if base and u1:
        ratio = u1["rate"] / base["rate"]
        print(f"target headroom u=1.0 / plain >= 0.95: {'PASS' if ratio >= 0.95 else 'FAIL'}")
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

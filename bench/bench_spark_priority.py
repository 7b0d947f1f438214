"""Latency follows priority on real Spark: a fixed batch pace versus the target-set pace.

    python -m bench.bench_spark_priority [--rates 4000,4000,4000] [--targets 1.5,2,3]
        [--cost 0.00005] [--period 1.0] [--duration 60] [--warmup 20]

Three classes (priorities 6/3/1, DILoS), each reading its own stream through filter →
calibrated CPU map (``--cost`` s per tuple) → project: the case reported in the issue
(three classes at 4,000 tuples/s, targets 1.5/2/3 s). Two runs, one after the other:

- ``fixed``: batches start one control period apart (``--fixed-pace``), as before;
- ``paced``: the tightest target among the loaded classes sets the pace
  (``engine/control/pacing.py``).

Per class: response time (mean, p95, max), loss, oracle loss; per run: the pace (median
time between two batches' commits) and the batch cycle. Checks for ``paced``: the mean
response time follows priority (c1 ≤ c2 ≤ c3) and c1 loses nothing.
"""

from __future__ import annotations

import argparse
from itertools import pairwise
from typing import Any

from bench.bench_spark_common import (
    load_average,
    median,
    pct,
    render_table,
    run_spark,
    sec,
    series_values,
    three_classes,
)


def pace(r: dict[str, Any]) -> float:
    """Median time between two batches' commits in the measured run, s."""
    t = series_values(r, "t_s")
    return median([b - a for a, b in pairwise(t)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="4000,4000,4000")
    parser.add_argument("--targets", default="1.5,2,3")
    parser.add_argument("--cost", type=float, default=0.00005)
    parser.add_argument("--period", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=20.0)
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    targets = [float(t) for t in args.targets.split(",")]
    print(f"priority latency benchmark, {load_average()} at start")
    print(
        f"rates {rates} tuples/s, targets {targets} s, control period {args.period} s, "
        f"map cost {args.cost * 1e6:g} µs/tuple",
        flush=True,
    )
    doc = three_classes(rates, targets, cost_s=args.cost, period_s=args.period)
    runs: dict[str, dict[str, Any]] = {}
    for name in ("fixed", "paced"):
        runs[name] = run_spark(
            doc, duration_s=args.duration, warmup_s=args.warmup, fixed_pace=name == "fixed"
        )
        print(f"  {name} done ({runs[name]['wall_s']:.0f} s wall, {load_average()})", flush=True)
    headers = [
        "pace", "class", "D s", "rt mean s", "rt p95 s", "rt max s", "loss %", "oracle %",
        "pace s", "batch s",
    ]  # fmt: skip
    rows = []
    for name, r in runs.items():
        batch = median(series_values(r, "batch_s"))
        for cls, c in r["classes"].items():
            first = cls == "c1"
            rows.append(
                [
                    name if first else "", cls, f"{c['delay_target_s']:g}",
                    sec(c["mean_response_time_s"]), sec(c["p95_response_time_s"]),
                    sec(c["max_response_time_s"]), pct(c["loss_fraction"]),
                    pct(c["oracle_loss_fraction"]),
                    sec(pace(r)) if first else "", sec(batch) if first else "",
                ]
            )  # fmt: skip
    print(render_table(headers, rows))
    paced = runs["paced"]["classes"]
    means = [paced[c]["mean_response_time_s"] for c in ("c1", "c2", "c3")]
    checks = [
        ("mean response time follows priority (c1 ≤ c2 ≤ c3)", means == sorted(means), means),
        ("c1 loses nothing", paced["c1"]["loss_fraction"] == 0, pct(paced["c1"]["loss_fraction"])),
    ]
    for claim, ok, detail in checks:
        print(f"  [{'PASS' if ok else 'FAIL'}] paced: {claim}: {detail}")
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

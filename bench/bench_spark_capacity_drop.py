"""Capacity drop on real Spark: a CPU hog takes half the machine mid-run.

    python -m bench.bench_spark_capacity_drop [--duration 120] [--hog-at 50] [--share 0.5]

The overload benchmark's three classes under DILoS, offered about 0.9× the engine's
capacity (so everyone fits until the hog starts). At ``--hog-at`` seconds of scenario time a
background job (the scenario's ``background``: one busy process per core, ``--share`` of
each) takes the processor away; batches get slower, the batch budget shrinks, the class
loads rise and the managers shed. Reported per class: the control periods from the start of
the hog until its period's maximum response time is within target again (and stays so for
3 periods), and the table before/after. Target: every class within 10 control periods.
CTRL (fixed headroom) runs the same for comparison.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.bench_spark_common import (
    load_average,
    pct,
    render_table,
    run_spark,
    sec,
    three_classes,
)

SHARES = (0.6, 0.3, 0.1)


def recovery_periods(
    r: dict[str, Any], cls: str, hog_at: float, target: float, hold: int = 3
) -> int | None:
    """Periods after the hog starts until ``hold`` periods in a row meet the target."""
    series = [s for s in r["series"] if s["t_s"] >= hog_at]
    ok_run = 0
    for i, s in enumerate(series):
        worst = s["classes"][cls]["max_response_time_s"]
        ok_run = ok_run + 1 if worst is not None and worst <= target else 0
        if ok_run >= hold:
            return i + 1 - hold + 1
    return None


def window(r: dict[str, Any], cls: str, t0: float, t1: float) -> tuple[float, float, float]:
    """(mean of the periods' max response time, its max, shed fraction) in [t0, t1)."""
    picked = [s["classes"][cls] for s in r["series"] if t0 <= s["t_s"] < t1]
    worst = [c["max_response_time_s"] for c in picked if c["max_response_time_s"] is not None]
    shed = sum(c["shed"] for c in picked)
    admitted = sum(c["admitted"] for c in picked)
    return (
        sum(worst) / len(worst) if worst else float("nan"),
        max(worst) if worst else float("nan"),
        shed / (shed + admitted) if shed + admitted else 0.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument(
        "--hog-at", type=float, default=50.0, help="scenario seconds after the warm-up"
    )
    parser.add_argument("--share", type=float, default=0.5)
    parser.add_argument("--period", type=float, default=0.6)
    parser.add_argument("--targets", default="1.5,2,3")
    parser.add_argument("--cost", type=float, default=0.0002)
    parser.add_argument(
        "--capacity", type=float, required=True, help="tuples/s, from the overload benchmark"
    )
    parser.add_argument(
        "--load", type=float, default=0.9, help="offered load as a share of capacity"
    )
    parser.add_argument(
        "--burn-ns", type=float, default=None, help="hash burn only (no JDK): ns per repetition"
    )
    args = parser.parse_args()
    targets = [float(t) for t in args.targets.split(",")]
    rates = [round(args.load * args.capacity * f) for f in (0.3, 0.3, 0.4)]
    hog_at = args.warmup + args.hog_at  # the scenario clock includes the warm-up
    print(
        f"capacity drop benchmark, {load_average()} at start; offered {rates} tuples/s, "
        f"hog of {args.share:g} at {args.hog_at:g} s"
    )
    background = [{"start_s": hog_at, "share": args.share}]
    runs = {}
    for name in ("dilos", "ctrl"):
        doc = three_classes(
            rates,
            targets,
            cost_s=args.cost,
            period_s=args.period,
            mode="dilos" if name == "dilos" else "per_class",
            background=background,
            duration_s=args.warmup + args.duration,
        )
        if name == "ctrl":
            for c, share in zip(doc["classes"], SHARES, strict=True):
                c["manager"] = {"kind": "ctrl", "params": {"max_shed": 0.99, "headroom": share}}
        runs[name] = run_spark(
            doc, duration_s=args.duration, warmup_s=args.warmup, burn_ns=args.burn_ns
        )
        print(f"  {name} done ({runs[name]['wall_s']:.0f} s wall, {load_average()})", flush=True)
    headers = [
        "config",
        "class",
        "D s",
        "before: rt max s (mean/max)",
        "shed %",
        "after: rt max s (mean/max)",
        "shed %",
        "periods to target",
    ]
    rows = []
    verdict = True
    for name, r in runs.items():
        for cls, target in zip(("c1", "c2", "c3"), targets, strict=True):
            b = window(r, cls, 0, hog_at)
            a = window(r, cls, hog_at, 1e9)
            n = recovery_periods(r, cls, hog_at, target)
            if name == "dilos":
                verdict &= n is not None and n <= 10
            rows.append(
                [
                    name if cls == "c1" else "", cls, f"{target:g}",
                    f"{sec(b[0])} / {sec(b[1])}", pct(b[2]),
                    f"{sec(a[0])} / {sec(a[1])}", pct(a[2]),
                    "never" if n is None else str(n),
                ]
            )  # fmt: skip
    print(render_table(headers, rows))
    print(
        f"  [{'PASS' if verdict else 'FAIL'}] DILoS: every class meets its target again "
        "within 10 control periods"
    )
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

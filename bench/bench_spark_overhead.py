"""Overhead of the controller on real Spark: maximum sustainable throughput with and without it.

    python -m bench.bench_spark_overhead [--duration 40] [--low 300] [--high 4000] [--steps 5]
        [--no-default]

The overload benchmark's network (three classes, filter → calibrated CPU map → project),
all three streams at the same rate, one trigger every control period. *Plain* is the same
query on the same engine with no controller: no class scheduler, no managers, every
waiting tuple enters every batch. *Controller* is the full runner (DILoS, ALoMa per class,
admission, offsets and decisions, statistics, metrics). A rate is sustainable when, over
the measured run, the median batch cycle (Spark's ``triggerExecution``) is within the
control period — the engine keeps up with its trigger —, no tuple was shed and
the backlog at the end is under two periods of arrivals. The highest sustainable rate of
each is found by bisection. The controller runs once with a batch target of the whole
period (utilization 1.0: the same bound as plain, so the ratio is the controller's own
cost — target ≥ 0.95) and once with its default 0.9 (a 10 % reserve against jitter, which
costs that much throughput by design).
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.bench_spark_common import (
    load_average,
    median,
    render_table,
    run_spark,
    three_classes,
)


def sustainable(r: dict[str, Any], rate: float, period: float) -> tuple[bool, str]:
    classes = r["classes"].values()
    shed = sum(c["shed_tuples"] for c in classes)
    backlog = sum(c["backlog_tuples"] for c in classes)
    cycle = median([s["batch_s"] for s in r["series"] if s.get("batch_s") is not None])
    ok = shed == 0 and backlog < 2 * 3 * rate * period and cycle <= period
    return ok, f"median cycle {cycle:.3f} s, shed {shed}, backlog {backlog}"


def bisect(
    name: str, args: argparse.Namespace, plain: bool, utilization: float = 0.9
) -> tuple[float, list[list[str]]]:
    lo, hi = args.low, args.high
    rows = []
    for _ in range(args.steps):
        rate = round((lo + hi) / 2)
        doc = three_classes(
            [rate] * 3, [10 * args.period] * 3, cost_s=args.cost, period_s=args.period
        )
        r = run_spark(
            doc,
            duration_s=args.duration,
            warmup_s=args.warmup,
            plain=plain,
            utilization=utilization,
            burn_ns=args.burn_ns,
        )
        ok, detail = sustainable(r, rate, args.period)
        rows.append([name, str(rate * 3), "yes" if ok else "no", detail])
        verdict = "sustained" if ok else "not sustained"
        print(f"  {name} {rate * 3} tuples/s: {verdict} ({detail})", flush=True)
        lo, hi = (rate, hi) if ok else (lo, rate)
    return lo * 3, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=12.0)
    parser.add_argument("--period", type=float, default=0.6)
    parser.add_argument("--cost", type=float, default=0.0002)
    parser.add_argument("--low", type=float, default=300.0, help="per stream, tuples/s")
    parser.add_argument("--high", type=float, default=4000.0, help="per stream, tuples/s")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument(
        "--burn-ns", type=float, default=None, help="hash burn only (no JDK): ns per repetition"
    )
    parser.add_argument(
        "--no-default", action="store_true", help="skip the controller at its default 0.9"
    )
    args = parser.parse_args()
    print(f"overhead benchmark, {load_average()} at start")
    plain, plain_rows = bisect("plain", args, plain=True)
    ctrl, ctrl_rows = bisect("controller (utilization 1.0)", args, plain=False, utilization=1.0)
    rows = plain_rows + ctrl_rows
    ratio = ctrl / plain if plain else float("nan")
    summary = [
        ["plain", f"{plain:.0f}", "1.000"],
        ["controller (utilization 1.0)", f"{ctrl:.0f}", f"{ratio:.3f}"],
    ]
    if not args.no_default:
        default, default_rows = bisect("controller (default 0.9)", args, plain=False)
        rows += default_rows
        summary.append(["controller (default 0.9)", f"{default:.0f}", f"{default / plain:.3f}"])
    print(render_table(["engine", "offered tuples/s", "sustained", "detail"], rows))
    print(render_table(["engine", "max sustainable tuples/s", "vs plain"], summary))
    print(f"  [{'PASS' if ratio >= 0.95 else 'FAIL'}] controller / plain = {ratio:.3f} (≥ 0.95)")
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

"""Overload on real Spark: three classes, ≈1.5× capacity, six ways to manage it, side by side.

    python -m bench.bench_spark_overload [--duration 120] [--warmup 15] [--period 0.6]
        [--targets 1.5,2,3] [--cost 0.0002] [--only dilos,aurora] [--quick] [--stateless]
        [--onset-periods 5]

Three classes (priorities 6/3/1), each with its own stream and two queries over it: filter
→ calibrated CPU map (``--cost`` s per tuple) → a 2 s tumbling count per key, and a tenth
of its tuples joined with the whole stream on ``key`` within 1 s (state in RocksDB;
``--stateless``: one filter → map → project query instead). First the engine's capacity
for this network is measured, in two runs: a probe (every stream far above capacity,
DILoS shedding what does not fit so the queues stay near the targets, at the runs'
utilization; with no manager the queues grow without bound and the engine takes ~15 %
fewer tuples a second, which made "1.5×" about 1.25×), then DILoS on the benchmark's own
mix at 1.5× the probe's reading: what it admits over the overload's second half is the
capacity (the probe's mix reads high: the overload it set was 2.01× for DILoS); each
configuration's real overload is printed;
then the classes offer 0.35 / 0.45 / 0.70 of it (1.5× in total): class 1 fits in its 60 %
share, class 2 needs more than its 30 %, class 3 is far over its 10 %. The overload is a
step: each class offers half its rate through the warm-up and ``--onset-periods`` control
periods after it, so the managers run before it starts (a warm-up at 1.5× lets queues
grow with no manager, and the first measured periods answered that backlog). Each
configuration of the Aurora sweep runs ``--sweep-duration`` seconds past the onset.
Configurations:

- ``none``: no load manager (the class scheduler still admits by quota: queues grow);
- ``common``: one ALoMa for the whole system (the same shed fraction everywhere);
- ``per_class``: one ALoMa per class, fixed priority quotas;
- ``dilos``: one ALoMa per class and capacity redistribution (the default);
- ``dilos_declared``: the same with the operators' declared costs (``--declared-costs``),
  not the executor time Spark measures per query branch;
- ``dilos_relative``, ``dilos_strict``: DILoS with the thesis's ``relative``
  redistribution policy (every class keeps its original share: a class 1 whose load
  passes its 60 %, ``--capacity`` above the machine's, sheds while the lower classes keep
  theirs) or ``strict`` (a higher class never expects to lose a larger share than a
  lower one) instead of the default ``absolute`` (classes served in priority order);
- ``aurora``: one Aurora per class with a fixed headroom ``h × share``; ``h`` is swept on
  short runs first and the best one (least loss with every class's mean violation
  ≤ 5 % of its target and none late at the end — last period's worst answer or oldest
  waiting tuple past its target —, else least violation) runs in full;
- ``ctrl``: one CTRL per class, headroom = the class's share (its static capacity).

Targets checked for DILoS: every class's mean violation ≤ 5 % of its target; loss ≤ 1.15 ×
the independent oracle's (``spark_runner/control/calibrated_oracle.py``: the machine of
the capacity run on the mix, never of the run judged; not checked with ``--capacity``),
the run's own oracle printed beside; class 1 sheds nothing in the periods decided
while its target was at or above the engine's floor (its loss over the whole run is
printed beside). Then every operator's declared and measured cost per tuple in the DILoS
run.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from bench.bench_spark_common import (
    PROBE_RATE,
    WITHIN_TARGET,
    load_average,
    measure_capacity,
    pct,
    render_table,
    run_spark,
    sec,
    shed_while_feasible,
    three_classes,
)
from spark_runner.contract.snapshot import DEFAULT_TARGET_UTILIZATION
from spark_runner.control.calibrated_oracle import (
    Calibration,
    calibrated_losses,
    run_losses,
    steady_throughput,
)

SHARES = (0.6, 0.3, 0.1)
LOAD = (0.35, 0.45, 0.70)
POLICY_CONFIGS = {"dilos_relative": "relative", "dilos_strict": "strict"}
"""DILoS under a redistribution policy other than the default."""
BEFORE_ONSET = 0.5  # the share of its rate each class offers before the overload's onset


def configuration(
    name: str,
    rates: Sequence[float],
    targets: Sequence[float],
    args: argparse.Namespace,
    h: float = 1.0,
) -> dict[str, Any]:
    scenario = {
        "cost_s": args.cost,
        "period_s": args.period,
        "stateful": not args.stateless,
        "onset_s": onset_s(args),
        "before_onset": BEFORE_ONSET,
    }
    if name in ("none", "common", "per_class", "dilos", "dilos_declared", *POLICY_CONFIGS):
        mode = "dilos" if name.startswith("dilos") else name
        plain: dict[str, Any] = three_classes(rates, targets, mode=mode, **scenario)
        if name in POLICY_CONFIGS:
            plain["control"]["policy"] = POLICY_CONFIGS[name]
        return plain
    kind = "aurora" if name == "aurora" else "ctrl"
    doc: dict[str, Any] = three_classes(rates, targets, mode="per_class", **scenario)
    for c, share in zip(doc["classes"], SHARES, strict=True):
        c["manager"] = {"kind": kind, "params": {"max_shed": 0.99, "headroom": round(h * share, 4)}}
    return doc


def onset_s(args: argparse.Namespace) -> float:
    """Scenario time of the overload's onset: ``--onset-periods`` control periods after
    the warm-up (0: the overload runs from the start, warm-up included)."""
    return args.warmup + args.onset_periods * args.period if args.onset_periods > 0 else 0.0


def mix_capacity(
    probed: float, targets: Sequence[float], args: argparse.Namespace
) -> tuple[float, Calibration]:
    """What DILoS admits, in tuples/s over the overload's second half, when the classes
    offer the benchmark's mix at 1.5× ``probed``. The probe (every class far overloaded)
    is not that mix: ``absolute`` gives c1 nearly the whole engine there, and one class's
    operators carry every batch's fixed cost over more tuples than three classes' do, so
    1.5× the probe overloads the mix by more. The run is as long as the benchmark's: the
    JVM still gets faster for minutes, and a shorter run reads a lower capacity. This run
    is also the calibration the independent oracle takes its machine from
    (:meth:`Calibration.of_run`)."""
    rates = [round(f * probed) for f in LOAD]
    r = run_spark(
        configuration("dilos", rates, targets, args),
        duration_s=args.duration,
        warmup_s=args.warmup,
        burn_ns=args.burn_ns,
    )
    since = onset_s(args)
    return steady_throughput(r, since_s=since), Calibration.of_run(r, since_s=since)


def summary(r: dict[str, Any]) -> tuple[float, float, bool]:
    """(largest mean violation as a share of its target, mean loss, whether a class ends
    late: its last period's worst answer or its oldest waiting tuple past its target).
    A short run that ends late only defers its violation: on Spark a 60 s sweep chose
    h = 1.5, whose c3 answered 27.5 s against 26 s in its last period with its queue
    growing, and the full run at 1.5 left c3 13 s late on average."""
    last = r["series"][-1]["classes"]
    late = any(
        c["backlog_age_s"] > c["delay_target_s"]
        or (last[name]["max_response_time_s"] or 0.0) > c["delay_target_s"]
        for name, c in r["classes"].items()
    )
    worst = max(c["mean_violation_s"] / c["delay_target_s"] for c in r["classes"].values())
    return float(worst), float(r["totals"]["mean_loss_fraction"]), late


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--period", type=float, default=0.6)
    parser.add_argument("--targets", default="1.5,2,3")
    parser.add_argument("--cost", type=float, default=0.0002)
    parser.add_argument("--capacity-duration", type=float, default=40.0)
    parser.add_argument("--sweep-duration", type=float, default=45.0)
    parser.add_argument("--sweep", default="0.8,1.0,1.2,1.5,2.0")
    parser.add_argument("--only", default="none,common,per_class,dilos,dilos_declared,aurora,ctrl")
    parser.add_argument(
        "--onset-periods",
        type=int,
        default=5,
        help="the overload starts this many periods after the warm-up (0: from the start)",
    )
    parser.add_argument("--capacity", type=float, default=None, help="skip measuring it")
    parser.add_argument("--quick", action="store_true", help="shorter runs (40 s)")
    parser.add_argument("--stateless", action="store_true", help="the stateless query")
    parser.add_argument(
        "--burn-ns", type=float, default=None, help="hash burn only (no JDK): ns per repetition"
    )
    args = parser.parse_args()
    if args.quick:
        args.duration, args.sweep_duration, args.capacity_duration = 40.0, 30.0, 30.0
    targets = [float(t) for t in args.targets.split(",")]
    print(f"overload benchmark, {load_average()} at start")
    print(
        f"targets {targets} s, control period {args.period} s, "
        f"map cost {args.cost * 1e6:g} µs/tuple"
    )
    onset = onset_s(args)
    calibration: Calibration | None = None
    if args.capacity:
        cap = args.capacity
    else:
        probed = measure_capacity(
            configuration("dilos", [PROBE_RATE] * 3, targets, args),
            duration_s=args.capacity_duration,
            warmup_s=args.warmup,
            utilization=DEFAULT_TARGET_UTILIZATION,
            burn_ns=args.burn_ns,
        )
        cap, calibration = mix_capacity(probed, targets, args)
        costs = ", ".join(f"{n} {1e6 * c:.0f}" for n, c in calibration.costs_s.items())
        print(
            f"capacity probed {probed:.0f} tuples/s; on the benchmark's mix {cap:.0f} "
            f"(busy {calibration.busy_per_s:.2f} s/s, µs a tuple: {costs}, median floor "
            f"{calibration.floor_s:.2f} s)"
        )
    rates = [round(f * cap) for f in LOAD]
    before = f" from {onset:g} s ({BEFORE_ONSET:g}× those rates before)" if onset else ""
    print(
        f"capacity {cap:.0f} tuples/s; offered {rates} tuples/s "
        f"({sum(LOAD):.2f}× capacity){before}",
        flush=True,
    )
    wanted = args.only.split(",")
    best_h = 1.0
    if "aurora" in wanted:
        sweep = []
        for h in (float(x) for x in args.sweep.split(",")):
            r = run_spark(
                configuration("aurora", rates, targets, args, h),
                duration_s=args.sweep_duration + args.onset_periods * args.period,
                warmup_s=args.warmup,
                burn_ns=args.burn_ns,
            )
            worst, loss, late = summary(r)
            sweep.append((h, worst, loss, late))
            print(
                f"  aurora h={h:g}: worst mean violation {100 * worst:.1f} % of target, "
                f"mean loss {100 * loss:.1f} %" + (", a class late at the end" if late else ""),
                flush=True,
            )
        fine = [s for s in sweep if s[1] <= 0.05 and not s[3]]
        best_h = (
            min(fine, key=lambda s: s[2])[0] if fine else min(sweep, key=lambda s: (s[3], s[1]))[0]
        )
        print(f"  aurora: best static headroom h = {best_h:g} (× each class's share)")
    runs: dict[str, dict[str, Any]] = {}
    for name in wanted:
        runs[name] = run_spark(
            configuration(name, rates, targets, args, best_h),
            duration_s=args.duration,
            warmup_s=args.warmup,
            burn_ns=args.burn_ns,
            extra=["--declared-costs"] if name == "dilos_declared" else (),
        )
        print(f"  {name} done ({runs[name]['wall_s']:.0f} s wall, {load_average()})", flush=True)
    headers = [
        "config",
        "class",
        "D s",
        "rt mean s",
        "rt max s",
        "viol mean s",
        "viol max s",
        "loss %",
        "oracle %",
        "loss/oracle",
    ]
    rows = []
    for name, r in runs.items():
        for cls, c in r["classes"].items():
            ratio = c["loss_vs_oracle"]
            rows.append(
                [
                    name if cls == "c1" else "", cls, f"{c['delay_target_s']:g}",
                    sec(c["mean_response_time_s"]), sec(c["max_response_time_s"]),
                    sec(c["mean_violation_s"]), sec(c["max_violation_s"]),
                    pct(c["loss_fraction"]), pct(c["oracle_loss_fraction"]),
                    "-" if ratio is None else f"{ratio:.2f}",
                ]
            )  # fmt: skip
    print(render_table(headers, rows))
    print(
        f"system view (measured capacity {cap:.0f} tuples/s): the least any configuration can "
        f"shed is {pct(max(0.0, 1 - cap / sum(rates)))} % of the tuples"
    )
    for name, r in runs.items():
        arrived = sum(c["arrived_tuples"] for c in r["classes"].values())
        shed = sum(c["shed_tuples"] for c in r["classes"].values())
        backlog = sum(c["backlog_tuples"] for c in r["classes"].values())
        # what the engine took once the overload had settled: offered over it is the
        # overload this configuration really ran at
        sustained = steady_throughput(r, since_s=onset)
        print(
            f"  {name}: shed {pct(shed / arrived if arrived else 0.0)} % of {arrived} tuples, "
            f"{backlog} still waiting at the end; admitted {sustained:.0f} tuples/s over the "
            f"overload's second half (offered {sum(rates) / sustained:.2f}× that)"
        )
    if "dilos" in runs:
        d = runs["dilos"]["classes"]
        checks = [
            (
                f"{n}: mean violation ≤ 5 % of target",
                c["mean_violation_s"] <= WITHIN_TARGET * c["delay_target_s"],
                f"{c['mean_violation_s']:.3f} s = "
                f"{100 * c['mean_violation_s'] / c['delay_target_s']:.1f} %",
            )
            for n, c in d.items()
        ]
        if calibration is not None:
            lost = run_losses(runs["dilos"])
            least = calibrated_losses(runs["dilos"], calibration)
            checks += [
                (
                    f"{n}: loss ≤ 1.15 × the independent oracle's",
                    lost[n] <= 1.15 * least[n] + 1e-9,
                    f"{pct(lost[n])} % vs {pct(least[n])} % (the run's own oracle: "
                    f"{pct(d[n]['oracle_loss_fraction'])} %)",
                )
                for n in d
            ]
        top_shed = shed_while_feasible(runs["dilos"], "c1", d["c1"]["delay_target_s"])
        checks.append(
            (
                "c1 sheds nothing while feasible",
                top_shed == 0,
                f"{top_shed} tuples (loss over the run {pct(d['c1']['loss_fraction'])} %)",
            )
        )
        for claim, ok, detail in checks:
            print(f"  [{'PASS' if ok else 'FAIL'}] DILoS {claim}: {detail}")
        costs = runs["dilos"]["engine"].get("operator_costs", {})
        rows = [
            [op, f"{1e6 * c['declared_s']:.1f}", f"{1e6 * c['measured_s']:.1f}",
             f"{c['measured_s'] / c['declared_s']:.2f}" if c["declared_s"] else "-"]
            for op, c in costs.items()
        ]  # fmt: skip
        print("operator costs in the DILoS run, µs per input tuple:")
        print(render_table(["operator", "declared", "measured", "measured/declared"], rows))
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

"""Does the QoS promise hold on workloads nobody tuned for? Managers side by side.

    python -m bench.bench_robustness [--workloads 200] [--jobs 2] [--first-seed 0]

Generates ``--workloads`` random workloads (``spark_runner.sim.workloads``: 2–6 classes,
random priorities and targets, some infeasible, constant / step / bursty / sinusoidal
arrivals, background load, stalls, shared segments), runs each in the simulator under
every variant (DILoS with each policy, ALoMa per class, Aurora, CTRL, no manager) and
judges every run against the promises of ``spark_runner.sim.promises``. Prints, per
variant, the share of workloads in which it kept each promise and every promise, and the
worst case of each measure. Simulated time only; ``--jobs`` runs simulations in parallel.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from spark_runner.sim import simulate
from spark_runner.sim.promises import PROMISES, USAGE_TOLERANCE, Verdict, judge
from spark_runner.sim.report import render_table
from spark_runner.sim.workloads import VARIANTS, random_workload

Case = tuple[int, str]  # (workload seed, variant)


def run_case(case: Case) -> Verdict:
    seed, variant = case
    workload = random_workload(seed)
    output = simulate(workload.scenario(variant))
    return judge(workload, output.series, VARIANTS[variant].get("policy", ""))


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "—"


def render(verdicts: dict[str, list[Verdict]]) -> str:
    headers = ["variant", "every promise", *PROMISES, "priority (arrival sheds only)"]
    kept_rows = []
    for variant, runs in verdicts.items():
        kept = [v.kept for v in runs]
        kept_rows.append(
            [
                variant,
                _pct(sum(v.all_kept for v in runs), len(runs)),
                *(_pct(sum(k[p] for k in kept), len(runs)) for p in PROMISES),
                _pct(sum(v.priority_excess_on_arrival <= USAGE_TOLERANCE for v in runs), len(runs)),
            ]
        )
    worst_headers = [
        "variant",
        "priority excess",
        "top-class loss",
        "idle while shedding",
        "late run (periods)",
        "misflagged runs",
    ]
    worst_rows = []
    for variant, runs in verdicts.items():
        losses = [v.top_loss for v in runs if v.top_loss is not None]
        worst_rows.append(
            [
                variant,
                f"{max(v.priority_excess for v in runs):+.3f}",
                f"{max(losses):.2%}" if losses else "—",
                f"{max(v.idle_while_shedding for v in runs):.2%}",
                str(max(v.longest_late_run for v in runs)),
                str(sum(bool(v.misflagged) for v in runs)),
            ]
        )
    return (
        "Share of workloads in which each promise was kept\n"
        + render_table(headers, kept_rows)
        + "\n\nWorst case over the workloads\n"
        + render_table(worst_headers, worst_rows)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="QoS promises on random workloads")
    parser.add_argument("--workloads", type=int, default=200, help="workloads [200]")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first [0]")
    parser.add_argument("--jobs", type=int, default=2, help="parallel simulations [2]")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma-separated [{','.join(VARIANTS)}]"
    )
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"--variants: {', '.join(unknown)} unknown; one of {', '.join(VARIANTS)}")
    seeds = range(args.first_seed, args.first_seed + args.workloads)
    cases = [(seed, variant) for variant in variants for seed in seeds]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(run_case, cases, chunksize=8))
    verdicts: dict[str, list[Verdict]] = {v: [] for v in variants}
    for (_seed, variant), verdict in zip(cases, results, strict=True):
        verdicts[variant].append(verdict)
    print(
        f"{args.workloads} workloads (seeds {seeds.start}–{seeds.stop - 1}), "
        f"{len(cases)} simulations in {time.perf_counter() - started:.0f} s\n"
    )
    print(render(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does the QoS promise hold on workloads nobody tuned for? Managers side by side.

    python -m bench.bench_robustness [--workloads 200] [--jobs 2] [--first-seed 0] [--strict]
                                     [--shape random|turbulent]

Generates ``--workloads`` random workloads (``spark_runner.sim.workloads``: 2–6 classes,
random priorities and targets, some infeasible, constant / step / bursty / sinusoidal
arrivals, background load, stalls, shared segments; ``--shape turbulent``: three classes
with bursty arrivals around a sinusoid, a background job that comes and goes and stalls,
all at once), runs each in the simulator under
every variant (DILoS with each policy, ALoMa per class, Aurora, CTRL, no manager) and
judges every run against the promises of ``spark_runner.sim.promises`` under its policy.
Prints, per variant, the share of the runs that kept each promise among the runs that
judged it (a promise a run gives no period to judge is not counted as kept) and how many
runs that is; the worst case of each measure; and each variant's loss against the oracle
(``spark_runner.core.oracle``), per feasible class, the run's share of its offered output
not answered within target less the oracle's loss: median, p95 and worst, and the runs
in which some class beat the oracle from the top (which would be the oracle's fault),
and the largest loss over the oracle's (classes whose oracle loses at least 1 %).
Simulated time only; ``--jobs`` runs simulations in parallel. ``--strict`` exits with 1
when DILoS under the default policy keeps priority order or the top-class promise in
fewer than 100 % of the runs that judged them, every promise in fewer than 95 %, or a run
beats the oracle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from spark_runner.control.report import render_table
from spark_runner.core.redistribution import DEFAULT_POLICY
from spark_runner.sim import simulate
from spark_runner.sim.promises import (
    PROMISES,
    USAGE_TOLERANCE,
    OracleRow,
    Verdict,
    first_beaten,
    judge,
    oracle_rows,
)
from spark_runner.sim.workloads import VARIANTS, Workload, random_workload, turbulent_workload

SHAPES: dict[str, Callable[[int], Workload]] = {
    "random": random_workload,
    "turbulent": turbulent_workload,
}
Case = tuple[int, str, str]  # (workload seed, variant, shape)
RATIO_FROM = 0.01
"""The loss-over-oracle ratio is reported for classes whose oracle loses at least this."""
STRICT_VARIANT = f"dilos-{DEFAULT_POLICY}"
STRICT_EVERY = 0.95
"""--strict: the least share of runs keeping every promise they judged."""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    rows: list[OracleRow]


def run_case(case: Case) -> Outcome:
    seed, variant, shape = case
    workload = SHAPES[shape](seed)
    output = simulate(workload.scenario(variant))
    verdict = judge(workload, output.series, VARIANTS[variant].get("policy", ""))
    return Outcome(verdict, oracle_rows(workload, output))


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "—"


def kept_share(runs: list[Verdict], promise: str) -> tuple[int, int]:
    """Runs that kept ``promise`` and runs that judged it."""
    said = [v.kept[promise] for v in runs if v.kept[promise] is not None]
    return sum(bool(k) for k in said), len(said)


def render(outcomes: dict[str, list[Outcome]]) -> str:
    headers = ["variant", "every promise", *PROMISES, "priority (arrival sheds only)"]
    kept_rows = []
    for variant, runs in outcomes.items():
        verdicts = [o.verdict for o in runs]
        on_arrival = [
            v.priority_excess_on_arrival <= USAGE_TOLERANCE
            for v in verdicts
            if v.priority_excess_on_arrival is not None
        ]
        kept_rows.append(
            [
                variant,
                _pct(sum(v.all_kept for v in verdicts), len(verdicts)),
                *(
                    f"{_pct(*kept_share(verdicts, p))} of {kept_share(verdicts, p)[1]}"
                    for p in PROMISES
                ),
                f"{_pct(sum(on_arrival), len(on_arrival))} of {len(on_arrival)}",
            ]
        )
    return (
        "Share of the runs that judged a promise in which it was kept (of how many runs)\n"
        + render_table(headers, kept_rows)
        + "\n\nWorst case over the runs\n"
        + render_table(*worst_table(outcomes))
        + "\n\nLoss against the oracle (feasible classes: the run's loss, late answers "
        "counted, less the oracle's; points)\n" + render_table(*oracle_table(outcomes))
    )


def worst_table(outcomes: dict[str, list[Outcome]]) -> tuple[list[str], list[list[str]]]:
    headers = [
        "variant", "priority excess", "top-class loss", "idle share while shedding",
        "late run (periods)", "misflagged runs",
    ]  # fmt: skip
    rows = []
    for variant, runs in outcomes.items():
        verdicts = [o.verdict for o in runs]
        rows.append(
            [
                variant,
                _worst((v.priority_excess for v in verdicts), "{:+.3f}"),
                _worst((v.top_loss for v in verdicts), "{:.2%}"),
                _worst((v.idle_share for v in verdicts), "{:.1%}"),
                str(max(v.longest_late_run for v in verdicts)),
                str(sum(bool(v.misflagged) for v in verdicts)),
            ]
        )
    return headers, rows


def _worst(values: Iterable[float | None], form: str) -> str:
    known = [v for v in values if v is not None]
    return form.format(max(known)) if known else "not judged"


def oracle_table(outcomes: dict[str, list[Outcome]]) -> tuple[list[str], list[list[str]]]:
    headers = [
        "variant", "classes", "median", "p95", "worst", "runs beating the oracle",
        "worst loss / oracle",
    ]  # fmt: skip
    rows = []
    for variant, runs in outcomes.items():
        gaps = sorted(100 * (r.loss - r.oracle) for o in runs for r in o.rows if r.measured)
        beaten = sum(first_beaten(o.rows) is not None for o in runs)
        ratios = [
            r.loss / r.oracle for o in runs for r in o.rows if r.measured and r.oracle >= RATIO_FROM
        ]
        rows.append(
            [
                variant,
                str(len(gaps)),
                f"{statistics.median(gaps):+.1f}" if gaps else "—",
                f"{gaps[min(len(gaps) - 1, int(0.95 * len(gaps)))]:+.1f}" if gaps else "—",
                f"{gaps[-1]:+.1f}" if gaps else "—",
                str(beaten),
                f"{max(ratios):.2f}" if ratios else "—",
            ]
        )
    return headers, rows


def strict_failures(runs: list[Outcome]) -> list[str]:
    """Why DILoS under the default policy fails ``--strict`` (empty: it passes)."""
    verdicts = [o.verdict for o in runs]
    failures = []
    for promise in ("priority_order", "top_class"):
        kept, judged = kept_share(verdicts, promise)
        if kept < judged:
            failures.append(f"{promise} kept in {kept} of the {judged} runs that judged it")
    every = sum(v.all_kept for v in verdicts)
    if every < STRICT_EVERY * len(verdicts):
        failures.append(f"every promise kept in {every} of {len(verdicts)} runs")
    beaten = sum(first_beaten(o.rows) is not None for o in runs)
    if beaten:
        failures.append(f"{beaten} runs beat the oracle")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="QoS promises on random workloads")
    parser.add_argument("--workloads", type=int, default=200, help="workloads [200]")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first [0]")
    parser.add_argument("--jobs", type=int, default=2, help="parallel simulations [2]")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma-separated [{','.join(VARIANTS)}]"
    )
    parser.add_argument("--shape", choices=sorted(SHAPES), default="random", help="[random]")
    parser.add_argument(
        "--strict", action="store_true", help=f"exit 1 when {STRICT_VARIANT} falls short"
    )
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"--variants: {', '.join(unknown)} unknown; one of {', '.join(VARIANTS)}")
    if args.strict and STRICT_VARIANT not in variants:
        parser.error(f"--strict judges {STRICT_VARIANT}: keep it in --variants")
    seeds = range(args.first_seed, args.first_seed + args.workloads)
    cases = [(seed, variant, args.shape) for variant in variants for seed in seeds]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(run_case, cases, chunksize=8))
    outcomes: dict[str, list[Outcome]] = {v: [] for v in variants}
    for (_seed, variant, _shape), outcome in zip(cases, results, strict=True):
        outcomes[variant].append(outcome)
    print(
        f"{args.workloads} {args.shape} workloads (seeds {seeds.start}–{seeds.stop - 1}), "
        f"{len(cases)} simulations in {time.perf_counter() - started:.0f} s\n"
    )
    print(render(outcomes))
    if not args.strict:
        return 0
    failures = strict_failures(outcomes[STRICT_VARIANT])
    for failure in failures:
        print(f"STRICT: {STRICT_VARIANT}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

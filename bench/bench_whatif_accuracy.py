"""How far off are the tuning review's predictions? What-if against what then happened.

    python -m bench.bench_whatif_accuracy [--workloads 20] [--first-seed 0] [--jobs 2]

For each generated workload (``spark_runner.sim.workloads``, DILoS under the default
policy) and each kind of change, the simulator runs the workload with the change applied
live halfway through (``Simulation(changes=…)``, as a job applies a new version at its
next control period). The run's samples before the change are replayed by
``spark_runner.sim.whatif`` (the tuning review's preview) under the configuration in force
and under the change; the samples of the same length after it are what the change then
did. Per class, the error is predicted − measured (positive: predicted worse), of the mean
violation (s) and of the loss (points of the class's tuples). The replay of the
configuration in force against the same window's measurement is the replay's own error
(the load and costs replayed as measured, fresh managers); the change's error adds what the
load did after the change. The kinds:

- ``target``: the lowest-priority class's delay target halved;
- ``priority``: the top and bottom classes' priorities swapped;
- ``policy``: ``absolute`` → ``relative``.

Prints, per kind, the classes compared and the errors' mean of absolute values, median,
p95 and worst, and their mean (the bias). Simulated time only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from spark_runner.contract.control import LiveConfig
from spark_runner.control.report import render_table
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.sim.engine import Simulation
from spark_runner.sim.whatif import (
    ClassOutcome,
    PredictionError,
    measured_outcome,
    prediction_error,
    series_samples,
    what_if,
)
from spark_runner.sim.workloads import DURATION_S, Workload, random_workload, with_manager

VARIANT = "dilos-absolute"
SWITCH_S = DURATION_S / 2
"""The change applies at the control step at this instant."""
WINDOW_S = DURATION_S / 4
"""The window replayed before the change, and the one measured after it."""


def _tighter_target(config: LiveConfig, by_priority: list[str]) -> LiveConfig:
    low = by_priority[-1]
    target = config.classes[low].delay_target_s
    return config.merged({"classes": {low: {"delay_target_s": target / 2}}}, 1)


def _swapped_priorities(config: LiveConfig, by_priority: list[str]) -> LiveConfig:
    top, low = by_priority[0], by_priority[-1]
    p_top, p_low = config.classes[top].priority, config.classes[low].priority
    return config.merged({"classes": {top: {"priority": p_low}, low: {"priority": p_top}}}, 1)


def _relative(config: LiveConfig, _: list[str]) -> LiveConfig:
    return config.merged({"policy": "relative"}, 1)


KINDS: dict[str, Callable[[LiveConfig, list[str]], LiveConfig]] = {
    "target": _tighter_target,
    "priority": _swapped_priorities,
    "policy": _relative,
}


@dataclass(frozen=True)
class Case:
    seed: int
    kind: str


@dataclass(frozen=True)
class Outcome:
    case: Case
    replay: list[PredictionError]
    """The configuration in force replayed against the window it was measured in."""
    change: list[PredictionError]
    """The change predicted against the window after it."""


def run_case(case: Case) -> Outcome:
    workload: Workload = random_workload(case.seed)
    doc = with_manager(workload.doc, VARIANT)
    scenario = workload.scenario(VARIANT)
    current = scenario_live_config(scenario)
    by_priority = sorted(workload.priorities, key=lambda n: -workload.priorities[n])
    proposed = KINDS[case.kind](current, by_priority)
    output = Simulation(scenario, [(SWITCH_S, proposed)]).run()
    samples = series_samples(output.series, scenario.control.period_s)
    before = [s for s in samples if SWITCH_S - WINDOW_S < s["t"] <= SWITCH_S]
    after = [s for s in samples if SWITCH_S < s["t"] <= SWITCH_S + WINDOW_S]
    predicted = what_if(doc, before, current, proposed)
    measured_after = _by_class(after)
    feasible = [n for n in by_priority if n not in workload.infeasible]
    return Outcome(
        case,
        [prediction_error(predicted.current[n], predicted.measured[n]) for n in feasible],
        [prediction_error(predicted.proposed[n], measured_after[n]) for n in feasible],
    )


def _by_class(samples: Sequence[dict[str, object]]) -> dict[str, ClassOutcome]:
    names = {str(s["class_name"]) for s in samples}
    return {n: measured_outcome([s for s in samples if s["class_name"] == n]) for n in names}


def _summary(errors: list[float | None], scale: float, unit: str) -> list[str]:
    values = sorted(e * scale for e in errors if e is not None)
    if not values:
        return ["0", "—", "—", "—", "—", "—"]
    absolute = sorted(abs(v) for v in values)
    p95 = absolute[min(len(absolute) - 1, int(0.95 * len(absolute)))]
    return [
        str(len(values)),
        f"{statistics.mean(absolute):.3f}{unit}",
        f"{statistics.median(absolute):.3f}{unit}",
        f"{p95:.3f}{unit}",
        f"{absolute[-1]:.3f}{unit}",
        f"{statistics.mean(values):+.3f}{unit}",
    ]


def render(outcomes: list[Outcome]) -> str:
    headers = ["kind", "what", "measure", "classes", "mean |error|", "median", "p95", "worst"]
    headers.append("bias")
    rows = []
    for kind in KINDS:
        mine = [o for o in outcomes if o.case.kind == kind]
        for what, pick in (
            ("change vs after", lambda o: o.change),
            ("in force vs same window", lambda o: o.replay),
        ):
            errors = [e for o in mine for e in pick(o)]
            rows.append(
                [kind, what, "violation", *_summary([e.violation_s for e in errors], 1.0, " s")]
            )
            rows.append([kind, what, "loss", *_summary([e.loss for e in errors], 100.0, " pt")])
    return render_table(headers, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", type=int, default=20, help="workloads [20]")
    parser.add_argument("--first-seed", type=int, default=0, help="seed of the first [0]")
    parser.add_argument("--jobs", type=int, default=2, help="parallel simulations [2]")
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.workloads)
    cases = [Case(seed, kind) for seed in seeds for kind in KINDS]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(run_case, cases))
    print(
        f"{args.workloads} workloads (seeds {seeds.start}–{seeds.stop - 1}) × {len(KINDS)} "
        f"changes at {SWITCH_S:g} s, windows of {WINDOW_S:g} s, "
        f"{time.perf_counter() - started:.0f} s\n"
    )
    print("Prediction error, predicted − measured (per feasible class)")
    print(render(outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())

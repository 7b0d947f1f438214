"""No manager beats the oracle (spark_runner.core.oracle) class by class from the top.

The oracle is the least each class could have lost on the machine, the classes above it
served first: a run whose top class lost less than the oracle's top class, or lost as
much and whose next class lost less, and so on, would show the oracle is not the bound
it claims to be. A run's loss here is the share of its offered output that did not
arrive within the target: shed, or answered late (a manager that sheds nothing but
answers late does not beat a yardstick that meets the targets). Infeasible classes are
left out (the oracle judges nothing there).

Random workloads of ``spark_runner.sim.workloads`` under every variant, simulated time.
"""

from __future__ import annotations

import pytest

from spark_runner.sim import simulate
from spark_runner.sim.engine import HIST_BINS_PER_DECADE, HIST_MIN_EXP, SimOutput
from spark_runner.sim.results import build_results
from spark_runner.sim.workloads import VARIANTS, Workload, random_workload

EPS = 0.03
"""How much lower than the oracle's a run's loss may read: the oracle's work arrives
evenly over each period as a fluid, a run's in tuples, and a run's late share is read
from its response-time histogram (bins of about 12 %)."""


def late_share(histogram: list[float], target_s: float) -> float:
    """The share of the answers over ``target_s`` (a bin counts as late from its centre)."""
    total = sum(histogram)
    if total <= 0:
        return 0.0
    late = sum(
        count
        for b, count in enumerate(histogram)
        if 10 ** (HIST_MIN_EXP + (b + 0.5) / HIST_BINS_PER_DECADE) > target_s
    )
    return late / total


def losses(workload: Workload, out: SimOutput) -> list[tuple[str, float, float]]:
    """Per feasible class, highest priority first: (name, the run's loss, the oracle's)."""
    results = build_results(out)["classes"]
    rows = []
    for name in sorted(workload.priorities, key=lambda n: -workload.priorities[n]):
        if name in workload.infeasible:
            continue
        c = results[name]
        late = late_share(out.totals[name].histogram, c["delay_target_s"])
        run = c["loss_fraction"] + (1.0 - c["loss_fraction"]) * late
        rows.append((name, run, c["oracle_loss_fraction"]))
    return rows


def first_beaten(rows: list[tuple[str, float, float]]) -> str | None:
    """The first class, from the top, where the run lost less than the oracle by more
    than ``EPS`` while every class above it lost as much (within ``EPS``); None if none."""
    for name, run, oracle in rows:
        if run < oracle - EPS:
            return name
        if run > oracle + EPS:
            return None
    return None


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seed", range(6))
def test_no_manager_beats_the_oracle_from_the_top(seed: int, variant: str) -> None:
    workload = random_workload(seed)
    rows = losses(workload, simulate(workload.scenario(variant)))
    report = ", ".join(f"{n}: run {r:.3f} oracle {o:.3f}" for n, r, o in rows)
    assert first_beaten(rows) is None, report

"""No manager beats the oracle (spark_runner.core.oracle) class by class from the top.

The oracle is the least each class could have lost on the machine, the classes above it
served first: a run whose top class lost less than the oracle's top class, or lost as
much and whose next class lost less, and so on, would show the oracle is not the bound
it claims to be (:func:`spark_runner.sim.promises.first_beaten`). A run's loss counts its
late answers as lost: a manager that sheds nothing but answers late does not beat a
yardstick that meets the targets. Random workloads of ``spark_runner.sim.workloads``
under every variant, simulated time. The workloads are fixed: on rotating ones a run
under stalls read 3.2 points below the oracle (``bench_robustness``, workload 52,
``dilos-strict``), which the oracle's account of stalled time may explain (issue 44,
open).
"""

from __future__ import annotations

import pytest

from spark_runner.sim import simulate
from spark_runner.sim.promises import first_beaten, oracle_rows
from spark_runner.sim.workloads import VARIANTS, random_workload


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("seed", range(6))
def test_no_manager_beats_the_oracle_from_the_top(seed: int, variant: str) -> None:
    workload = random_workload(seed)
    rows = oracle_rows(workload, simulate(workload.scenario(variant)))
    report = ", ".join(f"{r.name}: run {r.loss:.3f} oracle {r.oracle:.3f}" for r in rows)
    assert first_beaten(rows) is None, report

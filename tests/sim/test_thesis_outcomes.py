"""The thesis's outcomes in CI: every table of ``python -m bench.bench_thesis_tables``
(simulated time, deterministic), each outcome reproduced.

The tables run in three groups of about equal time, so the suite's workers share them
(one test of all of them was the shared pass's longest by far); the groups' outcomes
add up to the benchmark's 24."""

from __future__ import annotations

import pytest

from bench import bench_thesis_tables as thesis

GROUPS = {
    ("table8",): 7,
    ("table9_10",): 3,
    ("table1", "table2", "table4", "background", "table5", "table6"): 14,
}
"""Each group of tables and how many outcomes it checks (the last group's CTRL tables
need CTRL's hand tuning, which runs once for them)."""


def test_the_groups_hold_every_table_once() -> None:
    names = [name for group in GROUPS for name in group]
    assert sorted(names) == sorted(thesis.TABLES) and sum(GROUPS.values()) == 24


@pytest.mark.parametrize("group", list(GROUPS), ids="+".join)
def test_every_thesis_outcome_is_reproduced(
    group: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs ``group``'s tables on one core; fails on any outcome not reproduced."""
    runner, report = thesis.Runner(jobs=1), thesis.Report()
    needs_tuning = {"table2", "table4", "background"} & set(group)
    tuned = thesis.tune_ctrl(runner)[0] if needs_tuning else 0.0
    for name in group:
        thesis.TABLES[name](runner, report, tuned)
    failed = {(o.table, o.claim) for o in report.outcomes if not o.ok}
    details = "\n".join(f"{o.table}: {o.claim} ({o.detail})" for o in report.outcomes if not o.ok)
    assert len(report.outcomes) == GROUPS[group], capsys.readouterr().out
    assert failed == set(), details

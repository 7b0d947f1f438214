"""The thesis's outcomes in CI: every table of ``python -m bench.bench_thesis_tables``
(simulated time, deterministic), each outcome reproduced but the ones listed here."""

from __future__ import annotations

import pytest

from bench import bench_thesis_tables as thesis

KNOWN_NOT_REPRODUCED = {
    (
        "Table 8",
        "DILoS (both): every class within its target (mean rt <= D, mean violation <= 5 % of D)",
    ),
}
"""Outcomes DILoS does not reproduce today: class 3 of Table 8 keeps a standing queue, its
mean violation 0.106 s against a bar of 0.025 s (0.0073 s with sharing, within it). Open
in issue 44: the controller is to be fixed and the entry removed, not the check widened."""


def test_every_thesis_outcome_is_reproduced_but_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Runs all the tables on one core; fails on any outcome newly not reproduced, and on a
    known one that is reproduced again (its entry is then to go)."""
    runner, report = thesis.Runner(jobs=1), thesis.Report()
    tuned, _ = thesis.tune_ctrl(runner)
    for table in thesis.TABLES.values():
        table(runner, report, tuned)
    failed = {(o.table, o.claim) for o in report.outcomes if not o.ok}
    details = "\n".join(f"{o.table}: {o.claim} ({o.detail})" for o in report.outcomes if not o.ok)
    assert len(report.outcomes) == 24, capsys.readouterr().out
    assert failed == KNOWN_NOT_REPRODUCED, details

"""The thesis's outcomes in CI: every table of ``python -m bench.bench_thesis_tables``
(simulated time, deterministic), each outcome reproduced."""

from __future__ import annotations

import pytest

from bench import bench_thesis_tables as thesis


def test_every_thesis_outcome_is_reproduced(capsys: pytest.CaptureFixture[str]) -> None:
    """Runs all the tables on one core; fails on any outcome not reproduced."""
    runner, report = thesis.Runner(jobs=1), thesis.Report()
    tuned, _ = thesis.tune_ctrl(runner)
    for table in thesis.TABLES.values():
        table(runner, report, tuned)
    failed = {(o.table, o.claim) for o in report.outcomes if not o.ok}
    details = "\n".join(f"{o.table}: {o.claim} ({o.detail})" for o in report.outcomes if not o.ok)
    assert len(report.outcomes) == 24, capsys.readouterr().out
    assert failed == set(), details

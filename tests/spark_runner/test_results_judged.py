"""A Spark run's results say when they judge nothing (issue 14: ``headroom run`` exited 0
printing loss 0.00 after a warm-up that overran and one batch)."""

from __future__ import annotations

import json
from typing import Any

from spark_runner.control.results import dumps_results
from spark_runner.engine.results import MIN_MEASURED_PERIODS, measurement_problem


def results(periods: int, *, ended: bool = True, measured_from_s: float = 10.0) -> dict[str, Any]:
    return {
        "scenario": {"duration_s": 1.5 * periods},
        "engine": {
            "warmup_s": 10.0,
            "warmup_ended": ended,
            "measured_from_s": measured_from_s,
            "batches": periods + 8,
        },
        "series": [{"t_s": 10.0 + 1.5 * i} for i in range(periods)],
    }


def test_a_run_with_enough_periods_is_judged() -> None:
    assert measurement_problem(results(MIN_MEASURED_PERIODS)) is None


def test_a_warmup_that_never_ended_is_named() -> None:
    problem = measurement_problem(results(0, ended=False))
    assert problem is not None
    assert "warm-up (10 s) overran" in problem and "nothing was measured" in problem


def test_too_few_periods_say_how_many_and_how_late_the_warmup_ended() -> None:
    problem = measurement_problem(results(1, measured_from_s=62.0))
    assert problem is not None
    assert "overran by 52.0 s" in problem
    assert (
        f"1 control periods were measured (1.5 s); a run needs at least {MIN_MEASURED_PERIODS}"
        in problem
    )


def test_the_results_file_always_has_a_series() -> None:
    assert json.loads(dumps_results({"engine": {}, "series": []}))["series"] == []

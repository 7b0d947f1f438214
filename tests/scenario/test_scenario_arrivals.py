"""Arrival patterns as rate schedules: integrals, steps, Pareto ranges, traces."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_runner.scenario.arrivals import (
    RateSchedule,
    TraceError,
    bounded_pareto,
    build_schedule,
    read_trace,
)
from spark_runner.scenario.models import ParetoArrival, StepArrival, TraceArrival

ROOT = Path(__file__).resolve().parents[2]


def test_step_schedule_and_its_integral() -> None:
    arrival = StepArrival.model_validate(
        {"kind": "step", "steps": [{"at_s": 0, "rate_per_s": 200}, {"at_s": 10, "rate_per_s": 350}]}
    )
    sched = build_schedule(arrival, 400, random.Random(0), 0.5)
    assert sched.rate_at(5) == 200 and sched.rate_at(10) == 350
    assert sched.count_before(10) == pytest.approx(2000)
    assert sched.count_before(20) == pytest.approx(5500)
    assert sched.mean_rate(0, 20) == pytest.approx(275)


def test_steps_must_increase() -> None:
    with pytest.raises(ValueError, match="at_s must increase"):
        StepArrival.model_validate(
            {"kind": "step", "steps": [{"at_s": 5, "rate_per_s": 1}, {"at_s": 5, "rate_per_s": 2}]}
        )


schedules = st.lists(
    st.tuples(st.floats(0.01, 50), st.floats(0, 5000)), min_size=1, max_size=8
).map(
    lambda parts: RateSchedule(
        tuple([0.0] + [sum(d for d, _ in parts[: i + 1]) for i in range(len(parts) - 1)]),
        tuple(r for _, r in parts),
    )
)


@given(schedules, st.floats(0, 300), st.floats(0, 300), st.floats(0, 300))
def test_count_is_monotone_and_additive(sched: RateSchedule, a: float, b: float, c: float) -> None:
    x, y, z = sorted((a, b, c))
    assert sched.count_before(x) <= sched.count_before(y) + 1e-6
    total = sched.count_before(z)
    parts = sched.count_before(y) + (sched.count_before(z) - sched.count_before(y))
    assert total == pytest.approx(parts)


def test_pareto_draws_stay_in_range_and_follow_the_seed() -> None:
    arrival = ParetoArrival.model_validate(
        {
            "kind": "pareto",
            "ranges": [
                {"from_s": 0, "min_rate_per_s": 800, "max_rate_per_s": 1300},
                {"from_s": 50, "min_rate_per_s": 100, "max_rate_per_s": 200},
            ],
        }
    )
    a = build_schedule(arrival, 100, random.Random(1), 0.15)
    b = build_schedule(arrival, 100, random.Random(1), 0.15)
    c = build_schedule(arrival, 100, random.Random(2), 0.15)
    assert a == b and a != c
    first = [r for t, r in zip(a.starts, a.rates, strict=True) if t < 50]
    second = [r for t, r in zip(a.starts, a.rates, strict=True) if t >= 50]
    assert all(800 <= r <= 1300 for r in first) and all(100 <= r <= 200 for r in second)
    # skewness 1: most periods near the minimum (bounded Pareto mean ~ 1010 here)
    assert 900 < sum(first) / len(first) < 1120
    assert a.starts[1] == pytest.approx(0.15)


@given(st.floats(1, 1000), st.floats(0, 1000), st.floats(0.2, 4), st.integers(0, 10**6))
def test_bounded_pareto_is_bounded(low: float, extra: float, shape: float, seed: int) -> None:
    x = bounded_pareto(random.Random(seed), low, low + extra, shape)
    assert low - 1e-9 <= x <= low + extra + 1e-9


def test_shipped_trace_has_two_rising_spiky_periods() -> None:
    rows = read_trace(ROOT / "scenarios" / "traces" / "bursty_lbl_like.csv")
    rates = [r for _, r in rows]
    assert len(rows) == 800 and rows[-1][0] == pytest.approx(399.5)

    def mean(t0: float, t1: float) -> float:
        picked = [r for t, r in rows if t0 <= t < t1]
        return sum(picked) / len(picked)

    base = mean(0, 50)
    assert mean(120, 160) > 1.6 * base and mean(300, 340) > 2.0 * base
    assert mean(180, 230) < 1.2 * base
    assert max(rates) > 4 * base


def test_trace_loop_and_scale(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("# comment\ntime_s,rate_per_s\n0,10\n1,20\n")
    arrival = TraceArrival.model_validate(
        {"kind": "trace", "path": "t.csv", "scale": 2, "loop": True},
        context={"base_dir": tmp_path},  # a local scenario file's folder
    )
    sched = build_schedule(arrival, 10, random.Random(0), 1)
    assert [sched.rate_at(t) for t in (0.5, 1.5, 2.5, 3.5)] == [20, 40, 20, 40]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("", "is empty"),
        ("t,r\n0,1\n", "header must be"),
        ("time_s,rate_per_s\n", "no rows"),
        ("time_s,rate_per_s\n1,5\n", "first row must be at time_s 0"),
        ("time_s,rate_per_s\n0,5\n0,6\n", "must be > the previous"),
        ("time_s,rate_per_s\n0,abc\n", "must be numbers"),
    ],
)
def test_trace_errors(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(TraceError, match=fragment):
        read_trace(path)

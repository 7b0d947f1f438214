"""The batch budget in simulated time, and response-time statistics."""

from __future__ import annotations

import random

import numpy as np
import pytest

from spark_runner.engine.costs import BatchBudget
from spark_runner.engine.digest import RunDigest, period_stats


def cycle(work: float, overhead: float, alpha: float, rng: random.Random) -> float:
    return (overhead + alpha * work) * rng.uniform(0.9, 1.1)


def test_budget_fills_the_period_whatever_the_machine() -> None:
    rng = random.Random(1)
    for overhead, alpha in [(0.3, 0.5), (0.1, 3.0), (0.5, 0.2)]:
        budget = BatchBudget(period_s=1.0, utilization=0.9, initial_s=0.05)
        for _ in range(60):
            budget.update(budget.budget_s, cycle(budget.budget_s, overhead, alpha, rng))
        expected = (0.9 - overhead) / alpha
        assert budget.budget_s == pytest.approx(expected, rel=0.15)


def test_a_slower_machine_shrinks_the_budget_within_a_few_batches() -> None:
    rng = random.Random(2)
    budget = BatchBudget(period_s=1.0, utilization=0.9, initial_s=1.0)
    for _ in range(40):
        budget.update(budget.budget_s, cycle(budget.budget_s, 0.3, 0.5, rng))
    before = budget.budget_s
    batches = 0
    while budget.budget_s > 0.6 * before:  # another process takes half the machine
        budget.update(budget.budget_s, cycle(budget.budget_s, 0.3, 1.0, rng))
        batches += 1
    assert batches <= 6


def test_an_idle_batch_teaches_nothing_an_overrun_shrinks() -> None:
    budget = BatchBudget(period_s=1.0, utilization=0.9, initial_s=1.0, floor_fraction=0.0)
    assert budget.update(0.1, 0.4) == 1.0  # not limited, not late: unchanged
    assert budget.update(0.1, 1.8) < 0.1  # late although not limited: at most what it took


def test_a_fixed_cost_above_the_target_leaves_a_floor() -> None:
    budget = BatchBudget(period_s=1.0, utilization=0.9, initial_s=1.0)
    for _ in range(30):  # even an empty batch takes 1.2 s on this machine
        budget.update(budget.budget_s, 1.2 + 0.1 * budget.budget_s)
    assert budget.budget_s == pytest.approx(0.2)


def test_period_statistics_are_exact() -> None:
    rt = np.array([0.5, 1.0, 1.5, 2.0, 4.0])
    s = period_stats(rt, delay_target_s=1.5)
    assert (s.count, s.mean_s, s.max_s, s.p50_s) == (5, 1.8, 4.0, 1.5)
    assert s.p99_s == pytest.approx(np.percentile(rt, 99))
    assert s.violation_mean_s == pytest.approx((0.5 + 2.5) / 5)
    assert s.violation_max_s == 2.5
    assert period_stats(np.empty(0), 1.0).mean_s is None


def test_run_digest_p95_within_a_bin() -> None:
    rng = np.random.default_rng(0)
    digest = RunDigest(delay_target_s=1.0)
    samples = rng.lognormal(mean=-0.5, sigma=0.4, size=20_000)
    for chunk in np.array_split(samples, 50):
        digest.add(chunk)
    exact = np.percentile(samples, 95)
    assert digest.quantile_s(0.95) == pytest.approx(exact, rel=0.13)
    assert digest.count == 20_000 and digest.max_s == samples.max()
    assert digest.violation_mean_s == pytest.approx(np.maximum(samples - 1.0, 0).mean())

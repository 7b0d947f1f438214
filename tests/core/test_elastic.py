"""The elastic policy in simulated time: holds, one-step sizing, bounds, hysteresis."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from spark_runner.core.elastic import (
    ScalingAction,
    ScalingParams,
    ScalingPolicy,
    bounded_shed,
    initial_size,
    job_usage,
    sized_at_start,
    spared_queues,
)
from spark_runner.core.errors import ParameterError
from spark_runner.core.params import build_params

PARAMS = ScalingParams(hold_out_s=10.0, hold_in_s=30.0, min_executors=1, max_executors=8)


@dataclass
class Pool:
    """A fluid job: ``load(t)`` s/s of work on executors of 1 s/s each; a requested
    executor serves ``startup_s`` after the request, a released one stops at once."""

    policy: ScalingPolicy
    load: Callable[[float], float]
    cluster: int = 16
    startup_s: float = 5.0
    executors: int = 1
    actions: list[ScalingAction] = field(default_factory=list)
    usage: list[float] = field(default_factory=list)
    _ready_at: float | None = None

    def run(self, until_s: float, period_s: float = 1.0) -> Pool:
        t = 0.0
        while t < until_s:
            t += period_s
            if self._ready_at is not None and t >= self._ready_at:
                self.executors, self._ready_at = self.policy.target, None
            u = self.load(t) / self.executors
            self.usage.append(u)
            action = self.policy.step(t, u, self.executors, self.cluster - self.executors)
            if action is None:
                continue
            self.actions.append(action)
            if action.executors_after < self.executors:
                self.executors = action.executors_after
            else:
                self._ready_at = t + self.startup_s
        return self


def pool(
    load: Callable[[float], float],
    params: ScalingParams = PARAMS,
    *,
    executors: int = 1,
    cluster: int = 16,
) -> Pool:
    return Pool(ScalingPolicy(params, executors), load, cluster=cluster, executors=executors)


def constant(load: float) -> Callable[[float], float]:
    return lambda t: load


def test_a_scale_out_waits_for_its_hold_then_sizes_to_tau1_in_one_step() -> None:
    run = pool(lambda t: 2.0).run(until_s=9.0)
    assert run.actions == []  # 9 s at u = 2 < the 10 s hold
    run = pool(lambda t: 2.0).run(until_s=11.0)
    (action,) = run.actions
    assert (action.rule, action.executors_before, action.executors_after) == ("scale_out", 1, 5)
    assert action.held_s == pytest.approx(10.0)  # ⌈1 × 2.0 / 0.4⌉ = 5
    assert (action.utilization, action.threshold) == (2.0, PARAMS.tau3)


def test_a_broken_hold_starts_again() -> None:
    run = pool(lambda t: 2.0 if t % 8 else 0.5).run(until_s=60.0)  # dips every 8 s
    assert run.actions == []


@pytest.mark.parametrize(
    ("cluster", "maximum", "size"), [(16, 3, 3), (3, 8, 3), (1, 8, None), (16, 1, None)]
)
def test_a_scale_out_stays_within_the_free_cores_and_the_job_maximum(
    cluster: int, maximum: int, size: int | None
) -> None:
    params = ScalingParams(hold_out_s=10.0, max_executors=maximum)
    run = pool(lambda t: 2.0, params, cluster=cluster).run(until_s=30.0)
    assert [a.executors_after for a in run.actions] == ([size] if size else [])


def test_a_scale_in_waits_for_its_longer_hold_and_never_goes_below_m() -> None:
    params = ScalingParams(hold_out_s=10.0, hold_in_s=30.0, min_executors=2, max_executors=8)
    run = pool(lambda t: 0.3, params, executors=6).run(until_s=29.0)
    assert run.actions == []  # u = 0.05 for 29 s < 30 s
    run = pool(lambda t: 0.3, params, executors=6).run(until_s=120.0)
    (action,) = run.actions  # ⌈6 × 0.05 / 0.4⌉ = 1, held up by M = 2
    assert (action.rule, action.executors_after) == ("scale_in", 2)


def test_usage_between_tau0_and_tau3_changes_nothing() -> None:
    run = pool(lambda t: 2.0 + 1.5 * ((t // 7) % 2), executors=4).run(until_s=600.0)
    assert run.actions == []  # u alternates 0.5 and 0.875


def test_under_constant_load_nothing_follows_the_initial_action() -> None:
    for load in (0.95, 1.7, 3.9, 7.0):
        run = pool(constant(load)).run(until_s=300.0)
        assert len(run.actions) == 1, (load, run.actions)
        size = min(math.ceil(load / PARAMS.tau1), PARAMS.max_executors)
        assert run.executors == size
        assert PARAMS.tau0 < run.usage[-1] < PARAMS.tau3  # at τ1 or the most 8 give


def test_no_action_while_a_requested_size_is_not_yet_serving() -> None:
    policy = ScalingPolicy(PARAMS, executors=1)
    for t in range(11):
        action = policy.step(float(t), 2.0, executors=1, free_executors=8)
    assert action is not None and policy.target == 5
    assert all(policy.step(11.0 + t, 2.0, 1, 8) is None for t in range(60))
    assert policy.step(72.0, 2.0 / 5, 5, 4) is None  # serving at last: u = τ1, nothing


def test_a_size_the_cluster_cannot_start_is_given_up_after_the_startup_timeout() -> None:
    policy = ScalingPolicy(ScalingParams(max_executors=8, startup_timeout_s=60.0), 1)
    for t in range(11):
        policy.step(float(t), 2.0, executors=1, free_executors=8)
    assert policy.target == 5
    assert policy.step(69.0, 2.0, 1, 8) is None and policy.target == 5  # still waiting
    assert policy.step(70.0, 2.0, 1, 8) is None and policy.target == 1  # given up
    for t in range(71, 81):
        action = policy.step(float(t), 2.0, 1, 8)  # a new hold from there
    assert action is not None and action.executors_after == 5


def test_load_aware_sizing_reconfigures_less_than_one_at_a_time_under_a_rising_load() -> None:
    """StreamCloud's comparison (seed 002 §V): a load rising linearly from 0.2 to 6 s/s
    over 20 minutes. One step to τ1 reconfigures 2 times where ±1 steps take 6, keeps
    the mean utilisation nearer τ1 (0.60 against 0.80), and saturates no longer."""

    def rising(t: float) -> float:
        return 0.2 + 5.8 * min(t, 1200.0) / 1200.0

    aware = pool(rising).run(until_s=1200.0)
    one_at_a_time = ScalingParams(hold_out_s=10.0, max_executors=8, sizing="one_at_a_time")
    single = pool(rising, one_at_a_time).run(until_s=1200.0)
    assert [a.executors_after for a in aware.actions] == [3, 8]
    assert [a.executors_after for a in single.actions] == [2, 3, 4, 5, 6, 7]
    mean = [sum(run.usage) / len(run.usage) for run in (aware, single)]
    assert abs(mean[0] - PARAMS.tau1) < abs(mean[1] - PARAMS.tau1)
    saturated = [sum(u >= 1.0 for u in run.usage) for run in (aware, single)]
    assert saturated[0] <= saturated[1]


def test_shedding_covers_only_what_scaling_cannot() -> None:
    policy = ScalingPolicy(PARAMS, executors=1)
    assert policy.shed_bound(0.0, 2.0, executors=1, free_executors=8) is None  # no hold yet
    policy.step(0.0, 2.0, executors=1, free_executors=8)  # the hold starts
    assert policy.shed_bound(0.0, 2.0, 1, 8) == pytest.approx(1 - 0.8 / 2.0)  # above τ2 only
    assert policy.shed_bound(0.0, 0.7, 1, 8) == 0.0
    assert policy.shed_bound(0.0, 2.0, 1, 0) is None  # the cluster is full: managers decide
    at_max = ScalingPolicy(ScalingParams(max_executors=1), executors=1)
    at_max.step(0.0, 2.0, executors=1, free_executors=8)
    assert at_max.shed_bound(0.0, 2.0, 1, 8) is None


def test_new_executors_count_as_capacity_coming_until_they_are_warm() -> None:
    """A scale-out's executors serve slowly at first (their JVM and Python workers
    start): for ``warmup_s`` after they serve, the job still sheds only above τ2, lowest
    classes first, even at its maximum size."""
    params = build_params(ScalingParams, {"max_executors": 2, "warmup_s": 15.0}, base=PARAMS)
    policy = ScalingPolicy(params, executors=1)
    for t in range(11):
        action = policy.step(float(t), 2.0, executors=1, free_executors=1)
    assert action is not None and action.executors_after == 2
    assert policy.step(14.0, 2.0, executors=1, free_executors=1) is None  # starting
    assert policy.shed_bound(14.0, 2.0, 1, 1) is not None
    policy.step(20.0, 1.5, executors=2, free_executors=0)  # serving from 20 s
    # warming: the slow first batches read u 3.0, but the pool was sized for 2.0 × 1 / 2
    assert policy.shed_bound(30.0, 3.0, 2, 0) == pytest.approx(1 - 0.8 / 1.0)
    assert policy.shed_bound(34.0, 0.9, 2, 0) == pytest.approx(1 - 0.8 / 0.9)
    assert policy.shed_bound(35.0, 1.5, 2, 0) is None  # warm, at the maximum: managers
    shrink = ScalingPolicy(params, executors=2)
    for t in range(31):
        shrink.step(float(t), 0.1, executors=2, free_executors=0)
    shrink.step(31.0, 0.2, executors=1, free_executors=1)  # a scale-in warms nothing
    assert shrink.shed_bound(32.0, 0.9, 1, 1) is None


def test_a_run_asking_esj_starts_at_m_and_never_below_what_it_declares() -> None:
    esj = build_params(ScalingParams, {"start": "expected_load"}, base=PARAMS)
    assert sized_at_start(PARAMS, 1.0) == PARAMS  # start at min_executors: as declared
    assert sized_at_start(esj, 1.0).min_executors == 3  # ⌈1 / (1 × 0.4)⌉
    assert sized_at_start(esj, 0.1).min_executors == 1
    declared = build_params(ScalingParams, {"min_executors": 4}, base=esj)
    assert sized_at_start(declared, 1.0).min_executors == 4
    two_cores = build_params(ScalingParams, {"executor_cores": 2}, base=esj)
    assert sized_at_start(two_cores, 1.0).min_executors == 2  # ⌈1 / (2 × 0.4)⌉
    assert sized_at_start(esj, 100.0).min_executors == PARAMS.max_executors


def test_initial_size_is_esj_m() -> None:
    assert initial_size(1.0, capacity_per_executor=1.0, params=PARAMS) == 3  # ⌈1 / 0.4⌉
    assert initial_size(0.0, 1.0, PARAMS) == 1
    assert initial_size(100.0, 1.0, PARAMS) == PARAMS.max_executors
    with pytest.raises(ParameterError, match="capacity_per_executor"):
        initial_size(1.0, 0.0, PARAMS)


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"tau1": 0.1}, "tau1"),
        ({"hold_out_s": 0.0}, "hold_out_s"),
        ({"hold_in_s": 5.0}, "hold_in_s"),
        ({"min_executors": 0}, "min_executors"),
        ({"min_executors": 3, "max_executors": 2}, "max_executors"),
        ({"sizing": "greedy"}, "sizing"),
    ],
)
def test_bad_settings_name_their_field(values: dict[str, object], field: str) -> None:
    with pytest.raises(ParameterError) as err:
        ScalingParams(**values)  # type: ignore[arg-type]
    assert err.value.field == field


def test_job_usage_is_the_load_over_the_pool_capacity() -> None:
    assert job_usage({"a": 0.5, "b": 1.0}, 0.75) == pytest.approx(2.0)
    assert job_usage({"a": 0.0}, 0.0) == 0.0
    assert job_usage({"a": 0.1}, 0.0) == math.inf


def test_while_capacity_comes_priority_decides_who_sheds() -> None:
    """The work the managers shed together, at most the bound, is taken from the lowest
    classes up: the higher ones are spared."""
    loads = {"gold": 1.0, "silver": 1.0, "bronze": 2.0}
    order = ["gold", "silver", "bronze"]
    shed = {"gold": 0.2, "silver": 0.5, "bronze": 0.4}  # 0.2 + 0.5 + 0.8 = 1.5 of 4
    assert bounded_shed(shed, loads, 0.25, order) == pytest.approx(  # at most 1
        {"gold": 0.0, "silver": 0.0, "bronze": 0.5}
    )
    assert bounded_shed(shed, loads, 0.7, order) == pytest.approx(  # all 1.5, bronze's
        {"gold": 0.0, "silver": 0.0, "bronze": 0.75}
    )
    heavy = {"gold": 0.5, "silver": 0.5, "bronze": 0.9}  # 2.8 of 4
    assert bounded_shed(heavy, loads, 0.7, order) == pytest.approx(
        {"gold": 0.0, "silver": 0.8, "bronze": 1.0}
    )
    assert bounded_shed(heavy, loads, 0.0, order) == pytest.approx(dict.fromkeys(order, 0.0))


def test_a_class_the_bound_spares_keeps_its_queue() -> None:
    """Gold's manager sheds, the bound moved its shedding to bronze: gold's queued tuples
    wait for the capacity coming; bronze (shedding) and silver (whose manager sheds
    nothing) keep their stale rules; without a bound nothing changes."""
    managed = {"gold": 0.25, "silver": 0.0, "bronze": 0.1}
    applied = {"gold": 0.0, "silver": 0.0, "bronze": 0.2}
    stale = {"gold": "g", "silver": "s", "bronze": "b"}
    assert spared_queues(managed, applied, stale) == {"gold": None, "silver": "s", "bronze": "b"}
    assert spared_queues(managed, managed, stale) == stale

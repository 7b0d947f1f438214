"""The batch budget and the measured branch costs in simulated time, and response-time
statistics."""

from __future__ import annotations

import random

import numpy as np
import pytest

from spark_runner.engine.measure.costs import BatchBudget, BranchScales
from spark_runner.engine.measure.digest import RunDigest, period_stats
from spark_runner.engine.measure.measures import ArrivalSummary, ResponseSample
from spark_runner.engine.measure.task_times import Branch, BranchLayout


def cycle(work: float, overhead: float, alpha: float, rng: random.Random) -> float:
    return (overhead + alpha * work) * rng.uniform(0.9, 1.1)


@pytest.mark.parametrize(
    ("overhead", "alpha"), [(0.3, 0.5), (0.1, 0.9), (0.45, 0.35), (0.2, 1.0), (0.1, 1.5)]
)
def test_budget_fills_the_period_whatever_the_machine(overhead: float, alpha: float) -> None:
    """Saturated batches converge to the budget that fills the target, even when the
    true scale differs from the assumed 1/parallelism (0.5 here)."""
    rng = random.Random(1)
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(80):
        budget.update(budget.budget_s, cycle(budget.budget_s, overhead, alpha, rng))
    assert budget.budget_s == pytest.approx((0.9 - overhead) / alpha, rel=0.15)


def test_every_batch_teaches_the_fixed_time_full_or_not() -> None:
    rng = random.Random(3)
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5, fixed_s=0.8)
    for _ in range(30):  # the managers shed: batches carry a tenth of the budget
        work = 0.1 * budget.budget_s
        budget.update(work, cycle(work, 0.3, 0.5, rng))
    assert budget.budget_s == pytest.approx((0.9 - 0.3) / 0.5, rel=0.1)


def test_a_slower_machine_shrinks_the_budget_within_a_few_batches() -> None:
    rng = random.Random(2)
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(40):
        budget.update(budget.budget_s, cycle(budget.budget_s, 0.3, 0.5, rng))
    before = budget.budget_s
    batches = 0
    while budget.budget_s > 0.7 * before:  # another process takes half the machine
        budget.update(budget.budget_s, cycle(budget.budget_s, 0.3, 1.0, rng))
        batches += 1
    assert batches <= 6


def test_one_slow_batch_moves_nothing() -> None:
    """A GC pause or a scheduling hiccup must not shrink the budget (every class's load
    would jump with it and the top class shed)."""
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(20):
        budget.update(budget.budget_s, 0.3 + 0.5 * budget.budget_s)
    before = budget.budget_s
    budget.update(before, 2 * (0.3 + 0.5 * before))
    assert budget.budget_s == pytest.approx(before)
    assert budget.overrun_s == pytest.approx(0.3 + 0.5 * before)  # a stall, no capacity
    budget.update(before, 0.5 * (0.3 + 0.5 * before))
    assert budget.overrun_s == 0.0


def test_one_slow_batch_after_a_resize_moves_nothing() -> None:
    """A second executor joins (two task slots) and its first batch loads state stores:
    5× its model. The fixed time learnt before the resize still holds; the batches that
    follow on two slots teach it as before."""
    budget = BatchBudget(period_s=2.0, utilization=0.9, alpha=1.0)
    for _ in range(20):
        budget.update(budget.budget_s, 0.6 + 1.0 * budget.budget_s)
    before = budget.fixed_s
    assert before == pytest.approx(0.6, rel=0.01)
    budget.rescale(0.5)
    budget.update(budget.budget_s, 5 * (0.6 + 0.5 * budget.budget_s))
    assert budget.fixed_s == pytest.approx(before, rel=0.01)
    for _ in range(10):  # on two slots the fixed time is 0.8 s
        budget.update(budget.budget_s, 0.8 + 0.5 * budget.budget_s)
    assert budget.fixed_s == pytest.approx(0.8, rel=0.05)


def test_a_slow_start_does_not_hold_the_fixed_time_above_the_cycles() -> None:
    """The first batches (JIT compilation, worker starts) took 10 s; then batches take
    0.3 s + their work. Within three batches the fixed time is no longer above them."""
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(3):
        budget.update(0.1, 10.0)
    assert budget.fixed_s > 5.0
    for _ in range(3):
        budget.update(budget.budget_s, 0.3 + 0.5 * budget.budget_s)
    assert budget.fixed_s <= 0.3 + 0.5 * budget.budget_s + 1e-9
    budget.settle()
    assert budget.fixed_s == pytest.approx(0.3)


def test_after_a_warm_up_the_fixed_time_is_the_median_of_the_batches_since() -> None:
    """A warm-up's batches left 7.6 s of fixed time (JIT, unlearnt scales); from its end
    batches take 3.4 s + their work (±10 %). The first batch after it sets the fixed time,
    the median of those since follows, and after a window of batches the smoothing goes
    on. At 30 % a batch toward the median it was still 4.5 s (every class's load 1.4× too
    high) after five batches."""
    rng = random.Random(2)
    budget = BatchBudget(period_s=8.0, utilization=0.9, alpha=0.5, fixed_s=7.6)
    for _ in range(4):
        budget.update(0.1, 7.6 + 0.05)
    budget.settle()
    assert budget.fixed_s == pytest.approx(7.6)
    fixed = []
    for _ in range(8):
        work = budget.budget_s
        budget.update(work, (3.4 + 0.5 * work) * rng.uniform(0.9, 1.1))
        fixed.append(budget.fixed_s)
    assert all(f == pytest.approx(3.4, rel=0.2) for f in fixed), fixed
    budget.update(budget.budget_s, 20.0)  # smoothing again: one slow batch moves nothing
    assert budget.fixed_s == pytest.approx(fixed[-1], rel=0.1)


def test_a_fixed_cost_above_the_target_leaves_a_floor() -> None:
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5, floor_fraction=0.1)
    for _ in range(30):  # even an empty batch takes 1.2 s on this machine
        budget.update(budget.budget_s, 1.2 + 0.5 * budget.budget_s)
    assert budget.budget_s == pytest.approx(0.1 * 0.9 / 0.5)


def test_period_statistics_of_exact_response_times() -> None:
    rt = np.array([0.5, 1.0, 1.5, 2.0, 4.0])
    s = period_stats(ResponseSample.exact(rt), delay_target_s=1.5)
    assert (s.count, s.mean_s, s.max_s, s.p50_s, s.p99_s) == (5, 1.8, 4.0, 1.5, 4.0)
    assert s.violation_mean_s == pytest.approx((0.5 + 2.5) / 5)
    assert s.violation_max_s == 2.5
    assert period_stats(ResponseSample(), 1.0).mean_s is None


def test_answers_measured_in_spark_merge_exactly_where_they_can() -> None:
    """Two uses of one class report arrival summaries (as ``observe`` does); count, mean
    and max are exact, the quantiles within a percentile of the pooled ones."""
    rng = np.random.default_rng(3)
    early, late = rng.uniform(0.0, 1.0, 3_000), rng.uniform(0.5, 2.5, 1_000)
    sample = ResponseSample()
    for arrivals in (early, late):
        summary = ArrivalSummary.of(arrivals)
        assert summary is not None
        sample.add_answers(summary, commit_s=3.0)
    pooled = 3.0 - np.concatenate([early, late])
    assert sample.count == 4_000
    assert sample.mean_s == pytest.approx(pooled.mean())
    assert sample.max_s == pytest.approx(pooled.max())
    for level in (0.5, 0.95, 0.99):
        exact = float(np.quantile(pooled, level))
        assert sample.quantile_s(level) == pytest.approx(exact, abs=0.03)
    violation = np.maximum(pooled - 2.0, 0.0).mean()
    assert sample.violation_mean_s(2.0) == pytest.approx(violation, abs=0.01)


def test_run_digest_p95_within_a_bin() -> None:
    rng = np.random.default_rng(0)
    digest = RunDigest()
    samples = rng.lognormal(mean=-0.5, sigma=0.4, size=20_000)
    for chunk in np.array_split(samples, 50):
        digest.add(ResponseSample.exact(chunk), 1.0)
    exact = np.percentile(samples, 95)
    assert digest.quantile_s(0.95) == pytest.approx(exact, rel=0.13)
    assert digest.count == 20_000 and digest.max_s == samples.max()
    assert digest.violation_mean_s == pytest.approx(np.maximum(samples - 1.0, 0).mean())


def test_branch_scales_learn_what_each_branch_really_costs() -> None:
    """Two branches without a shared node: branch 0 truly costs 4× its declared work,
    branch 1 as declared; Spark's times carry ±20 % noise."""
    rng = random.Random(3)
    scales = BranchScales([[0, 1], [2, 3]], outputs=[1, 3])
    for _ in range(60):
        work = [rng.uniform(0.05, 0.1) for _ in range(4)]
        truth = {1: 4 * (work[0] + work[1]), 3: work[2] + work[3]}
        scales.update(work, [100] * 4, {o: t * rng.uniform(0.8, 1.2) for o, t in truth.items()})
    assert scales.branch_scale(0) == pytest.approx(4.0, rel=0.15)
    assert scales.branch_scale(1) == pytest.approx(1.0, rel=0.15)
    assert scales.node_scales(4) == pytest.approx([4.0, 4.0, 1.0, 1.0], rel=0.15)


def test_an_expensive_lower_branch_weighs_on_its_own_nodes_not_the_shared_segment() -> None:
    """Node 0 is a shared segment the owner's branch (0, 1) and a lower class's branch
    (0, 2) both compute, at its declared cost in each; the lower class's own node 2 costs
    10× its declared work. The owner's branch comes first: the segment keeps the owner's
    scale (1) and the lower branch's excess lands on node 2 alone."""
    rng = random.Random(5)
    scales = BranchScales([[0, 1], [0, 2]], outputs=[1, 2])
    for _ in range(60):
        work = [rng.uniform(0.05, 0.1) for _ in range(3)]
        truth = {1: work[0] + work[1], 2: work[0] + 10 * work[2]}
        scales.update(work, [100] * 3, {o: t * rng.uniform(0.8, 1.2) for o, t in truth.items()})
    node = scales.node_scales(3)
    assert node[0] == pytest.approx(1.0, rel=0.15) and node[1] == pytest.approx(1.0, rel=0.15)
    assert node[2] == pytest.approx(10.0, rel=0.15)


def test_a_branchs_fixed_cpu_per_batch_is_not_counted_per_tuple() -> None:
    """A window branch spends 0.3 s of CPU per batch whatever its tuples (tasks, state
    stores) and twice its declared work per tuple; Spark's times carry ±10 % noise. The
    rate runs high, then drops 20×: the branch's per-tuple scale stays near 2 instead of
    growing with the fixed part (it read 14 when that part counted per tuple)."""
    rng = random.Random(11)
    scales = BranchScales([[0, 1]], outputs=[1])
    for work_s in [0.5] * 40 + [0.025] * 40:
        work = [work_s / 2 * rng.uniform(0.9, 1.1) for _ in range(2)]
        truth = 0.3 + 2 * sum(work)
        scales.update(work, [100, 100], {1: truth * rng.uniform(0.9, 1.1)})
    assert scales.fixed_s[0] == pytest.approx(0.3, rel=0.2)
    assert scales.branch_scale(0) == pytest.approx(2.0, rel=0.3)
    assert scales.node_scales(2) == pytest.approx([scales.branch_scale(0)] * 2)


def test_one_slow_batch_does_not_erase_a_learnt_fixed_cpu() -> None:
    """A window branch spends 0.11 s of CPU per batch and little per tuple; its batches'
    sizes vary by 4× (±15 % noise on the times). One batch, a little larger than most,
    takes 2 s (a GC pause, a new executor's first tasks): it enters the fit at twice what
    the model expected, so the fixed CPU keeps at least half its value. Taken as it came,
    that batch made the intercept negative and set the fixed CPU to 0 for the rest of the
    run."""
    rng = random.Random(1)
    scales = BranchScales([[0]], outputs=[0])
    after: list[float] = []
    for i in range(80):
        work = 6e-4 if i == 40 else rng.uniform(1e-4, 4e-4)
        time_s = 2.0 if i == 40 else (0.11 + 10 * work) * rng.uniform(0.85, 1.15)
        scales.update([work], [40], {0: time_s})
        if i >= 40:
            after.append(scales.fixed_s[0])
    assert min(after) > 0.055, after
    assert scales.fixed_s[0] == pytest.approx(0.11, rel=0.25)
    with pytest.raises(ValueError, match=r"outlier is 1\.0; it must be above 1"):
        BranchScales([[0]], outputs=[0], outlier=1.0)


def test_a_steady_load_teaches_no_fixed_cpu_and_noise_little() -> None:
    """Under a steady rate the work hardly varies: nothing tells a fixed part from a
    per-tuple one, so none is assumed. A load that varies widely with no fixed part
    (±20 % noise) leaves the per-tuple scale near the truth."""
    rng = random.Random(13)
    steady = BranchScales([[0]], outputs=[0])
    varied = BranchScales([[0]], outputs=[0])
    for _ in range(80):
        w = 0.1 * rng.uniform(0.9, 1.1)
        steady.update([w], [100], {0: (0.2 + 3 * w) * rng.uniform(0.9, 1.1)})
        v = rng.uniform(0.02, 0.2)
        varied.update([v], [100], {0: 3 * v * rng.uniform(0.8, 1.2)})
    assert steady.fixed_s == [0.0]
    assert steady.branch_scale(0) == pytest.approx(5.0, rel=0.15)  # at this rate: right
    assert varied.fixed_s[0] < 0.1 * varied.measured_s[0]
    assert varied.branch_scale(0) == pytest.approx(3.0, rel=0.2)


def test_branch_scales_ignore_what_they_cannot_judge() -> None:
    scales = BranchScales([[0], [1]], outputs=[0, 1], min_tuples=20)
    scales.update([0.001, 0.2], [3, 100], {0: 5.0, 1: 0.2})  # 3 tuples cannot tell
    scales.update([0.2, 0.2], [100, 100], {0: 0.2})  # branch 1 not measured this batch
    assert scales.branch_scale(0) == 1.0 and scales.modelled_s[1] == pytest.approx(0.2)
    scales.update([0.2, 0.2], [100, 100], {1: 1e6})  # an absurd time is held at the bound
    assert scales.branch_scale(1) == 1000.0
    assert scales.node_scales(3)[2] == 1.0  # a node in no branch keeps its prior


def test_a_union_task_belongs_to_the_child_whose_partitions_hold_it() -> None:
    layout = BranchLayout(
        (
            Branch(output=4, partitions=2, codegen=frozenset({1, 2, 3})),  # a shuffle's
            Branch(output=7, partitions=0, codegen=frozenset({5, 6}), point=1),  # its point's
            Branch(output=9, partitions=0, codegen=frozenset({8}), point=0),
        )
    )
    partitions = layout.partitions([0, 1])  # this batch, point 0 had no tuples
    assert partitions == [2, 1, 0]
    assert [layout.owner_of_task(i, partitions) for i in range(4)] == [4, 4, 7, None]
    assert layout.partitions([3]) is None  # point 1 unknown: the tasks cannot be told apart
    assert layout.owner_of_codegen([1, 2]) == 4
    assert layout.owner_of_codegen([2, 10]) == 4  # a stage of the union itself is no branch's
    assert layout.owner_of_codegen([3, 5]) is None  # spans two branches: split by task


def test_a_machine_that_turned_slower_shrinks_the_budget_after_two_batches() -> None:
    """Batches suddenly take twice their model's time (fixed time and work alike): after
    two of them the budget fits the target at that speed; one slow batch moves nothing,
    and the factor returns to 1 as the fixed time takes the slowdown in."""
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(20):
        budget.update(budget.budget_s, 0.3 + 0.5 * budget.budget_s)
    before = budget.budget_s
    work = before
    budget.update(work, 2 * (0.3 + 0.5 * work))
    assert budget.slowdown == 1.0 and budget.budget_s == pytest.approx(before)
    assert budget.stall == pytest.approx(2.0)  # the managers see that one batch stalled
    budget.update(work, 2 * (0.3 + 0.5 * work))
    assert budget.slowdown == pytest.approx(2.0, rel=0.05)
    assert budget.fixed_now_s == pytest.approx(2 * budget.fixed_s)
    work = budget.budget_s
    assert 2 * (0.3 + 0.5 * work) <= 0.9 * 1.1  # the next batch fits its cycle
    for _ in range(40):
        budget.update(budget.budget_s, 2 * (0.3 + 0.5 * budget.budget_s))
    assert budget.slowdown == pytest.approx(1.0, abs=0.05)


def test_one_stalled_batch_shows_as_a_stall_and_moves_no_budget() -> None:
    """One batch ran four times its model (a new executor loading its state stores): the
    stall reads 4 for that batch only; the budget, the slowdown and the fixed time do not
    move, and a batch at speed brings the stall back to 1."""
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    assert budget.stall == 1.0  # nothing measured
    for _ in range(20):
        budget.update(budget.budget_s, 0.3 + 0.5 * budget.budget_s)
    before, fixed = budget.budget_s, budget.fixed_s
    budget.update(before, 4 * (0.3 + 0.5 * before))
    assert budget.stall == pytest.approx(4.0) and budget.slowdown == 1.0
    assert budget.budget_s == pytest.approx(before) and budget.fixed_s == pytest.approx(fixed)
    budget.update(before, 0.3 + 0.5 * before)
    assert budget.stall == pytest.approx(1.0)


def test_batches_slower_within_the_utilizations_margin_keep_the_budget() -> None:
    """Two batches 10 % slower than their model still end within the period (utilization
    0.9): no slowdown, the budget stays. 15 % slower is one."""
    budget = BatchBudget(period_s=8.0, utilization=0.9, alpha=0.5, fixed_s=3.6)
    for _ in range(20):
        budget.update(budget.budget_s, 3.6 + 0.5 * budget.budget_s)
    before = budget.budget_s
    for _ in range(2):
        budget.update(before, 1.1 * (budget.fixed_s + 0.5 * before))
    assert budget.slowdown == 1.0 and budget.budget_s == pytest.approx(before, rel=0.05)
    for _ in range(2):
        budget.update(before, 1.15 * (budget.fixed_s + 0.5 * before))
    assert budget.slowdown == pytest.approx(1.15)


def test_a_machine_that_turned_faster_again_regains_its_budget_after_two_batches() -> None:
    """A hog took half the machine long enough for the fixed time to take it in; when it
    leaves, batches run in half their model's time: after two of them the fixed time in
    force is the machine's again (the floor and the pace follow it), one fast batch moves
    nothing, and noise within 20 % of the model is no change of speed."""
    budget = BatchBudget(period_s=1.0, utilization=0.9, alpha=0.5)
    for _ in range(40):  # the hog's batches: everything twice as slow
        budget.update(budget.budget_s, 2 * (0.3 + 0.5 * budget.budget_s))
    assert budget.fixed_s > 0.6 and budget.speed == pytest.approx(1.0, abs=1e-3)  # o took it in
    hogged = budget.budget_s
    work = hogged
    budget.update(work, 0.3 + 0.5 * work)
    assert budget.speed == pytest.approx(1.0, abs=1e-3) and budget.budget_s == pytest.approx(
        hogged, rel=0.01
    )
    budget.update(work, 0.3 + 0.5 * work)
    assert budget.speed == pytest.approx((0.3 + 0.5 * work) / (budget.fixed_s + 0.5 * work))
    assert budget.fixed_now_s < 0.4  # the machine's 0.3 s, within the work's share
    assert budget.slowdown == 1.0  # what the managers see: no slower than the model
    assert budget.budget_s > 3 * hogged
    for _ in range(40):
        budget.update(budget.budget_s, 0.3 + 0.5 * budget.budget_s)
    assert budget.speed == 1.0 and budget.fixed_s == pytest.approx(0.3, rel=0.05)
    for ratio in (0.85, 0.82, 0.9):  # noise
        budget.update(budget.budget_s, ratio * (0.3 + 0.5 * budget.budget_s))
        assert budget.speed == 1.0

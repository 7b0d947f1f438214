"""The pace between batches: the tightest loaded target sets it, within its bounds; in the
closed loop (simulated time) a higher class then answers no later than a lower one."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.engine.control.pacing import (
    CUT_MARGIN,
    LEAST_WORK_SHARE,
    MEAN_SHARE,
    MIN_PACE_S,
    MIN_WORK_SHARE,
    TARGET_SHARE,
    WORK_MARGIN,
    bare_floor_s,
    floor_s,
    least_pace_s,
    mean_floor_s,
    mean_pace_s,
    pace_s,
)

from .plant import Plant, one_map_scenario


def test_the_tightest_target_sets_the_pace_so_a_full_admission_meets_it() -> None:
    pace = pace_s([3.0, 1.5, 2.0], period_s=1.0, fixed_s=0.3, utilization=0.9)
    assert pace == pytest.approx(TARGET_SHARE * 1.5 / 1.9)
    # a tuple waits one pace in the log and at most u × pace in its batch
    assert pace * (1 + 0.9) <= TARGET_SHARE * 1.5 + 1e-12


def test_no_class_with_tuples_or_loose_targets_keep_the_configured_period() -> None:
    assert pace_s([], period_s=1.0, fixed_s=0.3, utilization=0.9) == 1.0
    assert pace_s([30.0], period_s=1.0, fixed_s=0.3, utilization=0.9) == 1.0


def test_a_target_no_batch_can_meet_does_not_starve_the_work() -> None:
    fixed = 0.4
    pace = pace_s([0.2], period_s=1.0, fixed_s=fixed, utilization=0.9)
    assert pace == pytest.approx(fixed / (0.9 * (1 - MIN_WORK_SHARE)))
    assert 0.9 * pace - fixed >= MIN_WORK_SHARE * 0.9 * pace - 1e-12
    assert pace_s([0.01], period_s=1.0, fixed_s=0.0, utilization=0.9) == MIN_PACE_S


def test_at_the_least_pace_the_floor_is_what_a_full_batch_gives() -> None:
    """With the fixed time forcing the least pace (a cold start), the batch budget fills
    ``u × P`` and the classes below fill it: the floor a class is judged feasible by is
    then the response time a full batch gives, not one pace and the fixed time."""
    fixed = 1.5
    pace = pace_s([4.0], period_s=1.0, fixed_s=fixed, utilization=0.9)
    assert floor_s(pace, fixed, 0.9) == pytest.approx((1 + 0.9) * pace)
    assert bare_floor_s(pace, fixed) == pytest.approx(pace + fixed)
    assert bare_floor_s(pace, fixed) < 4.0 < floor_s(pace, fixed, 0.9)  # silver's cold start


def test_an_infeasible_target_does_not_set_the_pace_of_the_others() -> None:
    """A class whose target no batch can meet (its pace would leave a batch less than
    MIN_WORK_SHARE for work) is served at the pace the feasible class needs."""
    fixed = 0.4
    least = fixed / (0.9 * (1 - MIN_WORK_SHARE))
    pace = pace_s([0.2, 3.0], period_s=2.0, fixed_s=fixed, utilization=0.9)
    assert pace == pytest.approx(TARGET_SHARE * 3.0 / 1.9) and pace > least
    # only infeasible targets loaded: the bound
    assert pace_s([0.2, 0.3], period_s=2.0, fixed_s=fixed, utilization=0.9) == pytest.approx(least)


def test_a_target_above_the_mean_floor_is_served_at_the_pace_its_mean_needs() -> None:
    """A target whose own pace would be below the least pace, but above the mean answer a
    fully admitted class gets there (half the least pace's wait and the fixed time), is
    feasible: it sets the pace instead of leaving it to a looser class, and where the work
    share's bound would lengthen the pace past what its mean allows, the pace is cut back
    to that (the classes below get shorter batches)."""
    fixed, u = 0.66, 0.9
    assert mean_floor_s(fixed, u) == pytest.approx(least_pace_s(fixed, u, 0.0) / 2 + fixed)
    least = least_pace_s(fixed, u, MIN_WORK_SHARE)  # the classes offer much work
    # 1.5 s: its own pace is below the bound and a full batch's answer there above it,
    # but the mean answer is within it
    assert least > TARGET_SHARE * 1.5 / 1.9 and floor_s(least, fixed, u) > 1.5
    assert mean_floor_s(fixed, u) < 1.5
    pace = pace_s([1.5, 2.0, 3.0], period_s=2.0, fixed_s=fixed, utilization=u)
    assert pace == pytest.approx(mean_pace_s(1.5, u)) and pace < least
    assert (0.5 + u) * pace == pytest.approx(MEAN_SHARE * 1.5)
    # the longest answer at that pace: one pace and a batch of the budget's cycle
    assert floor_s(pace, fixed, u) == pytest.approx((1 + u) * pace)
    # a target below the mean floor leaves the pace to the looser class
    pace = pace_s([1.0, 3.0], period_s=2.0, fixed_s=fixed, utilization=u)
    assert mean_floor_s(fixed, u) > 1.0 and pace == pytest.approx(TARGET_SHARE * 3.0 / 1.9)


def test_the_mean_pace_is_cut_no_shorter_than_a_tenth_of_the_cycle_for_work() -> None:
    """With the fixed time near the mean floor of the tightest target, its mean pace would
    leave a batch no room for work: the pace stops at the least one (LEAST_WORK_SHARE)."""
    fixed, u = 0.9, 0.9
    assert mean_floor_s(fixed, u) < 1.5 < (0.5 + u) * least_pace_s(fixed, u, 0.0) / MEAN_SHARE
    pace = pace_s([1.5, 3.0], period_s=2.0, fixed_s=fixed, utilization=u)
    assert pace == pytest.approx(least_pace_s(fixed, u, 0.0))
    assert u * pace - fixed == pytest.approx(LEAST_WORK_SHARE * u * pace)


def test_the_pace_adapts_to_the_cycle_the_engine_achieves_not_the_configured_period() -> None:
    """A configured period shorter than the batch's fixed time allows would leave every
    batch at its budget's floor: with no target that needs a shorter one, the pace keeps
    a quarter of the cycle for work."""
    fixed = 0.9
    least = fixed / (0.9 * (1 - MIN_WORK_SHARE))
    assert pace_s([4.0], period_s=0.5, fixed_s=fixed, utilization=0.9) == pytest.approx(least)
    assert pace_s([], period_s=0.5, fixed_s=fixed, utilization=0.9) == pytest.approx(least)


def test_light_classes_get_batches_nearly_back_to_back() -> None:
    """The least pace leaves for work what the classes offer (with a margin), not a
    quarter of the cycle: with a fixed time of 0.55 s and tuples needing 4 % of a cycle
    (the trades workload), batches start 0.68 s apart, not 0.81 s; as the offered work
    grows the bound returns to a quarter of the cycle, never less than a tenth."""
    fixed, u = 0.55, 0.9
    light = pace_s([1.5, 2.0, 3.0], period_s=2.0, fixed_s=fixed, utilization=u, offered_share=0.04)
    assert light == pytest.approx(fixed / (u * (1 - LEAST_WORK_SHARE)))
    some = pace_s([1.5], period_s=2.0, fixed_s=fixed, utilization=u, offered_share=0.1)
    assert some == pytest.approx(fixed / (u * (1 - WORK_MARGIN * 0.1)))
    heavy = pace_s([1.5], period_s=2.0, fixed_s=fixed, utilization=u, offered_share=0.5)
    assert heavy == pytest.approx(fixed / (u * (1 - MIN_WORK_SHARE)))
    assert light < some < heavy
    # the budget at the light pace still takes the offered work with its margin
    assert u * light - fixed >= WORK_MARGIN * 0.04 * u * light


def test_light_classes_start_batches_sooner_with_loads_reckoned_as_before(tmp_path: Path) -> None:
    """The closed loop with light classes and a fixed time of 0.55 s (the trades workload's
    shape): batches start at the least pace their offered work needs, below the one that
    leaves a quarter of each cycle; the loads the managers and the elastic policy read
    stay reckoned at that quarter-cycle pace, so a light load reads light; nothing is
    shed and gold meets 1.5 s."""
    light = one_map_scenario({"gold": 50.0, "silver": 50.0, "bronze": 50.0}, TARGETS, 0.0005)
    plant = Plant(light, tmp_path, overhead_s=0.55)
    plant.run(80)
    controller, decision = plant.controller, plant.outcomes[-1].decision
    offered = controller.budget.offered_share
    assert offered is not None and WORK_MARGIN * offered < LEAST_WORK_SHARE
    fixed = controller.budget.fixed_now_s
    assert decision.pace_s == pytest.approx(fixed / (0.9 * (1 - LEAST_WORK_SHARE)))
    assert controller.pace_s == pytest.approx(fixed / (0.9 * (1 - MIN_WORK_SHARE)))
    recent = [s for o in plant.outcomes[-40:] for s in o.samples]
    periods = len(plant.outcomes[-40:])
    assert sum(s.load or 0.0 for s in recent) / periods < 0.2
    assert sum(s.shed_count or 0 for s in recent) == 0
    assert _mean_response(plant, "gold", 40) <= TARGETS["gold"]


RATES = {"gold": 100.0, "silver": 200.0, "bronze": 300.0}
TARGETS = {"gold": 1.5, "silver": 2.0, "bronze": 3.0}


def _mean_response(plant: Plant, name: str, last: int) -> float:
    samples = [s for o in plant.outcomes[-last:] for s in o.samples if s.class_name == name]
    count = sum(s.output_count for s in samples)
    return sum((s.response_time_mean_s or 0.0) * s.output_count for s in samples) / count


def test_every_class_loaded_latency_follows_priority_and_the_top_class_loses_nothing(
    tmp_path: Path,
) -> None:
    """Three loaded classes (priorities 6/3/1) at about 1.4× what the batches can take:
    the top class's tight target sets short batches; it is admitted in full, answers
    within its target and first; the lower classes wait longer and shed."""
    plant = Plant(one_map_scenario(RATES, TARGETS, cost_s=0.002), tmp_path)
    plant.run(200)
    tail = 100
    means = [_mean_response(plant, n, tail) for n in TARGETS]
    assert means == sorted(means), means  # gold ≤ silver ≤ bronze
    recent = [s for o in plant.outcomes[-tail:] for s in o.samples]
    gold = [s for s in recent if s.class_name == "gold"]
    assert sum(s.shed_count or 0 for s in gold) == 0
    assert max(s.response_time_max_s or 0.0 for s in gold) <= TARGETS["gold"]
    bronze_shed = sum(s.shed_count or 0 for s in recent if s.class_name == "bronze")
    assert bronze_shed > 0
    assert plant.outcomes[-1].decision.pace_s == pytest.approx(TARGET_SHARE * TARGETS["gold"] / 1.9)


def test_a_cost_declared_wrong_is_measured_and_the_top_class_keeps_its_target(
    tmp_path: Path,
) -> None:
    """Gold's map is declared free but costs 4 ms a tuple (0.4 s/s of the engine's ~1.4
    s/s of demand). With the executor time measured per query, gold's weights converge to
    its true cost, the load model sees gold's load, and gold stays within its target and
    loses nothing. With the declared costs the model sees a free gold (its load ≈ 0: the
    budget's fixed time absorbs gold's work and the other classes' loads are inflated)."""
    wrong = one_map_scenario(RATES, TARGETS, cost_s=0.002, declared_s={"gold": 0.0})
    truth = {"gold": 0.004}
    measured = Plant(wrong, tmp_path, true_cost_s=truth)
    declared = Plant(
        wrong, tmp_path, true_cost_s=truth, options=ControllerOptions(measured_costs=False)
    )
    for plant in (measured, declared):
        plant.run(200)
    costs = measured.controller.declared_and_measured()
    # the branch's measured time spreads over its operators (point and map) by their
    # declared weights: together they weigh what a gold tuple costs
    branch = sum(costs[n.op_id]["measured_s"] for n in measured.plan.nodes if n.owner == "gold")
    assert branch == pytest.approx(0.004, rel=0.2)
    tail = [s for o in measured.outcomes[-100:] for s in o.samples if s.class_name == "gold"]
    assert sum(s.shed_count or 0 for s in tail) == 0
    assert max(s.response_time_max_s or 0.0 for s in tail) <= TARGETS["gold"]

    def gold_load(plant: Plant) -> float:
        return plant.controller.load_model.snapshot()["gold"].load

    assert gold_load(measured) > 0.3 and gold_load(declared) < 0.01


def test_a_fixed_time_near_the_top_target_is_paid_by_the_classes_below(tmp_path: Path) -> None:
    """The stateful overload's shape on Spark (``scenarios/stateful_overload.yaml``): a
    fixed time of 0.78 s a batch, 1 ms a tuple, 1.6 s of work a second asked of two
    cores. At the pace the work share's bound sets (a quarter of each cycle for work),
    every batch ran 1.04 s and gold answered at 1.62 s on average, over its 1.5 s target,
    while silver lost nothing. Cut to the pace gold's mean allows, gold answers within its
    target and loses nothing; silver sheds and still meets its own; bronze sheds most."""
    rates = {"gold": 80.0, "silver": 300.0, "bronze": 1200.0}
    plant = Plant(one_map_scenario(rates, TARGETS, cost_s=0.001), tmp_path, overhead_s=0.78)
    plant.run(120)
    tail = 60
    recent = [s for o in plant.outcomes[-tail:] for s in o.samples]

    def lost(name: str) -> float:
        mine = [s for s in recent if s.class_name == name]
        return sum(s.shed_count or 0 for s in mine) / sum(s.arrived_count for s in mine)

    gold, silver = _mean_response(plant, "gold", tail), _mean_response(plant, "silver", tail)
    # gold's mean pace (0.91 s) is below the least pace, which leaves a tenth for work:
    # half of that pace's wait and a batch of its cycle, under the target
    least = least_pace_s(0.78, 0.9, 0.0)
    assert gold == pytest.approx((0.5 + 0.9) * least, rel=0.03) and gold < TARGETS["gold"]
    assert gold <= silver <= TARGETS["silver"]
    assert lost("gold") == 0.0 < lost("silver") < lost("bronze")
    assert plant.outcomes[-1].decision.pace_s < least_pace_s(0.78, 0.9, MIN_WORK_SHARE)


def test_a_pace_cut_for_the_top_class_leaves_it_its_own_work(tmp_path: Path) -> None:
    """The same shape with gold at 200 tuples/s: its own work is a ninth of a cycle, which
    its 60 % quota of a cut batch's tenth would not hold (gold then queued, answered at
    2.5 s and rising). The cut stops where gold's work fits with ``CUT_MARGIN``: here at
    the quarter's bound, and gold loses nothing."""
    rates = {"gold": 200.0, "silver": 300.0, "bronze": 1200.0}
    plant = Plant(one_map_scenario(rates, TARGETS, cost_s=0.001), tmp_path, overhead_s=0.78)
    plant.run(80)
    shares = plant.controller.budget.offered_shares()
    assert shares["gold"] == pytest.approx(200 * 0.001 * plant.alpha / 0.9, rel=0.05)
    assert CUT_MARGIN * shares["gold"] > MIN_WORK_SHARE
    assert plant.outcomes[-1].decision.pace_s == pytest.approx(
        least_pace_s(0.78, 0.9, MIN_WORK_SHARE), rel=0.02
    )
    gold = [s for o in plant.outcomes[-40:] for s in o.samples if s.class_name == "gold"]
    assert sum(s.shed_count or 0 for s in gold) == 0
    assert gold[-1].waiting_count == 0


STATEFUL_RATES = {"gold": 80.0, "silver": 300.0, "bronze": 1200.0}


def _gold_violation(fixed_s: float, targets: dict[str, float], tmp_path: Path) -> float:
    """Gold's mean violation over the last 60 periods of the stateful overload's shape
    (1 ms a tuple, 1.6 s of work a second asked) at a batch fixed time of ``fixed_s``."""
    plant = Plant(
        one_map_scenario(STATEFUL_RATES, targets, cost_s=0.001), tmp_path, overhead_s=fixed_s
    )
    plant.run(120)
    gold = [s for o in plant.outcomes[-60:] for s in o.samples if s.class_name == "gold"]
    answers = sum(s.output_count for s in gold)
    return sum((s.violation_mean_s or 0.0) * s.output_count for s in gold) / answers


@pytest.mark.parametrize(
    ("gold_s", "fixed_s", "within"),
    [(1.5, 0.75, True), (1.5, 0.85, False), (2.0, 0.8, True), (2.0, 1.0, True)],
)
def test_how_slow_a_machine_the_stateful_top_target_tolerates(
    gold_s: float, fixed_s: float, within: bool, tmp_path: Path
) -> None:
    """The margin the Spark stateful test's targets leave (``STATEFUL_TARGETS`` in
    ``test_spark_priority``): gold at 1.5 s keeps its bar (mean violation ≤ 5 % of the
    target) at a fixed time of 0.75 s a batch and loses it past 0.8 s, where even the
    shortest pace (a tenth of each cycle for work, every other class shed) answers too
    late; at 2 s it keeps it up to 1 s."""
    targets = {"gold": gold_s, "silver": gold_s + 0.5, "bronze": 3.0}
    violation = _gold_violation(fixed_s, targets, tmp_path)
    assert (violation <= 0.05 * gold_s) is within, violation

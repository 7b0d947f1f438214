"""The controller's elastic policy in the plant (simulated time, no Spark): the pool
follows the policy, a batch's work runs as many times faster as executors serve."""

from __future__ import annotations

from pathlib import Path

from spark_runner.contract.actions import SCALING_KINDS, ControlAction
from spark_runner.scenario.compose import scenario_live_config

from .plant import Plant, one_map_scenario

RATES = {"gold": 300.0, "silver": 600.0, "bronze": 900.0}
TARGETS = {"gold": 3.0, "silver": 4.0, "bronze": 5.0}
ELASTIC = "{executor_cores: 2, max_executors: %d, hold_out_s: 5, hold_in_s: 15}"


def plant(tmp_path: Path, max_executors: int, rates: dict[str, float] = RATES) -> Plant:
    scenario = one_map_scenario(rates, TARGETS, cost_s=0.001, elastic=ELASTIC % max_executors)
    return Plant(scenario, tmp_path)


def resizes(p: Plant) -> list[ControlAction]:
    return [a for a in p.controller.action_log.actions if a.kind in SCALING_KINDS]


def shed(p: Plant, name: str, since: int = 0) -> int:
    return sum(
        s.shed_count or 0 for o in p.outcomes[since:] for s in o.samples if s.class_name == name
    )


def test_a_sustained_overload_scales_out_once_and_shedding_stops(tmp_path: Path) -> None:
    """1.8 s of work a second on one executor of 2 slots (0.9 s a second plus each
    batch's fixed time: overloaded); the pool grows in one step and, the load constant,
    nothing follows; once the executors serve, nobody sheds."""
    p = plant(tmp_path, max_executors=8)
    p.run(200)
    actions = resizes(p)
    assert [(a.kind, a.executors_before) for a in actions] == [("scale_out", 1)]
    assert actions[0].executors_after is not None
    assert actions[0].executors_after >= 3  # to τ1 in one step, not one at a time
    assert shed(p, "gold") == 0
    assert all(shed(p, n, since=100) == 0 for n in RATES)
    # its verdict: the shedding it replaced is gone (loss down), and the runner was handed
    # the action twice, taken and judged
    verdict = actions[0].verdict
    assert verdict is not None and verdict.outcome == "improved", actions[0]
    assert verdict.loss_after < verdict.loss_before
    posted = [a for o in p.outcomes for a in o.actions if a.seq == actions[0].seq]
    assert [a.verdict is not None for a in posted] == [False, True]


def test_at_the_maximum_size_priority_decides_who_sheds(tmp_path: Path) -> None:
    p = plant(tmp_path, max_executors=1)
    p.run(150)
    assert resizes(p) == []
    assert shed(p, "gold") == 0
    assert shed(p, "gold") <= shed(p, "silver") <= shed(p, "bronze")
    assert shed(p, "bronze", since=50) > 0


def test_while_capacity_comes_the_job_sheds_only_what_is_above_tau2(tmp_path: Path) -> None:
    """While the new executors start, the shed fractions the job applies keep at least
    τ2 of its capacity's worth of load (a shedding class's tuples already too old to
    meet their target are still shed as stale; a class the bound spares keeps them)."""
    p = plant(tmp_path, max_executors=8)
    p.run(60)
    series = p.controller.series
    adding = [e for e in series if e["executors"] < e["executors_requested"]]
    assert adding
    for e in adding:
        classes = e["classes"]
        load = sum(c["load"] for c in classes.values())
        kept = sum(c["load"] * (1 - c["applied_shed_fraction"]) for c in classes.values())
        assert kept >= 0.8 / e["usage"] * load - 1e-6


def test_a_sustained_low_load_releases_executors_down_to_what_it_needs(
    tmp_path: Path,
) -> None:
    """A pool of 4 (grown for an earlier load) with a tenth of that load: after the
    15 s hold below τ0 it shrinks in one step, and then stays."""
    p = plant(tmp_path, max_executors=8, rates={n: r / 10 for n, r in RATES.items()})
    assert p.controller.elastic is not None
    p.controller.elastic.policy.target = p.executors = 4
    p.controller.pool_state(4, 4)
    p.run(150)
    actions = resizes(p)
    assert [(a.kind, a.executors_before) for a in actions] == [("scale_in", 4)], actions
    assert actions[0].held_s is not None and actions[0].held_s >= 15.0
    assert actions[0].executors_after is not None
    assert p.executors == actions[0].executors_after < 4
    verdict = actions[0].verdict
    assert verdict is not None and verdict.outcome == "unchanged", actions[0]
    assert all(shed(p, n) == 0 for n in RATES)


def test_a_live_change_of_a_class_threshold_moves_the_jobs(tmp_path: Path) -> None:
    """The job's thresholds are the lowest of its classes': a class's τ3 tuned live is
    the job's from the next period."""
    p = plant(tmp_path, max_executors=8)
    assert p.controller.elastic is not None and p.controller.elastic.params.tau3 == 0.95
    live = scenario_live_config(p.scenario)
    classes = dict(live.classes)
    classes["bronze"] = classes["bronze"].model_copy(update={"tau2": 0.6, "tau3": 0.7})
    assert p.controller.offer(live.model_copy(update={"version": 1, "classes": classes})) == 1
    assert (p.controller.elastic.params.tau2, p.controller.elastic.params.tau3) == (0.6, 0.7)
    assert p.controller.elastic.policy.params.tau3 == 0.7


def test_the_launch_configuration_sets_the_jobs_thresholds(tmp_path: Path) -> None:
    scenario = one_map_scenario(RATES, TARGETS, cost_s=0.001, elastic=ELASTIC % 8)
    live = scenario_live_config(scenario)
    classes = dict(live.classes)
    classes["gold"] = classes["gold"].model_copy(update={"tau0": 0.1})
    p = Plant(scenario, tmp_path, live=live.model_copy(update={"version": 3, "classes": classes}))
    assert p.controller.elastic is not None and p.controller.elastic.params.tau0 == 0.1
    summary = p.controller.scaling_summary()
    assert summary is not None and summary["params"]["tau0"] == 0.1


def test_hold_times_and_sizes_change_live_within_what_the_application_took(
    tmp_path: Path,
) -> None:
    """A live version's elasticity settings hold from the next period; one that asks more
    executors than the application started with (Spark's cores.max) is refused whole."""
    p = plant(tmp_path, max_executors=8)
    live = scenario_live_config(p.scenario)
    assert live.elastic is not None and live.elastic["hold_out_s"] == 5
    faster = live.model_copy(
        update={"version": 1, "elastic": {**live.elastic, "hold_out_s": 2, "max_executors": 4}}
    )
    assert p.controller.offer(faster) == 1
    assert p.controller.elastic is not None
    assert (p.controller.elastic.params.hold_out_s, p.controller.elastic.params.max_executors) == (
        2,
        4,
    )
    assert p.controller.elastic.policy.params.max_executors == 4
    more = faster.model_copy(update={"version": 2, "elastic": {**live.elastic, "max_executors": 9}})
    assert p.controller.offer(more) is None  # rejected, nothing applied
    assert p.controller.config_version == 1 and p.controller.elastic.params.max_executors == 4
    p.run(200)
    [grown] = resizes(p)
    assert grown.executors_after == 4 and grown.held_s is not None and grown.held_s < 5


def test_esj_initial_size_sets_the_pool_the_run_starts_with(tmp_path: Path) -> None:
    """1,800 tuples/s of 1 ms each on executors of 2 cores: M = ⌈1.8 / (2 × 0.4)⌉ = 3,
    the size the runner trims the pool to before the query starts, and the floor of
    every later configuration."""
    elastic = ELASTIC.replace("}", ", start: expected_load}") % 8
    p = Plant(one_map_scenario(RATES, TARGETS, cost_s=0.001, elastic=elastic), tmp_path)
    assert p.controller.expected_load >= 1.8
    assert p.controller.scaling is not None and p.controller.scaling.min_executors == 3
    assert p.controller.executors == 3
    live = scenario_live_config(p.scenario)
    assert live.elastic is not None
    slower = live.model_copy(update={"version": 1, "elastic": {**live.elastic, "hold_in_s": 40}})
    assert p.controller.offer(slower) == 1
    assert p.controller.elastic is not None and p.controller.elastic.params.min_executors == 3

"""Two elastic jobs on one simulated cluster of 4 processors: a static split against the
coordinator's priority allocation (simulated time)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_runner.control.results import build_results
from spark_runner.core.coordinator import Coordinator
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Scenario
from spark_runner.sim.cluster import simulate_cluster

BURST_S = (40.0, 160.0)
STARTUP_S = 8.0
TARGETS = {"gold": 2.0, "bronze": 3.0, "silver": 2.0, "tin": 3.0}


def rate(low: float, high: float | None = None) -> dict[str, Any]:
    """``low`` tuples/s, ``high`` during the burst."""
    start, end = BURST_S
    points = [(0.0, low), (start, high or low), (end, low)]
    return {"kind": "step", "steps": [{"at_s": t, "rate_per_s": r} for t, r in points]}


def job(name: str, max_executors: int, classes: dict[str, tuple[int, dict[str, Any]]]) -> Scenario:
    """A job whose classes each read their own stream through three 1 ms operators."""
    project = {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": 0.001}}
    aloma = {"kind": "aloma", "params": {"max_shed": 0.99}}
    elastic = {"max_executors": max_executors, "hold_out_s": 5, "hold_in_s": 20}
    return scenario_from_dict({
        "version": 1,
        "name": name,
        "seed": 3,
        "duration_s": 200,
        "control": {"period_s": 0.5, "mode": "dilos", "elastic": {"params": elastic}},
        "engine": {
            "batch_overhead_s": 0.0001,
            "source_cost_per_tuple_s": 0.0,
            "executor_startup_s": STARTUP_S,
        },
        "streams": [{"name": c, "arrival": arrival} for c, (_, arrival) in classes.items()],
        "classes": [
            {"name": c, "priority": p, "delay_target_s": TARGETS[c], "manager": aloma,
             "queries": [{"name": "q", "source": c, "operators": [project] * 3}]}
            for c, (p, _) in classes.items()
        ],
    })  # fmt: skip


def cluster(max_executors: int) -> dict[str, Scenario]:
    """fraud: gold (priority 6) 0.45 s/s, 2.4 s/s in the burst, and bronze (1) 0.45 s/s;
    ads: silver (3) and tin (2) 0.8 s/s each. 4 processors can carry the burst only
    if tin and bronze shed."""
    fraud = {"gold": (6, rate(150, 800)), "bronze": (1, rate(150))}
    ads = {"silver": (3, rate(267)), "tin": (2, rate(267))}
    return {"fraud": job("fraud", max_executors, fraud), "ads": job("ads", max_executors, ads)}


def results(scenarios: dict[str, Scenario], coordinator: Coordinator | None) -> Any:
    out = simulate_cluster(scenarios, 4, coordinator)
    return {n: build_results(r) for n, r in out.jobs.items()}, out.reallocations


def shedding(result: dict[str, Any], name: str, start_s: float, end_s: float) -> int:
    """Periods in [start_s, end_s) in which class ``name`` shed."""
    return sum(
        1
        for e in result["series"]
        if start_s <= e["t_s"] < end_s and e["classes"][name]["shed_count"] > 0
    )


def test_the_coordinator_moves_executors_to_the_job_whose_top_class_bursts() -> None:
    static, none = results(cluster(max_executors=2), None)
    jobs, changes = results(cluster(max_executors=3), Coordinator())
    assert none == ()
    # a static half each: gold, the top class, sheds through its burst
    assert static["fraud"]["classes"]["gold"]["loss_fraction"] > 0.1
    assert shedding(static["fraud"], "gold", 70.0, BURST_S[1]) > 100

    first, burst, after = changes
    # measured at the first period (0.98 s/s each, with the engine's unmeasured work):
    # each job's classes need 2 executors at 0.95
    assert (first.trigger, dict(first.after)) == (None, {"fraud": 2, "ads": 2})
    # gold short from the burst's first period, held 10 s: 3 executors for fraud
    assert (burst.trigger, burst.at_s, dict(burst.after)) == ("fraud", 50.5, {"fraud": 3, "ads": 1})
    assert (after.trigger, dict(after.after)) == ("ads", {"fraud": 2, "ads": 2})
    assert after.at_s > BURST_S[1]

    # the pool asks at the next period, its executors serve STARTUP_S later, and the
    # tuples already stale then are dropped in the period after
    serving = burst.at_s + 0.5 + STARTUP_S + 1.0
    fraud, ads = jobs["fraud"], jobs["ads"]
    for name, result in (("gold", fraud), ("silver", ads)):
        assert shedding(result, name, serving, BURST_S[1]) == 0, name
    assert shedding(ads, "tin", serving, BURST_S[1]) > 100  # the lower classes absorb it
    in_burst = [e for e in fraud["series"] if serving <= e["t_s"] < BURST_S[1]]
    assert max(e["classes"]["gold"]["max_response_time_s"] or 0.0 for e in in_burst) <= 2.0
    gold_loss = fraud["classes"]["gold"]["loss_fraction"]
    assert gold_loss < static["fraud"]["classes"]["gold"]["loss_fraction"] / 1.5
    assert ads["classes"]["silver"]["loss_fraction"] == 0.0


def test_jobs_must_be_elastic_and_share_one_clock() -> None:
    jobs = cluster(max_executors=2)
    other = jobs["ads"].model_copy(update={"duration_s": 100})
    with pytest.raises(ParameterError, match="share period_s and duration_s"):
        simulate_cluster({"fraud": jobs["fraud"], "ads": other}, 4, Coordinator())
    fixed = jobs["ads"].model_copy(
        update={"control": jobs["ads"].control.model_copy(update={"elastic": None})}
    )
    with pytest.raises(ParameterError, match="must be elastic"):
        simulate_cluster({"fraud": jobs["fraud"], "ads": fixed}, 4, Coordinator())


def moving_cluster(held: bool) -> dict[str, Scenario]:
    """fraud: gold 0.45 s/s, 1.6 s/s in the burst, and bronze 0.45 s/s, on at most 2
    processors: past them in the burst. ads: silver and tin 0.2 s/s each, and (``held``)
    bronze on the same stream, for standby."""
    fraud = {"gold": (6, rate(150, 533)), "bronze": (1, rate(150))}
    ads = {"silver": (3, rate(67)), "tin": (2, rate(67))} | (
        {"bronze": (1, rate(150))} if held else {}
    )
    return {"fraud": job("fraud", 2, fraud), "ads": job("ads", 2, ads)}


STANDBY = {"ads": frozenset({"bronze"})}


def test_the_coordinator_moves_the_lowest_class_off_a_job_it_cannot_give_more() -> None:
    alone = simulate_cluster(moving_cluster(held=False), 4, Coordinator())
    moved = simulate_cluster(moving_cluster(held=True), 4, Coordinator(), STANDBY)
    assert alone.moves == ()
    (move,) = moved.moves  # and none back: neither job is overloaded after it
    assert (move.move.class_name, move.move.origin, move.move.target) == ("bronze", "fraud", "ads")
    assert BURST_S[0] < move.at_s < move.switch_s <= move.at_s + 1.0
    before = {n: build_results(r) for n, r in alone.jobs.items()}
    after = {n: build_results(r) for n, r in moved.jobs.items()}
    # without the move bronze sheds through the burst; with it, ads computes bronze from
    # the switch on and no class sheds
    assert shedding(before["fraud"], "bronze", move.switch_s + 1.0, BURST_S[1]) > 100
    assert before["fraud"]["classes"]["bronze"]["loss_fraction"] > 0.05
    losses = {(j, n): c["loss_fraction"] for j, r in after.items() for n, c in r["classes"].items()}
    assert set(losses.values()) == {0.0}, losses
    # each side computes bronze's tuples of its own stretch: none twice, none lost
    arrived = {n: r["classes"]["bronze"]["arrived_tuples"] for n, r in after.items()}
    everything = before["fraud"]["classes"]["bronze"]["arrived_tuples"]
    assert arrived["fraud"] + arrived["ads"] == everything
    assert arrived["ads"] > 0 and arrived["fraud"] > 0


def test_a_class_held_in_standby_must_be_one_the_job_declares_and_can_move() -> None:
    scenarios = moving_cluster(held=True)
    with pytest.raises(ParameterError, match="must name a class of job 'ads'"):
        simulate_cluster(scenarios, 4, Coordinator(), {"ads": frozenset({"gold"})})
    with pytest.raises(ParameterError, match="must name jobs"):
        simulate_cluster(scenarios, 4, Coordinator(), {"recs": frozenset({"bronze"})})
    with pytest.raises(ParameterError, match="needs the coordinator"):
        simulate_cluster(scenarios, 4, None, STANDBY)

"""The simulator's elastic pool (simulated time): executors are processors the same
policy adds after a start-up delay and releases at once."""

from __future__ import annotations

from typing import Any

from spark_runner.control.results import build_results, scaling_actions
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.sim.engine import simulate


def steps(low: float, high: float) -> dict[str, Any]:
    """``low`` tuples/s, ``high`` from 40 s to 120 s."""
    points = [(0, low), (40, high), (120, low)]
    return {"kind": "step", "steps": [{"at_s": t, "rate_per_s": r} for t, r in points]}


def query(source: str) -> list[dict[str, Any]]:
    project = {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": 0.001}}
    return [{"name": "q", "source": source, "operators": [project] * 3}]


def elastic_step(sizing: str = "load_aware") -> dict[str, Any]:
    """Gold and bronze at half of one executor's capacity (3 ms a tuple), twice it from
    40 s to 120 s; at most 4 executors, each serving 8 s after it is asked for."""
    params = {"max_executors": 4, "hold_out_s": 5, "hold_in_s": 20, "sizing": sizing}
    aloma = {"kind": "aloma", "params": {"max_shed": 0.99}}
    return {
        "version": 1,
        "name": "elastic-step",
        "seed": 3,
        "duration_s": 200,
        "control": {"period_s": 0.5, "mode": "dilos", "elastic": {"params": params}},
        "engine": {
            "batch_overhead_s": 0.0001,
            "source_cost_per_tuple_s": 0.0,
            "executor_startup_s": 8,
        },
        "streams": [
            {"name": "a", "arrival": steps(55, 220)},
            {"name": "b", "arrival": steps(110, 440)},
        ],
        "classes": [
            {"name": "gold", "priority": 6, "delay_target_s": 2.0, "manager": aloma,
             "queries": query("a")},
            {"name": "bronze", "priority": 1, "delay_target_s": 3.0, "manager": aloma,
             "queries": query("b")},
        ],
    }  # fmt: skip


def run(doc: dict[str, Any]) -> dict[str, Any]:
    return build_results(simulate(scenario_from_dict(doc)))


def test_a_load_step_scales_out_in_one_step_and_back_in_after_the_longer_hold() -> None:
    results = run(elastic_step())
    actions = scaling_actions(results)
    assert [(a["kind"], a["executors_before"], a["executors_after"]) for a in actions] == [
        ("scale_out", 1, 4),  # ⌈1 × 2.0 / 0.4⌉ = 5, at most 4
        ("scale_in", 4, 2),  # ⌈4 × 0.14 / 0.4⌉ = 2: u back near τ1, not at M
    ]
    assert actions[0]["at_s"] == 45.5  # the step at 40 s, held 5 s
    assert actions[1]["held_s"] == 20.0
    # the verdicts: the scale-out ended the (stale) shedding, the scale-in cost nothing
    assert [a["verdict"]["outcome"] for a in actions] == ["improved", "unchanged"]
    assert actions[0]["verdict"]["loss_before"] > 0.3 > actions[0]["verdict"]["loss_after"]
    # from the period after the new executors serve (45.5 + 8 s; in that one, the last
    # tuples already too old for bronze's target are still shed as stale)
    served = [e for e in results["series"] if e["t_s"] > 45.5 + 8 + 0.5]
    assert all(e["executors"] == 4 for e in served if e["t_s"] < actions[1]["at_s"])
    for e in served:  # once the executors serve, nobody sheds and every target holds
        for name, target in (("gold", 2.0), ("bronze", 3.0)):
            c = e["classes"][name]
            assert c["shed_count"] == 0 and (c["max_response_time_s"] or 0.0) <= target
    assert results["classes"]["gold"]["loss_fraction"] == 0.0


def test_one_at_a_time_needs_more_actions_for_the_same_step() -> None:
    aware = scaling_actions(run(elastic_step()))
    single = scaling_actions(run(elastic_step("one_at_a_time")))
    outs = [a for a in single if a["kind"] == "scale_out"]
    assert len(outs) > 1 and len(single) > len(aware)


def test_esj_initial_size_starts_the_pool_at_m_and_keeps_it_as_the_floor() -> None:
    """At the start gold and bronze offer 165 tuples/s of 3 ms each, 0.495 s/s: ESJ's
    M = ⌈0.495 / (1 × 0.4)⌉ = 2 executors from the first period, and the scale-in after
    the step stops at 2, not 1."""
    doc = elastic_step()
    doc["control"]["elastic"]["params"]["start"] = "expected_load"
    results = run(doc)
    assert results["scaling"]["params"]["min_executors"] == 2
    assert results["series"][0]["executors"] == 2
    assert [(a["kind"], a["executors_before"], a["executors_after"]) for a in
            scaling_actions(results)] == [("scale_out", 2, 4), ("scale_in", 4, 2)]  # fmt: skip


def test_a_scenario_without_elasticity_has_no_scaling_part() -> None:
    doc = elastic_step()
    del doc["control"]["elastic"]
    results = run(doc)
    assert "scaling" not in results and "executors" not in results["series"][0]

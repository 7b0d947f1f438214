"""The random workload generator: valid, deterministic, varied, and true to its labels."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_runner.sim import simulate
from spark_runner.sim.workloads import (
    FEASIBLE_PATH_S,
    VARIANTS,
    Workload,
    random_workload,
    turbulent_workload,
)

SEEDS = range(60)


def path_cost(workload: Workload, name: str) -> float:
    cls = next(c for c in workload.doc["classes"] if c["name"] == name)
    return float(sum(op["sim"]["cost_per_tuple_s"] for op in cls["queries"][0]["operators"]))


def target(workload: Workload, name: str) -> float:
    cls = next(c for c in workload.doc["classes"] if c["name"] == name)
    return float(cls["delay_target_s"])


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(VARIANTS)))
def test_every_workload_is_a_valid_scenario_under_every_variant(seed: int, variant: str):
    workload = random_workload(seed)
    scenario = workload.scenario(variant)
    assert 2 <= len(scenario.classes) <= 6
    assert len({c.priority for c in scenario.classes}) == len(scenario.classes)
    assert scenario.control.mode == VARIANTS[variant]["mode"]
    assert all(c.manager.kind == VARIANTS[variant]["manager"] for c in scenario.classes)
    assert random_workload(seed) == workload  # the seed alone decides


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10**6))
def test_infeasible_means_one_tuple_alone_outlasts_the_target(seed: int):
    workload = random_workload(seed)
    assert "c1" not in workload.infeasible
    for name in workload.priorities:
        if name in workload.infeasible:
            assert path_cost(workload, name) >= 1.5 * target(workload, name)
        else:
            assert path_cost(workload, name) <= FEASIBLE_PATH_S[1] + 1e-12
            assert path_cost(workload, name) < target(workload, name) / 100


def test_the_workloads_cover_every_arrival_and_disturbance():
    kinds: Counter[str] = Counter()
    extras: Counter[str] = Counter()
    for seed in SEEDS:
        doc = random_workload(seed).doc
        for stream in doc["streams"]:
            arrival = stream["arrival"]
            steps = len(arrival.get("steps", ()))
            kinds["sinusoid" if steps > 2 else arrival["kind"]] += 1
        extras.update(k for k in ("background", "shared_segments") if doc.get(k))
        extras.update(["stalls"] if doc["engine"].get("stall_rate_per_s") else [])
        extras.update(["infeasible"] if random_workload(seed).infeasible else [])
    assert set(kinds) == {"constant", "step", "pareto", "sinusoid"}
    assert min(kinds.values()) >= 10
    assert set(extras) == {"background", "shared_segments", "stalls", "infeasible"}
    assert min(extras.values()) >= 5


@pytest.mark.parametrize("seed", [1, 7])
def test_an_infeasible_class_stays_late_with_nothing_else_running(seed: int):
    """The label is the simulator's truth too: alone on the processor at a trickle and
    never shed, an infeasible class's outputs are all late, a feasible one's never."""
    workload = random_workload(seed)
    assert workload.infeasible, "these seeds have an infeasible class"
    doc = workload.doc
    for name in workload.priorities:
        alone = {
            **doc,
            "background": [],
            "shared_segments": [],
            "engine": {**doc["engine"], "stall_rate_per_s": 0.0},
            "duration_s": 20.0,
            "classes": [c for c in doc["classes"] if c["name"] == name],
        }
        stream = f"s_{name}"
        alone["streams"] = [{"name": stream, "arrival": {"kind": "constant", "rate_per_s": 1.0}}]
        cls = alone["classes"][0]
        cls["queries"] = [{**cls["queries"][0], "source": stream}]
        single = Workload(seed, alone, workload.infeasible & {name}, {name: 1.0})
        out = simulate(single.scenario("none"))
        late = [
            s["classes"][name]["max_response_time_s"] > target(workload, name)
            for s in out.series
            if s["classes"][name]["max_response_time_s"] is not None
        ]
        assert late and all(late) == (name in workload.infeasible), name
        assert any(late) == (name in workload.infeasible), name


@pytest.mark.parametrize("seed", range(10))
def test_a_turbulent_workload_has_every_disturbance_at_once(seed: int):
    """Bursty arrivals whose range follows a sinusoid, a background job that comes and
    goes, and stalls, in one valid, deterministic scenario of three feasible classes."""
    workload = turbulent_workload(seed)
    scenario = workload.scenario("dilos-absolute")
    assert len(scenario.classes) == 3 and not workload.infeasible
    assert turbulent_workload(seed) == workload
    for stream in workload.doc["streams"]:
        ranges = stream["arrival"]["ranges"]
        assert stream["arrival"]["kind"] == "pareto" and len(ranges) > 10
        tops = [r["max_rate_per_s"] for r in ranges]
        assert max(tops) > 1.5 * min(tops)  # the sinusoid moves the bursts' range
    spells = workload.doc["background"]
    assert len(spells) >= 2
    assert all(a["end_s"] < b["start_s"] for a, b in itertools.pairwise(spells))
    assert workload.doc["engine"]["stall_rate_per_s"] > 0

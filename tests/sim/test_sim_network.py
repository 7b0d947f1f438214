"""Scenario → operator network; every shipped scenario runs; the generated trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_runner.control.network import build_network
from spark_runner.control.plane import merge_observations
from spark_runner.core.observation import Observation, ResponseTimeStats
from spark_runner.scenario import load_scenario
from spark_runner.scenario.arrivals import read_trace
from spark_runner.sim import run_scenario
from spark_runner.sim.tracegen import bursty_trace
from tests.sim.simkit import Build, chain, one_class, two_classes

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.yaml"))


def test_sources_per_class_and_stream(build: Build) -> None:
    doc = two_classes(100, 100)
    doc["classes"][1]["queries"][0]["source"] = "sh"  # both classes read sh: two copies
    net = build_network(build(doc))
    sources = [n.op_id for n in net.nodes if n.kind == "source"]
    assert sources == ["src:hi:sh", "src:lo:sh"]
    assert net.node("hi.q.1.project").output == ("hi", "q")
    assert net.class_order == ("hi", "lo")


def test_segment_of_segments_and_join_on_a_segment(build: Build) -> None:
    doc = two_classes(100, 100, prio_hi=6, prio_lo=1)
    doc["shared_segments"] = [
        {"name": "a", "source": "sh", "operators": chain(1, 0.0001)},
        {"name": "b", "source": "a", "operators": chain(1, 0.0001)},
    ]
    doc["classes"][1]["queries"][0] = {
        "name": "q",
        "source": "sl",
        "operators": [
            {
                "kind": "window_join",
                "right": "b",
                "window": {"size_s": 1},
                "sim": {"selectivity": 0.1},
            }
        ],
    }
    doc["classes"][0]["queries"].append(
        {"name": "q2", "source": "b", "operators": chain(1, 0.0001)}
    )
    net = build_network(build(doc))
    assert net.node("seg.a.0.project").classes == {"hi", "lo"}
    assert net.node("src:hi:sh").classes == {"hi", "lo"}
    assert sorted(net.node("seg.b.0.project").downstream) == [
        "hi.q2.0.project",
        "lo.q.0.window_join",
    ]
    assert set(net.graph.shared_operators()) == {"src:hi:sh", "seg.a.0.project", "seg.b.0.project"}


def test_derived_selectivities_and_costs(build: Build) -> None:
    doc = one_class()
    doc["engine"]["default_cost_per_tuple_s"] = 0.003
    doc["streams"][0]["keys"] = 10
    doc["classes"][0]["queries"][0]["operators"] = [
        {"kind": "filter", "predicate": "key < 3"},
        {"kind": "map", "cpu_cost_per_tuple_s": 0.002},
        {"kind": "window_aggregate", "window": {"size_s": 1}, "sim": {"selectivity": 0.1}},
    ]
    net = build_network(build(doc))
    filt, mapped, agg = (
        net.node(f"c.q.{i}.{k}") for i, k in enumerate(("filter", "map", "window_aggregate"))
    )
    assert filt.selectivity == pytest.approx(0.3) and filt.cost_s == 0.003
    assert (mapped.selectivity, mapped.cost_s) == (1.0, 0.002)
    assert agg.selectivity == 0.1


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_scenario_runs(path: Path) -> None:
    results = run_scenario(load_scenario(path, ["duration_s=2"]))
    assert results["series"] and results["classes"]


def test_merged_observation_for_the_common_manager() -> None:
    a = Observation(
        period_s=0.5,
        load=0.4,
        arrival_rate_per_s=100,
        response_time=ResponseTimeStats(0.1, 0.2, 10),
        arrived_count=50,
        shed_count=5,
    )
    b = Observation(
        period_s=0.5,
        load=0.6,
        arrival_rate_per_s=300,
        response_time=ResponseTimeStats(0.5, 0.9, 30),
        arrived_count=150,
    )
    m = merge_observations([a, b])
    assert m.load == pytest.approx(1.0) and m.arrival_rate_per_s == 400
    assert m.response_time.count == 40 and m.response_time.max_s == 0.9
    assert m.response_time.mean_s == pytest.approx((0.1 * 10 + 0.5 * 30) / 40)
    assert (m.arrived_count, m.shed_count) == (200, 5)
    assert m.cost_per_tuple_s == pytest.approx(1.0 / 400)


def test_shipped_trace_is_the_generator_output() -> None:
    shipped = read_trace(ROOT / "scenarios" / "traces" / "bursty_lbl_like.csv")
    assert shipped == [(t, float(f"{r:g}")) for t, r in bursty_trace()]


def test_longest_paths_follow_shared_segments_and_joins() -> None:
    """QN-A with sharing: class 3's q13 reads seg13 (filter 21 µs, project 14 µs) owned by
    class 1, then its own aggregate (28 µs), behind a 10 µs source: 73 µs over 4
    operators, more than any of its own queries (the join's path is 59 µs)."""
    network = build_network(load_scenario(ROOT / "scenarios/thesis/qn_a_sdc_sharing.yaml"))
    paths = network.longest_paths()
    assert set(paths) == {"class1", "class2", "class3"}
    cost, operators = paths["class3"]
    assert cost == pytest.approx(73e-6) and operators == 4

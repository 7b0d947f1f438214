"""The compiled network: the simulator's operators, plus what execution needs."""

from __future__ import annotations

import pytest

from spark_runner.control.network import build_network
from spark_runner.engine.dataflow.network import (
    LEFT,
    RIGHT,
    EngineScenarioError,
    compile_network,
)
from spark_runner.scenario import Scenario, parse_scenario

from .conftest import TWO_CLASSES


def test_same_operators_and_edges_as_the_simulator(demo: Scenario, sharing: Scenario) -> None:
    for scenario in (demo, sharing):
        plan = compile_network(scenario)
        net = build_network(scenario)
        assert [n.op_id for n in plan.nodes] == [n.op_id for n in net.nodes]
        assert plan.graph.children == net.graph.children
        assert all(n.model is not None or n.kind == "source" for n in plan.nodes)


def test_points_are_class_stream_pairs(demo: Scenario) -> None:
    plan = compile_network(demo)
    pairs = {(p.class_name, p.stream) for p in plan.points}
    # bronze's join reads trades through its own point
    assert pairs == {
        ("gold", "trades"),
        ("silver", "quotes"),
        ("bronze", "clicks"),
        ("bronze", "trades"),
    }
    for p in plan.points:
        assert plan.nodes[p.node].op_id == f"src:{p.class_name}:{p.stream}"


def test_join_routes_carry_their_side(demo: Scenario) -> None:
    plan = compile_network(demo)
    join = next(n for n in plan.nodes if n.kind == "window_join")
    assert plan.nodes[join.left or 0].kind == "filter"
    assert plan.nodes[join.right or 0].op_id == "src:bronze:trades"
    into = [(n.op_id, r) for n in plan.nodes for r in n.routes if r.child == join.index]
    assert {r.side for _, r in into} == {LEFT, RIGHT}


def test_shared_segment_owned_by_the_highest_class_lower_class_sheds_after_it(
    sharing: Scenario,
) -> None:
    plan = compile_network(sharing)
    segment = [n for n in plan.nodes if n.op_id.startswith("seg.seg13.")]
    assert {n.owner for n in segment} == {"class1"}
    last = segment[-1]
    edges = {plan.nodes[r.child].owner: r for r in last.routes}
    assert edges["class1"].shed_class == -1
    assert edges["class3"].shed_class == plan.class_names.index("class3")
    assert plan.edge_classes == (plan.class_names.index("class3"),)


def test_outputs_and_routes(two_classes: Scenario) -> None:
    plan = compile_network(two_classes)
    assert plan.class_names == ("gold", "bronze")
    project = next(n for n in plan.nodes if n.kind == "project")
    assert project.output == ("gold", "q")
    assert project.routes == ()  # a query's last operator feeds only its output
    first = next(n for n in plan.nodes if n.op_id == "gold.q.0.filter")
    assert [plan.nodes[r.child].op_id for r in first.routes] == [project.op_id]
    assert plan.edge_classes == ()


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (
            (
                "function: sum, column: v10}",
                'function: sum, column: v10}\n          - {kind: filter, predicate: "key < 5"}',
            ),
            "classes[1].queries[0].operators[1]",
            "only as a query's last operator",
        ),
    ],
)
def test_what_the_engine_cannot_run_is_named(
    change: tuple[str, str], path: str, words: str
) -> None:
    text = TWO_CLASSES.replace(*change)
    with pytest.raises(EngineScenarioError) as info:
        compile_network(parse_scenario(text))
    [issue] = info.value.issues
    assert issue.path == path
    assert words in issue.message

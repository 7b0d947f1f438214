"""Load coefficients (Eq. 3.2), class load (Eq. 3.1), queued load (Eq. 4.1), sharing, transients."""

from __future__ import annotations

import pytest

from spark_runner.core.errors import ParameterError
from spark_runner.core.load_model import LoadModel, LoadModelParams
from spark_runner.core.operator_graph import DEFAULT_CLASS, Operator, OperatorGraph
from spark_runner.core.sharing import SharingPlan


def flat_graph() -> OperatorGraph:
    # src -> a -> b -> out
    return OperatorGraph(
        [
            Operator("src", ("a",)),
            Operator("a", ("b",)),
            Operator("b", ("out",)),
            Operator("out"),
        ]
    )


def test_flat_path_coefficient_matches_eq_3_2_by_hand() -> None:
    model = LoadModel(flat_graph())
    model.update(
        costs={"src": 0.001, "a": 0.002, "b": 0.004, "out": 0.0005},
        selectivities={"src": 1.0, "a": 0.5, "b": 0.25, "out": 1.0},
    )
    # Σ_j c_j Π_{m<j} sel_m = 0.001 + 1×0.002 + (1×0.5)×0.004 + (1×0.5×0.25)×0.0005
    expected = 0.001 + 0.002 + 0.5 * 0.004 + 0.125 * 0.0005
    assert model.coefficient("src") == pytest.approx(expected)
    # Eq. 3.1 with one stream at 100 tuples/s
    model.update(source_rates={"src": 100.0})
    loads = model.snapshot()
    assert set(loads) == {DEFAULT_CLASS}
    assert loads[DEFAULT_CLASS].load == pytest.approx(100.0 * expected)
    assert model.total_load() == pytest.approx(100.0 * expected)
    assert loads[DEFAULT_CLASS].cost_per_tuple_s == pytest.approx(expected)


def test_fan_out_sums_every_downstream_path() -> None:
    # src -> shared -> {q1, q2}; q1 -> o1, q2 -> o2 (a shared operator feeding two queries)
    g = OperatorGraph(
        [
            Operator("src", ("shared",)),
            Operator("shared", ("q1", "q2")),
            Operator("q1", ("o1",)),
            Operator("q2", ("o2",)),
            Operator("o1"),
            Operator("o2"),
        ]
    )
    model = LoadModel(g)
    model.update(
        costs={"src": 1.0, "shared": 2.0, "q1": 3.0, "q2": 5.0, "o1": 0.0, "o2": 0.0},
        selectivities={"src": 1.0, "shared": 0.5, "q1": 1.0, "q2": 1.0},
    )
    # coef(shared) = 2 + 0.5 × (3 + 5); coef(src) = 1 + 1 × coef(shared)
    assert model.coefficient("shared") == pytest.approx(6.0)
    assert model.coefficient("src") == pytest.approx(7.0)


def test_join_merges_two_streams_and_class_load_sums_streams() -> None:
    # s1 -> j, s2 -> j -> out ; Eq. 3.1: L = r1 coef1 + r2 coef2
    g = OperatorGraph(
        [Operator("s1", ("j",)), Operator("s2", ("j",)), Operator("j", ("out",)), Operator("out")]
    )
    model = LoadModel(g)
    model.update(
        costs={"s1": 0.001, "s2": 0.002, "j": 0.01, "out": 0.0},
        selectivities={"s1": 1.0, "s2": 0.5, "j": 2.0},
        source_rates={"s1": 10.0, "s2": 20.0},
    )
    coef1 = 0.001 + 0.01
    coef2 = 0.002 + 0.5 * 0.01
    assert model.coefficient("s1") == pytest.approx(coef1)
    assert model.coefficient("s2") == pytest.approx(coef2)
    load = model.snapshot()[DEFAULT_CLASS]
    assert load.load == pytest.approx(10 * coef1 + 20 * coef2)
    assert load.arrival_rate_per_s == pytest.approx(30.0)


def test_queued_load_eq_4_1() -> None:
    model = LoadModel(flat_graph())
    model.update(
        costs={"src": 0.001, "a": 0.002, "b": 0.004, "out": 0.0},
        selectivities={"a": 0.5},
        queue_lengths={"a": 10, "b": 4},
    )
    # qL = q_a × coef(a) + q_b × coef(b) = 10 × (0.002 + 0.5×0.004) + 4 × 0.004
    load = model.snapshot()[DEFAULT_CLASS]
    assert load.queued_load_s == pytest.approx(10 * 0.004 + 4 * 0.004)
    assert load.queue_length == pytest.approx(14)


def test_recompute_follows_changed_statistics() -> None:
    model = LoadModel(flat_graph())
    model.update(
        costs={"src": 0.001, "a": 0.001, "b": 0.001, "out": 0.0}, source_rates={"src": 100}
    )
    first = model.snapshot()[DEFAULT_CLASS].load
    model.update(selectivities={"src": 0.5})
    second = model.snapshot()[DEFAULT_CLASS].load
    model.update(source_rates={"src": 200})
    third = model.snapshot()[DEFAULT_CLASS].load
    assert first == pytest.approx(100 * 0.003)
    assert second == pytest.approx(100 * (0.001 + 0.5 * 0.002))
    assert third == pytest.approx(2 * second)


def test_transient_cost_is_flagged_and_not_trusted() -> None:
    model = LoadModel(
        flat_graph(), params=LoadModelParams(transient_factor=1.5, cost_smoothing=0.2)
    )
    base = {"src": 0.001, "a": 0.001, "b": 0.001, "out": 0.0}
    model.update(costs=base, source_rates={"src": 100})
    model.update(costs={**base, "a": 0.004})  # 4× its average: a transient
    assert model.transient_operators() == ("a",)
    assert model.effective_cost("a") == pytest.approx(0.001)  # the average, not the spike
    load = model.snapshot()[DEFAULT_CLASS]
    assert load.transient and load.transient_operators == ("a",)
    assert load.load == pytest.approx(100 * 0.003)
    model.update(costs={**base, "a": 0.0012})  # back within 1.5× the average
    assert model.transient_operators() == ()
    trusting = LoadModel(flat_graph(), params=LoadModelParams(trust_transients=True))
    trusting.update(costs=base)
    trusting.update(costs={**base, "a": 0.004})
    assert trusting.effective_cost("a") == pytest.approx(0.004)


def shared_graph() -> OperatorGraph:
    # Class "hi" and class "lo" share src -> sel; then each has its own query.
    return OperatorGraph(
        [
            Operator("src", ("sel",), frozenset({"hi", "lo"})),
            Operator("sel", ("hi_q", "lo_q"), frozenset({"hi", "lo"})),
            Operator("hi_q", ("hi_out",), frozenset({"hi"})),
            Operator("hi_out", (), frozenset({"hi"})),
            Operator("lo_q", ("lo_out",), frozenset({"lo"})),
            Operator("lo_out", (), frozenset({"lo"})),
            Operator("lo_src", ("lo_q2",), frozenset({"lo"})),
            Operator("lo_q2", (), frozenset({"lo"})),
        ]
    )


def test_shared_segment_belongs_to_highest_priority_class() -> None:
    plan = SharingPlan.build(shared_graph(), {"hi": 6, "lo": 1})
    assert plan.owner_of("src") == "hi" and plan.owner_of("sel") == "hi"
    assert plan.owner_of("lo_q") == "lo"
    assert plan.shedding_point_ids("hi") == ("src",)
    # lo sheds at the first operator after the shared segment, and at its own source
    assert set(plan.shedding_point_ids("lo")) == {"lo_q", "lo_src"}
    assert plan.shared_segments() == {
        "src": ("hi", frozenset({"lo"})),
        "sel": ("hi", frozenset({"lo"})),
    }
    flipped = SharingPlan.build(shared_graph(), {"hi": 1, "lo": 6})
    assert flipped.owner_of("sel") == "lo"


def test_class_loads_with_sharing_count_the_segment_once_in_its_owner() -> None:
    model = LoadModel(shared_graph(), priorities={"hi": 6, "lo": 1})
    model.update(
        costs={
            "src": 0.001,
            "sel": 0.002,
            "hi_q": 0.003,
            "hi_out": 0.0,
            "lo_q": 0.005,
            "lo_out": 0.0,
            "lo_src": 0.001,
            "lo_q2": 0.002,
        },
        selectivities={"sel": 0.5},
        source_rates={"src": 100, "lo_src": 10},
    )
    loads = model.snapshot()
    # hi owns src, sel, hi_q: 100 × (0.001 + 0.002 + 0.5 × 0.003)
    assert loads["hi"].load == pytest.approx(100 * (0.001 + 0.002 + 0.5 * 0.003))
    # lo's streams: 50 tuples/s into lo_q (after the shared select), 10 into lo_src
    assert loads["lo"].arrival_rate_per_s == pytest.approx(60)
    assert loads["lo"].load == pytest.approx(50 * 0.005 + 10 * (0.001 + 0.002))
    # Without ownership the whole network is one class: the sum is unchanged.
    assert loads["hi"].load + loads["lo"].load == pytest.approx(model.total_load())
    # hi shedding at its source thins lo's input too (001 §6.1.4); lo's own shed does not.
    model.update(shed_fractions={"hi": 0.5, "lo": 0.2})
    loads = model.snapshot()
    assert loads["lo"].arrival_rate_per_s == pytest.approx(25 + 10)
    assert loads["lo"].admitted_load == pytest.approx(0.8 * loads["lo"].load)


def test_graph_validation_errors_name_the_field() -> None:
    with pytest.raises(ParameterError, match="acyclic"):
        OperatorGraph([Operator("a", ("b",)), Operator("b", ("a",))])
    with pytest.raises(ParameterError, match="existing operator"):
        OperatorGraph([Operator("a", ("missing",))])
    with pytest.raises(ParameterError, match="unique"):
        OperatorGraph([Operator("a"), Operator("a")])
    with pytest.raises(ParameterError, match="include the classes"):
        OperatorGraph(
            [Operator("a", ("b",), frozenset({"x"})), Operator("b", (), frozenset({"y"}))]
        )
    model = LoadModel(flat_graph())
    with pytest.raises(ParameterError, match=r"costs\.a"):
        model.update(costs={"a": -1.0})
    with pytest.raises(ParameterError, match="only sources"):
        model.update(source_rates={"a": 1.0})
    with pytest.raises(ParameterError, match="transient_factor"):
        model.reconfigure({"transient_factor": 1.0})

"""The class scheduler's budget split and the shedder's arithmetic, without Spark."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_runner.engine.control.admission import (
    EdgeDemand,
    PointDemand,
    admit,
    kept_positions,
    shed_split,
    water_fill,
)

QUOTAS = {"gold": 0.6, "silver": 0.3, "bronze": 0.1}


def test_everyone_busy_gets_their_quota() -> None:
    alloc = water_fill(1.0, QUOTAS, {"gold": 5.0, "silver": 5.0, "bronze": 5.0})
    assert alloc == pytest.approx(QUOTAS)


def test_unused_quota_goes_to_the_others_highest_priority_first() -> None:
    # gold needs 0.1 of its 0.6: silver, first in line, takes what it needs of the other
    # 0.5, bronze the rest; the order is the decision's, not the quotas'
    order = ["gold", "silver", "bronze"]
    alloc = water_fill(1.0, QUOTAS, {"gold": 0.1, "silver": 0.5, "bronze": 5.0}, order)
    assert alloc == pytest.approx({"gold": 0.1, "silver": 0.5, "bronze": 0.1 + 0.3})
    alloc = water_fill(1.0, QUOTAS, {"gold": 0.1, "silver": 5.0, "bronze": 5.0}, order)
    assert alloc == pytest.approx({"gold": 0.1, "silver": 0.8, "bronze": 0.1})
    reordered = water_fill(1.0, QUOTAS, {"gold": 0.1, "silver": 5.0, "bronze": 5.0}, order[::-1])
    assert reordered == pytest.approx({"gold": 0.1, "silver": 0.3, "bronze": 0.6})


def test_a_class_with_no_quota_gets_only_what_is_left() -> None:
    alloc = water_fill(1.0, {"a": 1.0, "b": 0.0}, {"a": 0.7, "b": 5.0})
    assert alloc == pytest.approx({"a": 0.7, "b": 0.3})
    assert water_fill(1.0, {"a": 1.0, "b": 0.0}, {"a": 5.0, "b": 5.0})["b"] == 0.0


@given(
    budget=st.floats(0, 10),
    demands=st.lists(st.floats(0, 5), min_size=3, max_size=3),
    quotas=st.lists(st.floats(0, 1), min_size=3, max_size=3),
)
def test_water_fill_invariants(budget: float, demands: list[float], quotas: list[float]) -> None:
    names = ["a", "b", "c"]
    alloc = water_fill(
        budget, dict(zip(names, quotas, strict=True)), dict(zip(names, demands, strict=True))
    )
    assert sum(alloc.values()) <= budget + 1e-9
    for n, d in zip(names, demands, strict=True):
        assert -1e-12 <= alloc[n] <= d + 1e-9
    if sum(demands) >= budget:
        assert sum(alloc.values()) == pytest.approx(budget, abs=1e-6)
    else:
        assert alloc == pytest.approx(dict(zip(names, demands, strict=True)), abs=1e-6)


def test_shed_counts_are_exact_over_time() -> None:
    carry, shed_total, taken_total = 0.0, 0, 0
    for taken in [7, 13, 1, 0, 29, 3, 101, 2] * 20:
        shed, carry = shed_split(taken, 0.37, carry)
        assert 0 <= shed <= taken
        shed_total += shed
        taken_total += taken
    assert shed_total == math.floor(taken_total * 0.37 + 1e-9)


def test_a_batch_takes_what_the_quota_pays_for_and_sheds_before_processing() -> None:
    points = [
        PointDemand("gold", waiting=100, shed_fraction=0.0, cost_s=0.001),
        PointDemand("bronze", waiting=10_000, shed_fraction=0.5, cost_s=0.001),
    ]
    got = admit(points, {"gold": 0.6, "bronze": 0.4}, budget_s=1.0)
    gold, bronze = got.points
    assert (gold.taken, gold.kept, gold.shed) == (100, 100, 0)  # needs 0.1 s of its 0.6
    # bronze may process 0.9 s = 900 kept tuples; shedding half, it takes 1800
    assert bronze.taken == 1800
    assert bronze.kept == 900 and bronze.shed == 900
    assert bronze.kept * 0.001 <= 0.9 + 1e-9


def test_a_class_splits_its_share_over_its_streams_by_waiting_work() -> None:
    points = [
        PointDemand("c", waiting=1000, shed_fraction=0.0, cost_s=0.001),
        PointDemand("c", waiting=3000, shed_fraction=0.0, cost_s=0.001),
    ]
    a, b = admit(points, {"c": 1.0}, budget_s=2.0).points
    assert (a.taken, b.taken) == (500, 1500)


def test_admit_all_and_unknown_costs_take_everything() -> None:
    points = [PointDemand("c", waiting=50, shed_fraction=0.0, cost_s=0.5)]
    assert admit(points, {"c": 1.0}, budget_s=0.0, admit_all=True).points[0].taken == 50
    unknown = [PointDemand("c", waiting=50, shed_fraction=0.0, cost_s=0.0)]
    assert admit(unknown, {"c": 1.0}, budget_s=0.0).points[0].taken == 50


def test_a_lower_class_pays_for_its_work_after_a_shared_segment_not_the_owner() -> None:
    """Gold's point feeds a shared segment (1 ms per tuple, gold's) and bronze's
    expensive branch after it (10 ms per tuple gold keeps). Gold pays only for its own
    operators and takes all it has waiting; bronze's allocation pays for its edge work,
    so it keeps only what that allocation covers on the edge."""
    points = [PointDemand("gold", waiting=300, shed_fraction=0.0, cost_s=0.001)]
    edges = [EdgeDemand("bronze", shed_fraction=0.0, cost_by_point={0: 0.01})]
    got = admit(points, {"gold": 0.7, "bronze": 0.3}, budget_s=1.0, edges=edges)
    assert got.points[0].taken == 300  # 0.3 s of gold's 0.7 s
    # bronze's edge work would be 3 s; it gets the 0.7 s gold leaves: 7/30 of it is kept
    assert got.edge_keep["bronze"] == pytest.approx(0.7 / 3.0)
    # charged for bronze's branch (before this rule) gold took 90: 1 s at 11 ms a tuple
    inverted = admit([PointDemand("gold", 300, 0.0, 0.011)], {"gold": 0.7, "bronze": 0.3}, 1.0)
    assert inverted.points[0].taken == 90


def test_an_edge_keeps_everything_when_its_class_can_pay_and_its_own_fraction_counts() -> None:
    points = [
        PointDemand("gold", waiting=100, shed_fraction=0.0, cost_s=0.001),
        PointDemand("bronze", waiting=100, shed_fraction=0.5, cost_s=0.001),
    ]
    edges = [EdgeDemand("bronze", shed_fraction=0.5, cost_by_point={0: 0.004})]
    got = admit(points, {"gold": 0.7, "bronze": 0.3}, budget_s=1.0, edges=edges)
    # bronze: 100 × 0.5 × 1 ms at its point + 100 × 0.5 × 4 ms on its edge = 0.25 s
    assert got.edge_keep["bronze"] == 1.0
    assert [p.taken for p in got.points] == [100, 100]
    assert admit(points, {}, 0.0, admit_all=True, edges=edges).edge_keep == {"bronze": 1.0}


@given(taken=st.integers(0, 500), data=st.data())
def test_kept_positions_are_distinct_spread_and_sliceable(taken: int, data: st.DataObject) -> None:
    kept = data.draw(st.integers(0, taken))
    whole = kept_positions(taken, kept)
    assert len(whole) == kept
    assert len(set(whole.tolist())) == kept
    assert (whole >= 0).all() and (whole < max(taken, 1)).all()
    cut = data.draw(st.integers(0, kept))
    parts = np.concatenate([kept_positions(taken, kept, 0, cut), kept_positions(taken, kept, cut)])
    assert np.array_equal(parts, whole)
    if kept:
        gaps = np.diff(np.append(whole, taken))
        assert gaps.max() - gaps.min() <= 1  # uniform: never a burst dropped

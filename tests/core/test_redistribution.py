"""Capacity redistribution (spec §4): thesis rules by hand, policies, and property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_runner.core.class_scheduler import original_shares, priority_order, quota_seconds
from spark_runner.core.errors import ParameterError
from spark_runner.core.redistribution import ClassShare, expected_loss, redistribute


def shares(**spec: tuple[float, float, float]) -> list[ClassShare]:
    """name=(priority, quota, need); originals from the priorities."""
    q0 = original_shares(
        {n: p for n, (p, _, _) in spec.items()}, sum(q for _, q, _ in spec.values())
    )
    return [ClassShare(n, p, q, q0[n], need) for n, (p, q, need) in spec.items()]


def test_wrr_quotas() -> None:
    q0 = original_shares({"c1": 6, "c2": 3, "c3": 1})
    assert q0 == pytest.approx({"c1": 0.6, "c2": 0.3, "c3": 0.1})
    assert quota_seconds(q0, 0.15) == pytest.approx({"c1": 0.09, "c2": 0.045, "c3": 0.015})
    with pytest.raises(ParameterError, match="priority"):
        original_shares({"c1": 0})


def test_classes_are_served_highest_priority_first_ties_by_name() -> None:
    assert priority_order({"b": 3.0, "a": 3.0, "c": 6.0, "d": 1.0}) == ("c", "a", "b", "d")


def test_thesis_example_spare_capacity_moves_to_the_overloaded_low_class() -> None:
    r = redistribute(
        shares(c1=(6, 0.6, 0.3), c2=(3, 0.3, 0.2), c3=(1, 0.1, 0.55)), policy="relative"
    )
    # supply = (1 − u) q − 5 % q0; demand = (u − 1) q
    assert r.supply == pytest.approx({"c1": 0.27, "c2": 0.085, "c3": 0.0})
    assert r.demand == pytest.approx({"c1": 0.0, "c2": 0.0, "c3": 0.45})
    assert r.budget == pytest.approx(0.355)
    assert r.quotas == pytest.approx({"c1": 0.33, "c2": 0.215, "c3": 0.455})


def test_rule_1_a_lender_takes_its_original_share_back() -> None:
    # c1 lent to c3 earlier; now c1 is overloaded and nobody has spare capacity.
    s = [
        ClassShare("c1", 6, 0.33, 0.6, 0.5),
        ClassShare("c2", 3, 0.215, 0.3, 0.2),
        ClassShare("c3", 1, 0.455, 0.1, 0.55),
    ]
    r = redistribute(s, policy="relative")
    assert r.budget == 0.0
    assert r.quotas == pytest.approx({"c1": 0.5, "c2": 0.215, "c3": 0.285})


def test_rule_3_leftover_budget_returns_to_classes_below_their_original_share() -> None:
    s = [
        ClassShare("c1", 6, 0.33, 0.6, 0.2),
        ClassShare("c2", 3, 0.215, 0.3, 0.2),
        ClassShare("c3", 1, 0.455, 0.1, 0.05),
    ]
    r = redistribute(s, policy="relative")
    assert r.quotas == pytest.approx({"c1": 0.6, "c2": 0.3, "c3": 0.1})


def test_reserve_and_lending_cap() -> None:
    s = [ClassShare("c1", 6, 0.6, 0.6, 0.0, reserve=0.2), ClassShare("c3", 1, 0.4, 0.4, 1.0)]
    assert redistribute(s).quotas["c1"] == pytest.approx(0.6 * 0.2)  # keeps 20 % of original
    s = [ClassShare("c1", 6, 0.6, 0.6, 0.0, max_lend=0.5), ClassShare("c3", 1, 0.4, 0.4, 1.0)]
    assert redistribute(s).quotas["c1"] == pytest.approx(0.3)  # lends at most half


def test_absolute_policy_serves_the_highest_class_fully_first() -> None:
    r = redistribute(
        shares(c1=(6, 0.6, 0.8), c2=(3, 0.3, 0.2), c3=(1, 0.1, 0.3)), policy="absolute"
    )
    assert r.quotas == pytest.approx({"c1": 0.83, "c2": 0.17, "c3": 0.0})


def test_strict_policy_moves_quota_up_until_losses_are_ordered() -> None:
    s = shares(c1=(6, 6 / 7, 2.0), c3=(1, 1 / 7, 0.2))
    relative = redistribute(s, policy="relative")
    assert expected_loss(relative.quotas["c1"], 2.0) > expected_loss(relative.quotas["c3"], 0.2)
    strict = redistribute(s, policy="strict")
    loss = 1 - 1.0 / 2.2
    assert strict.quotas == pytest.approx({"c1": (1 - loss) * 2.0, "c3": (1 - loss) * 0.2})


def test_bad_policy_and_duplicate_names() -> None:
    with pytest.raises(ParameterError, match="policy"):
        redistribute(shares(c1=(1, 1, 1)), policy="fair")
    with pytest.raises(ParameterError, match="unique"):
        redistribute([ClassShare("a", 1, 0.5, 0.5, 0), ClassShare("a", 1, 0.5, 0.5, 0)])


# --- properties ----------------------------------------------------------------------------

share_lists = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=10),  # priority
        st.floats(min_value=0.0, max_value=1.0),  # quota weight
        st.floats(min_value=0.0, max_value=3.0),  # usage u_k
        st.floats(min_value=0.0, max_value=0.3),  # reserve
    ),
    min_size=1,
    max_size=8,
)


def build(raw: list[tuple[int, float, float, float]]) -> list[ClassShare]:
    weights = [w for _, w, _, _ in raw]
    total = sum(weights)
    quotas = [w / total for w in weights] if total > 0 else [1 / len(raw)] * len(raw)
    q0 = original_shares({f"c{i}": p for i, (p, _, _, _) in enumerate(raw)})
    return [
        ClassShare(f"c{i}", p, quotas[i], q0[f"c{i}"], u * quotas[i] if quotas[i] > 0 else u, r)
        for i, (p, _, u, r) in enumerate(raw)
    ]


@settings(max_examples=300, deadline=None)
@given(share_lists, st.sampled_from(["relative", "absolute", "strict"]))
def test_sum_of_quotas_is_preserved_and_no_quota_is_negative(raw, policy) -> None:
    s = build(raw)
    r = redistribute(s, policy=policy)
    assert sum(r.quotas.values()) == pytest.approx(sum(x.quota for x in s), abs=1e-9)
    assert all(q >= -1e-12 for q in r.quotas.values())


@settings(max_examples=300, deadline=None)
@given(share_lists)
def test_relative_policy_rule_1(raw) -> None:
    s = build(raw)
    r = redistribute(s, policy="relative")
    for x in s:  # demand met, or at least the original share
        new = r.quotas[x.name]
        assert new >= x.need - 1e-9 or new >= x.original - 1e-9


@settings(max_examples=300, deadline=None)
@given(share_lists)
def test_strict_policy_higher_class_never_loses_a_larger_fraction(raw) -> None:
    s = build(raw)
    r = redistribute(s, policy="strict")
    for hi in s:
        for lo in s:
            if hi.priority > lo.priority:
                lost_hi = expected_loss(r.quotas[hi.name], hi.need)
                lost_lo = expected_loss(r.quotas[lo.name], lo.need)
                # ... unless the lower class has no quota left to give (min_share = 0)
                assert lost_hi <= lost_lo + 1e-9 or r.quotas[lo.name] <= 1e-9

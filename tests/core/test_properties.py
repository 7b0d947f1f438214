"""Property tests: shed fraction bounds for every manager, thresholds ordering, compositions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers import MANAGER_KINDS, make_manager
from spark_runner.core.managers.base import add_shed, remove_shed, shed_load_less, shed_load_more
from spark_runner.core.observation import Observation, ResponseTimeStats
from spark_runner.core.thresholds import Thresholds

finite = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)


@st.composite
def observations(draw: st.DrawFn) -> Observation:
    count = draw(st.integers(min_value=0, max_value=10_000))
    mean = draw(st.floats(min_value=0.0, max_value=100.0))
    worst = mean + draw(st.floats(min_value=0.0, max_value=100.0))
    arrived = draw(st.integers(min_value=0, max_value=10_000))
    return Observation(
        period_s=draw(st.floats(min_value=0.01, max_value=10.0)),
        load=draw(finite),
        arrival_rate_per_s=draw(finite),
        response_time=ResponseTimeStats(mean, worst, count) if count else ResponseTimeStats(),
        queue_length=draw(finite),
        queued_load_s=draw(finite),
        arrived_count=arrived,
        processed_count=draw(st.integers(min_value=0, max_value=10_000)),
        shed_count=draw(st.integers(min_value=0, max_value=arrived)),
        cost_per_tuple_s=draw(st.floats(min_value=0.0, max_value=1.0)),
    )


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(MANAGER_KINDS),
    st.floats(min_value=0.0, max_value=0.99),
    st.lists(observations(), min_size=1, max_size=40),
)
def test_shed_fraction_always_within_zero_and_max_shed(kind: str, max_shed: float, seq) -> None:
    manager = make_manager(kind, {"max_shed": max_shed})
    for i, o in enumerate(seq):
        if i == len(seq) // 2:
            manager.update(max_shed=max_shed / 2, delay_target_s=0.5)  # live change midway
        d = manager.step(o)
        assert 0.0 <= d.shed_fraction <= manager.params.max_shed
        assert d.shed_fraction == manager.shed_fraction
        if d.headroom is not None:
            assert d.headroom > 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=-0.5, max_value=1.5, allow_nan=False), min_size=4, max_size=4))
def test_thresholds_are_accepted_only_when_ordered(taus: list[float]) -> None:
    ordered = 0 < taus[0] < taus[1] < taus[2] < taus[3] <= 1
    if ordered:
        t = Thresholds(*taus)
        assert t.tau0 < t.tau1 < t.tau2 < t.tau3
    else:
        with pytest.raises(ParameterError) as excinfo:
            Thresholds(*taus)
        assert excinfo.value.field in {"tau0", "tau1", "tau2", "tau3"}
        assert "tau0 < tau1 < tau2 < tau3" in str(excinfo.value)


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=0.0, max_value=0.99), st.floats(min_value=0.0, max_value=0.99))
def test_shed_amounts_compose_on_the_kept_fraction(s: float, d: float) -> None:
    assert add_shed(s, d) == pytest.approx(1 - (1 - s) * (1 - d))
    assert remove_shed(add_shed(s, d), d) == pytest.approx(s, abs=1e-9)
    assert 0.0 <= remove_shed(s, d) <= s


@settings(max_examples=300, deadline=None)
@given(
    st.floats(min_value=0.0, max_value=0.9),
    st.floats(min_value=0.01, max_value=10.0),
    st.floats(min_value=0.0, max_value=5.0),
)
def test_load_amounts_change_the_admitted_load_exactly(
    s: float, admitted: float, amount: float
) -> None:
    incoming = admitted / (1 - s)
    more = shed_load_more(s, admitted, min(amount, admitted))
    assert incoming * (1 - more) == pytest.approx(admitted - min(amount, admitted), abs=1e-9)
    less = shed_load_less(s, admitted, amount)
    assert incoming * (1 - less) == pytest.approx(min(admitted + amount, incoming), abs=1e-9)

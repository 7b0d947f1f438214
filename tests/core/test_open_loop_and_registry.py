"""Aurora, None and Linear; the registry; parameter validation and live updates for every kind."""

from __future__ import annotations

import pytest

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers import (
    MANAGER_KINDS,
    MANAGER_TYPES,
    aurora_shed_fraction,
    linear_shed_factor,
    make_manager,
    parameter_names,
)
from spark_runner.core.managers.base import FixedHeadroomManager, FixedHeadroomParams
from spark_runner.core.observation import Decision, LoadState, Observation, ResponseTimeStats
from tests.core.qos_plant import FluidPlant

D = 2.0
T = 0.5


def test_aurora_sheds_the_excess_over_its_headroom() -> None:
    assert aurora_shed_fraction(1.2, 0.9) == pytest.approx(0.25)
    assert aurora_shed_fraction(0.5, 0.9) == 0.0
    assert aurora_shed_fraction(0.0, 0.9) == 0.0
    m = make_manager("aurora", {"headroom": 0.9})
    d = m.step(Observation(period_s=T, load=1.2))
    assert d.shed_fraction == pytest.approx(0.25)
    assert d.state is LoadState.OVERLOADED
    assert (
        make_manager("aurora", {"headroom": 0.1}).step(Observation(T, 10.0)).shed_fraction == 0.95
    )


def aurora_run(headroom: float) -> FluidPlant:
    plant = FluidPlant(capacity=0.9, cost_s=0.001)
    m = make_manager("aurora", {"headroom": headroom, "delay_target_s": D})
    shed = 0.0
    for _ in range(300):
        shed = m.step(plant.run_period(1200, shed, T, D)).shed_fraction
    return plant


def test_aurora_trades_loss_against_violation_through_its_headroom() -> None:
    runs = {h: aurora_run(h) for h in (0.85, 0.9, 0.95)}
    losses = [runs[h].loss_fraction for h in (0.85, 0.9, 0.95)]
    violations = [runs[h].mean_violation_s for h in (0.85, 0.9, 0.95)]
    assert losses[0] > losses[1] > losses[2]  # a lower H drops more
    assert violations[0] == violations[1] == 0.0
    assert violations[2] > D  # 5 % too high and the queue grows without bound (001 Table 1)


def test_linear_shed_factor_formula() -> None:
    assert linear_shed_factor(0.5, tau2=0.8, base=0.2) == 0.0
    assert linear_shed_factor(0.8, tau2=0.8, base=0.2) == pytest.approx(0.2)
    # B + (1 − B)/(1 − τ2) × (τ − τ2) = 0.2 + 0.8/0.2 × 0.1
    assert linear_shed_factor(0.9, tau2=0.8, base=0.2) == pytest.approx(0.6)
    assert linear_shed_factor(1.0, tau2=0.8, base=0.2) == pytest.approx(1.0)
    m = make_manager("linear", {"headroom": 1.0, "tau2": 0.8, "base": 0.2})
    assert m.step(Observation(period_s=T, load=0.9)).shed_fraction == pytest.approx(0.6)
    assert m.step(Observation(period_s=T, load=1.5)).shed_fraction == 0.95  # max_shed


def test_none_never_sheds_but_reports_violations() -> None:
    m = make_manager("none", {"delay_target_s": 1.0})
    d = m.step(Observation(period_s=T, load=5.0, response_time=ResponseTimeStats(3.0, 4.0, 5)))
    assert d.shed_fraction == 0.0
    assert d.state is LoadState.OT
    assert d.headroom is None


@pytest.mark.parametrize("kind", MANAGER_KINDS)
def test_every_kind_builds_with_defaults_and_takes_live_updates(kind: str) -> None:
    m = make_manager(kind, {})
    assert m.kind == kind
    assert m.params.max_shed == 0.95 and m.params.delay_target_s == 2.0
    m.update(delay_target_s=0.5, max_shed=0.5)
    assert m.params.delay_target_s == 0.5 and m.params.max_shed == 0.5
    m.reconfigure({"delay_target_s": 0.25})
    assert m.params.delay_target_s == 0.25
    d = m.step(
        Observation(
            period_s=T,
            load=100.0,
            queued_load_s=100.0,
            arrived_count=1000,
            response_time=ResponseTimeStats(5.0, 5.0, 10),
            cost_per_tuple_s=0.1,
        )
    )
    assert 0.0 <= d.shed_fraction <= 0.5
    assert "delay_target_s" in parameter_names(kind)


@pytest.mark.parametrize(
    ("kind", "params", "field", "rule"),
    [
        ("aloma", {"delay_target_s": 0}, "delay_target_s", "> 0"),
        ("aloma", {"max_shed": 1.0}, "max_shed", "[0.0, 1.0)"),
        ("aloma", {"initial_headroom": -1}, "initial_headroom", "> 0"),
        ("aloma", {"o_point_refresh_periods": 0}, "o_point_refresh_periods", ">= 1"),
        ("aloma", {"o_point_refresh_periods": 2.5}, "o_point_refresh_periods", "whole number"),
        ("seamless", {"adjust_periods": 0}, "adjust_periods", ">= 1"),
        ("seamless", {"pole1": 1.0}, "pole1", "[0.0, 1.0)"),
        ("ctrl", {"headroom": 0}, "headroom", "> 0"),
        ("aurora", {"headroom": "high"}, "headroom", "number"),
        ("linear", {"tau2": 0.3}, "tau2", "tau0 < tau1 < tau2 < tau3"),
        ("linear", {"base": 1.5}, "base", "[0.0, 1.0]"),
        ("none", {"speed": 1}, "speed", "unknown parameter"),
    ],
)
def test_bad_parameters_name_the_field_and_the_rule(
    kind: str, params: dict[str, float | int | str | bool], field: str, rule: str
) -> None:
    with pytest.raises(ParameterError) as excinfo:
        make_manager(kind, params)
    assert excinfo.value.field == field
    assert rule in str(excinfo.value) and field in str(excinfo.value)
    m = make_manager(kind, {})
    before = m.params
    with pytest.raises(ParameterError):
        m.reconfigure(params)  # the same rule on live update
    assert m.params == before


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ParameterError, match="kind"):
        make_manager("pid", {})


def test_a_manager_class_names_its_kind_and_its_parameters_are_its_type_argument() -> None:
    for kind, cls in MANAGER_TYPES.items():
        assert cls.kind == kind
        assert cls().params == cls.params_type()

    class Probe(FixedHeadroomManager[FixedHeadroomParams], kind="probe", label="a probe"):
        def step(self, obs: Observation) -> Decision:
            return self.impose(obs, 0.0, LoadState.NORMAL, action="probe")

    assert (Probe.kind, Probe.label, Probe.params_type) == ("probe", "a probe", FixedHeadroomParams)
    with pytest.raises(TypeError, match="names no ManagerParams"):

        class _Untyped(FixedHeadroomManager, kind="untyped"):  # type: ignore[type-arg]
            pass


def test_fixed_headroom_managers_take_a_pushed_headroom() -> None:
    for kind in ("aurora", "ctrl", "linear", "aloma", "seamless"):
        m = make_manager(kind, {})
        m.set_headroom(0.3)
        assert m.headroom == pytest.approx(0.3)
    with pytest.raises(ParameterError, match="headroom"):
        make_manager("aloma", {}).set_headroom(0.0)

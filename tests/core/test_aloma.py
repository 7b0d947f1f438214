"""ALoMa: Eq. 5.1, Eq. 5.2, the response-time monitor, every branch of Algorithm 1, closed loops."""

from __future__ import annotations

import math

import pytest
from qos_plant import FluidPlant

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers import AlomaManager, AlomaParams, capacity_step, probe_percent
from spark_runner.core.managers.response_monitor import ResponseTimeMonitor
from spark_runner.core.observation import LoadState, Observation, ResponseTimeStats

D = 2.0
T = 0.5


def obs(load: float, rt_max: float | None, *, count: int = 100) -> Observation:
    stats = ResponseTimeStats(rt_max, rt_max, count) if rt_max is not None else ResponseTimeStats()
    return Observation(period_s=T, load=load, response_time=stats)


# --- equations ---------------------------------------------------------------------------


def test_eq_5_1_partial_step_for_a_big_gap() -> None:
    # gap 0.2 on 0.8: z = 25, step = log2(26)/25 × 0.2
    assert capacity_step(1.0, 0.8) == pytest.approx(0.8 + math.log2(26) / 25 * 0.2)
    assert capacity_step(1.0, 0.8) == pytest.approx(0.837603, abs=1e-6)
    # downwards: gap 0.4 on 0.8, z = 50
    assert capacity_step(0.4, 0.8) == pytest.approx(0.8 - math.log2(51) / 50 * 0.4)


def test_eq_5_1_closes_gaps_under_one_percent_fully() -> None:
    assert capacity_step(0.805, 0.8) == pytest.approx(0.805)  # z = 0.625 -> 1: log2(2)/1 = 1
    assert capacity_step(0.8, 0.8) == 0.8


def test_eq_5_2_probe_size() -> None:
    assert [probe_percent(k) for k in (1, 2, 4, 8)] == [1.0, 2.0, 3.0, 4.0]
    assert probe_percent(3) == pytest.approx(1 + math.log2(3))
    with pytest.raises(ValueError):
        probe_percent(0)


# --- response-time monitor ---------------------------------------------------------------


def test_monitor_states_and_o_point_refresh_by_doubling() -> None:
    m = ResponseTimeMonitor(ut_factor=2.0, refresh_periods=3)
    assert m.observe(1.0, 10.0, 0.1, 0.1, T).state is LoadState.NORMAL  # O = 1
    assert m.observe(2.5, 10.0, 0.1, 0.1, T).state is LoadState.UT  # >= 2 × O
    assert m.observe(1.5, 10.0, 0.1, 0.1, T).state is LoadState.NORMAL
    # 4th observation: O doubles to 2, then re-takes min(2, 3) = 2; 3 < 2 × 2 -> normal
    reading = m.observe(3.0, 10.0, 0.1, 0.1, T)
    assert reading.o_point_s == pytest.approx(2.0)
    assert reading.state is LoadState.NORMAL
    assert m.observe(11.0, 10.0, 0.1, 0.1, T).state is LoadState.OT


def test_monitor_trend_flags() -> None:
    m = ResponseTimeMonitor(ut_factor=2.0, refresh_periods=100)
    first = m.observe(1.0, D, 0.1, 0.1, T)
    assert first.significantly_below  # no trend yet: flat, and 1.0 < 0.9 × 2
    assert not m.observe(1.2, D, 0.1, 0.1, T).significantly_below  # rising
    assert not m.observe(1.85, D, 0.1, 0.1, T).significantly_below  # within 10 % of D
    assert not m.observe(2.1, D, 0.1, 0.1, T).critically_above  # above D but not by 10 %
    assert m.observe(2.5, D, 0.1, 0.1, T).critically_above  # > 1.1 D and rising
    # falling, but too slowly to reach D within one response time: still "not decreasing"
    assert m.observe(2.45, D, 0.1, 0.1, T).critically_above
    # falling fast enough: (2.45 - 2.2) = 0.25 > (2.2 - 2) × 0.5 / 2.2
    assert not m.observe(2.2 + 0.01, D, 0.1, 0.1, T).critically_above


# --- Algorithm 1, branch by branch ---------------------------------------------------------


def test_load_above_capacity_and_normal_increases_capacity() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    d = m.step(obs(1.0, 0.1))
    assert d.state is LoadState.NORMAL
    assert d.headroom == pytest.approx(capacity_step(1.0, 0.8))
    assert d.shed_fraction == 0.0 and d.action == "increase_capacity"


def test_load_above_capacity_and_ot_sheds_the_excess() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    d = m.step(obs(1.0, 3.0))
    assert d.state is LoadState.OT and d.action == "shed_excess"
    assert d.shed_fraction == pytest.approx(0.2)  # (L − L_C) / L with L_C = 0.8
    assert d.admitted_load == pytest.approx(0.8)
    assert d.headroom == pytest.approx(0.8)


def _shedding_half(m: AlomaManager) -> None:
    m.step(obs(0.5, 0.1))  # O point 0.1
    d = m.step(obs(1.6, 3.0))  # OT, L 1.6 > 0.8: shed 50 %, admit 0.8
    assert d.shed_fraction == pytest.approx(0.5)


def test_ut_while_shedding_and_not_increasing_probes_capacity_up() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    _shedding_half(m)
    d = m.step(obs(2.0, 1.0))  # admitted 1.0 > 0.8; UT (>= 0.2, < 0.9 D, falling)
    assert d.state is LoadState.UT and d.action == "increase_capacity_shed_less"
    assert d.headroom == pytest.approx(capacity_step(1.0, 0.8))
    assert d.shed_fraction == pytest.approx(1 - 0.5 / 0.99)  # 1 % less, Eq. 5.2 with k = 1


def test_ot_below_capacity_and_not_decreasing_probes_capacity_down() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    m.step(obs(0.5, 0.1))
    d = m.step(obs(0.6, 2.5))  # L 0.6 <= 0.8, OT, > 1.1 D, rising
    assert d.action == "decrease_capacity_shed_more"
    assert d.headroom == pytest.approx(capacity_step(0.6, 0.8))
    assert d.shed_fraction == pytest.approx(0.01)
    d = m.step(obs(0.6, 2.6))  # same situation again: k = 2, x = 2 %
    assert d.shed_fraction == pytest.approx(1 - 0.99 * 0.98)
    assert d.details["k_more"] == 2


def test_not_ot_below_capacity_sheds_the_gap_less() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    _shedding_half(m)
    d = m.step(obs(1.2, 1.9))  # admitted 0.6 < 0.8, rt in the band below D
    assert d.action == "shed_gap_less"
    assert d.admitted_load == pytest.approx(0.8)
    assert d.shed_fraction == pytest.approx(1 / 3)


def test_pinned_load_well_below_target_probes_shedding_down() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    _shedding_half(m)
    d = m.step(obs(1.6, 1.0))  # admitted exactly L_C: the gap is 0, rt well below D
    assert d.action == "probe_shed_less"
    assert d.shed_fraction == pytest.approx(1 - 0.5 / 0.99)


def test_periods_without_output_hold_and_idle_resets() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D))
    _shedding_half(m)
    d = m.step(obs(1.6, None))
    assert d.action == "hold_no_output" and d.shed_fraction == pytest.approx(0.5)
    d = m.step(obs(0.0, None))
    assert d.action == "idle" and d.shed_fraction == 0.0


def test_shed_fraction_is_capped_and_live_updates_apply_between_steps() -> None:
    m = AlomaManager(AlomaParams(delay_target_s=D, max_shed=0.5))
    assert m.step(obs(10.0, 5.0)).shed_fraction == 0.5
    m.update(max_shed=0.3, delay_target_s=10.0)
    assert m.shed_fraction == 0.3
    assert m.step(obs(10.0, 5.0)).state is not LoadState.OT  # 5 s is now within D = 10 s
    with pytest.raises(ParameterError, match="ut_factor"):
        m.update(ut_factor=1.0)
    with pytest.raises(ParameterError, match="response_statistic"):
        m.update(response_statistic="p99")
    assert m.params.ut_factor == 2.0  # a rejected update changes nothing


# --- closed loops in simulated time ------------------------------------------------------


def run_aloma(plant: FluidPlant, rate: float, periods: int, halve_at: int | None = None):
    manager = AlomaManager(AlomaParams(delay_target_s=D))
    shed = 0.0
    rts: list[float] = []
    caps: list[float] = []
    for i in range(periods):
        if i == halve_at:
            plant.capacity /= 2
        o = plant.run_period(rate, shed, T, D)
        decision = manager.step(o)
        shed = decision.shed_fraction
        rts.append(o.response_time.max_s)
        caps.append(manager.headroom)
    return manager, rts, caps


@pytest.mark.parametrize("rate", [1000, 1200, 1500, 2000])
def test_overload_is_shed_to_the_target(rate: float) -> None:
    plant = FluidPlant(capacity=0.9, cost_s=0.001)  # load rate/1000 s/s vs capacity 0.9
    _, rts, _ = run_aloma(plant, rate, 400)
    excess = 1 - 0.9 / (rate / 1000)
    assert plant.loss_fraction == pytest.approx(excess, abs=0.05)  # sheds ~the excess
    assert plant.mean_violation_s <= 0.1 * D
    assert max(rts[200:]) <= 1.35 * D


def test_overload_response_time_is_driven_to_the_target() -> None:
    plant = FluidPlant(capacity=0.9, cost_s=0.001)
    manager, rts, _ = run_aloma(plant, 1200, 400)
    second_half = rts[200:]
    assert 0.5 * D <= sum(second_half) / len(second_half) <= 1.1 * D  # uses the slack to D
    assert plant.loss_fraction == pytest.approx(0.25, abs=0.02)
    assert plant.mean_violation_s <= 0.05 * D
    assert manager.headroom == pytest.approx(0.9, rel=0.12)  # learnt from 0.8


def test_relearns_capacity_after_it_halves_hidden() -> None:
    # A background job halves the capacity; the measured costs do not change (001 Fig. 16):
    # only the response time tells. L_C must fall to the new capacity.
    plant = FluidPlant(capacity=0.9, cost_s=0.001)
    _, rts, caps = run_aloma(plant, 1200, 400, halve_at=200)
    assert max(rts[200:]) > 1.5 * D  # the change really hurt
    assert all(rt <= 1.1 * D for rt in rts[230:])  # target met again within 30 periods
    assert caps[215] < 0.6  # L_C follows the loss within 15 periods (from 0.9)
    assert caps[-1] == pytest.approx(0.45, rel=0.1)  # and settles at the new capacity


def test_relearns_capacity_after_it_halves_visible_cost() -> None:
    # Wall-clock costs double under contention, so the load monitor sees L double.
    plant = FluidPlant(capacity=0.9, cost_s=0.001, cost_visible=True, nominal_capacity=0.9)
    _, rts, _ = run_aloma(plant, 1200, 300, halve_at=200)
    # The queue held ~D of work at the old speed (2 D at the new one): it cannot leave
    # faster than ~8 periods; ALoMa is back under the target within 20.
    assert max(rts[200:]) > 1.5 * D
    assert all(rt <= 1.1 * D for rt in rts[220:])

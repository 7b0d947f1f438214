"""The Eq. 4.3 controller (pole placement), SEaMLeSS and CTRL, by hand and in closed loop."""

from __future__ import annotations

import cmath
import dataclasses

import pytest

from spark_runner.core.managers import (
    CtrlManager,
    CtrlParams,
    DelayController,
    SeamlessManager,
    SeamlessParams,
    gains_from_poles,
    make_manager,
)
from spark_runner.core.observation import Observation, ResponseTimeStats
from tests.core.qos_plant import FluidPlant

D = 2.0
T = 0.5


def test_gains_place_the_closed_loop_poles() -> None:
    g = gains_from_poles(0.5, 0.5)
    assert (g.a, g.b0, g.b1) == (-1.0, -1.0, 0.75)
    for p1, p2 in [(0.5, 0.5), (0.3, 0.7), (0.0, 0.9)]:
        g = gains_from_poles(p1, p2)
        # closed loop with y' = y + u/H and e = y − D: z² + (a − 1 − b0) z − (a + b1)
        b, c = g.a - 1 - g.b0, -(g.a + g.b1)
        disc = cmath.sqrt(b * b - 4 * c)
        roots = sorted([((-b - disc) / 2).real, ((-b + disc) / 2).real])
        assert roots == pytest.approx(sorted([p1, p2]))


def test_controller_drives_the_delay_model_to_the_target() -> None:
    # Pure model: queued work q, processed H×T per period, the controller's admission in.
    ctl = DelayController(gains_from_poles(0.5, 0.5))
    headroom, queued, incoming = 0.9, 0.0, 1.2 * T  # 33 % overload
    ys = []
    for _ in range(30):
        step = ctl.step(
            queued_work_s=queued,
            headroom=headroom,
            period_s=T,
            delay_target_s=D,
            incoming_work_s=incoming,
            max_shed=0.95,
        )
        queued = max(0.0, queued + step.admit_s - headroom * T)
        ys.append(queued / headroom)
    assert max(ys) <= D * 1.001  # the admission clamp: no overshoot
    assert all(abs(y - D) < 0.02 * D for y in ys[15:])  # settled
    assert ys[-1] == pytest.approx(D, rel=1e-3)


def test_seamless_eq_4_2_and_4_3_by_hand() -> None:
    m = SeamlessManager(SeamlessParams(delay_target_s=D, initial_headroom=1.0))
    d = m.step(Observation(period_s=T, load=1.2, queued_load_s=3.0))
    # y = 3/1; e = 1; u = 1 × (−1×1 + 0.75×1) = −0.25; v = u + H T = 0.25; in = 0.6
    assert d.estimated_delay_s == pytest.approx(3.0)
    assert d.shed_fraction == pytest.approx(1 - 0.25 / 0.6)
    d = m.step(Observation(period_s=T, load=1.2, queued_load_s=2.5))
    # e = 0.5, e_prev = 1, u_prev (applied) = 0.25 − 0.5 = −0.25: u = (−0.5 + 0.75) − 0.25 = 0
    assert d.details["u_s"] == pytest.approx(0.0)
    assert d.shed_fraction == pytest.approx(1 - 0.5 / 0.6)


def shedding_obs(rt_mean: float) -> Observation:
    return Observation(
        period_s=T,
        load=2.0,
        queued_load_s=10.0,
        response_time=ResponseTimeStats(rt_mean, rt_mean, 10),
    )


def test_seamless_headroom_adjusts_by_d_over_d_prime() -> None:
    m = SeamlessManager(SeamlessParams(delay_target_s=D, initial_headroom=0.5, adjust_periods=3))
    m.step(shedding_obs(1.6))  # starts shedding; this period had none applied
    for _ in range(2):
        m.step(shedding_obs(1.6))
    assert m.headroom == pytest.approx(0.5)
    d = m.step(shedding_obs(1.6))  # third shedding period: H ← H × D / D'
    assert d.action == "adjust_headroom"
    assert m.headroom == pytest.approx(0.5 * D / 1.6)
    m.update(adjust_periods=1)
    m.step(shedding_obs(0.1))  # D/D' = 20 is clamped to max_adjust_factor = 2
    assert m.headroom == pytest.approx(0.5 * D / 1.6 * 2)


def run(
    manager_kind: str,
    params: dict[str, float | int | str],
    plant: FluidPlant,
    periods: int,
    halve_at: int | None = None,
    fan_out: int = 1,
):
    m = make_manager(manager_kind, {"delay_target_s": D, **params})
    shed, rts = 0.0, []
    for i in range(periods):
        if i == halve_at:
            plant.capacity /= 2
        o = plant.run_period(1200, shed, T, D)
        if fan_out > 1:  # a shared operator: each input yields fan_out outputs
            stats = o.response_time
            o = dataclasses.replace(
                o, response_time=ResponseTimeStats(stats.mean_s, stats.max_s, stats.count * fan_out)
            )
        shed = m.step(o).shed_fraction
        rts.append(o.response_time.max_s)
    return m, rts


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def test_ctrl_converges_to_the_target_with_the_correct_headroom() -> None:
    plant = FluidPlant(capacity=0.9, cost_s=0.001, base_latency_s=0.0)
    m, rts = run("ctrl", {"headroom": 0.9}, plant, 300)
    assert isinstance(m, CtrlManager)
    assert mean(rts[100:]) == pytest.approx(D, rel=0.03)
    assert max(rts[100:]) <= 1.05 * D
    assert plant.loss_fraction == pytest.approx(0.25, abs=0.02)


def test_ctrl_with_a_wrong_or_stale_headroom_misses_the_target() -> None:
    too_high = FluidPlant(capacity=0.9, cost_s=0.001, base_latency_s=0.0)
    _, rts = run("ctrl", {"headroom": 1.0}, too_high, 300)
    assert mean(rts[100:]) >= 1.1 * D  # H 11 % too high: delay 11 % too high
    halved = FluidPlant(capacity=0.9, cost_s=0.001, base_latency_s=0.0)
    _, rts = run("ctrl", {"headroom": 0.9}, halved, 400, halve_at=200)
    assert mean(rts[300:]) == pytest.approx(2 * D, rel=0.05)  # 001 Fig. 16: about 2 × D


def test_ctrl_never_sheds_on_a_fan_out_plan() -> None:
    plant = FluidPlant(capacity=0.9, cost_s=0.001)
    m, rts = run("ctrl", {"headroom": 0.9}, plant, 200, fan_out=3)
    assert plant.loss_fraction == 0.0  # one input, three outputs: the virtual queue stays empty
    assert rts[-1] > 10 * D  # 001 Table 5: 23 s average violation, 0 % loss
    assert isinstance(m.params, CtrlParams)


def test_ctrl_virtual_queue_and_delay_estimate_by_hand() -> None:
    m = CtrlManager(CtrlParams(delay_target_s=D, headroom=0.5))
    d = m.step(
        Observation(
            period_s=T,
            load=1.0,
            arrived_count=100,
            shed_count=0,
            response_time=ResponseTimeStats(0.1, 0.1, 40),
            cost_per_tuple_s=0.01,
        )
    )
    assert m.virtual_queue == 60
    assert d.estimated_delay_s == pytest.approx(0.01 / 0.5 * 60)  # Eq. 3.3


def test_seamless_learns_the_headroom_and_relearns_it_after_a_halving() -> None:
    plant = FluidPlant(capacity=0.9, cost_s=0.001, base_latency_s=0.0)
    m, rts = run("seamless", {}, plant, 900, halve_at=450)
    assert m.headroom == pytest.approx(0.45, rel=0.05)
    assert mean(rts[-100:]) == pytest.approx(D, rel=0.05)

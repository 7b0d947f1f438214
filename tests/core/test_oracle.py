"""The oracle's loss: the least shedding that meets the target, as a fluid served oldest
first (simulated time)."""

from __future__ import annotations

import pytest

from spark_runner.core.errors import ParameterError
from spark_runner.core.oracle import OracleMeter

T = 0.5


def test_work_that_always_fits_needs_no_shedding() -> None:
    meter = OracleMeter(delay_target_s=1.0)
    for _ in range(20):
        assert meter.period(T, offered_s=0.4, capacity_s=0.5) == 0.0
    assert meter.loss_fraction == 0.0 and meter.offered_s == pytest.approx(8.0)


def test_a_burst_beyond_what_fits_within_the_target_is_shed_at_its_deadline() -> None:
    """2 s of work arrives in the first period (taken at 0.25 s), the class can have the
    whole processor (1 s/s), D = 1 s: served from 0 s until its deadline at 1.25 s, so
    1.25 s of work makes it and 0.75 s had to go."""
    meter = OracleMeter(delay_target_s=1.0)
    shed = [meter.period(T, offered, 0.5) for offered in (2.0, 0.0, 0.0, 0.0)]
    assert shed == pytest.approx([0.0, 0.0, 0.75, 0.0])
    assert meter.loss_fraction == pytest.approx(0.375)


def test_the_floor_shortens_the_time_to_serve() -> None:
    meter = OracleMeter(delay_target_s=1.0)
    for offered in (2.0, 0.0, 0.0):
        meter.period(T, offered, 0.5, floor_s=0.5)  # deadline 0.25 + 0.5 = 0.75 s
    assert meter.shed_s == pytest.approx(2.0 - 0.75)


def test_a_capacity_dip_sheds_only_what_cannot_wait_for_the_next_period() -> None:
    """Steady 0.4 s per period, one period with no capacity (a stall): with D = 1 s the
    queued work still fits in the next periods' spare 0.1 s; with D = 0.5 s part of it
    cannot wait."""
    patient, hurried = OracleMeter(1.0), OracleMeter(0.5)
    for capacity in (0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5):
        patient.period(T, 0.4, capacity)
        hurried.period(T, 0.4, capacity)
    assert patient.shed_s < hurried.shed_s
    assert hurried.shed_s > 0.0


def test_periods_in_which_the_class_is_infeasible_are_not_judged() -> None:
    meter = OracleMeter(delay_target_s=1.0)
    meter.period(T, 5.0, 0.0, floor_s=1.2)
    assert meter.offered_s == 0.0 and meter.shed_s == 0.0
    meter.period(T, 0.2, 0.5, floor_s=0.1)
    assert meter.offered_s == pytest.approx(0.2) and meter.loss_fraction == 0.0


def test_bounds() -> None:
    with pytest.raises(ParameterError, match="delay_target_s"):
        OracleMeter(delay_target_s=0.0)
    with pytest.raises(ParameterError, match="period_s"):
        OracleMeter(1.0).period(0.0, 1.0, 1.0)


def test_work_still_waiting_at_the_end_is_not_judged() -> None:
    """1 s of work per period (0.5 s) against 0.25 s of capacity, D = 2 s: each period's
    work may wait until 2 s after its middle, four periods later. The first period's work
    is served in full (nothing else waits yet), the second's gets 0.375 s, every later
    one 0.25 s. After 20 periods, 16 have reached their deadline; the last four's work
    still waits and is not judged: the loss is 11.125 s over the 16 s judged, not over
    the 20 s offered."""
    meter = OracleMeter(delay_target_s=2.0)
    for _ in range(20):
        meter.period(T, offered_s=1.0, capacity_s=0.25)
    assert meter.offered_s == pytest.approx(20.0) and meter.judged_s == pytest.approx(16.0)
    assert meter.shed_s == pytest.approx(16.0 - 1.0 - 0.375 - 14 * 0.25)
    assert meter.loss_fraction == pytest.approx(11.125 / 16.0)


def test_work_older_than_its_target_when_the_engine_starts_is_shed() -> None:
    """The streams flowed for 38 s before the engine ran (a start after a backlog): the
    first period lasts 40 s, its 4 s of work arrived evenly over it and the class had 2 s
    of processor time in its last 2 s. With D = 2 s the work is taken in 20 slices of
    2 s; the 18 whose deadline passed before the engine started are shed, the last two
    are served in time. (Taken at the period's middle with the capacity spread over all
    40 s, the work had a deadline of 22 s and 1.1 s of it was served by then.)"""
    meter = OracleMeter(delay_target_s=2.0)
    assert meter.period(40.0, offered_s=4.0, capacity_s=2.0, down_s=38.0) == pytest.approx(3.6)
    assert meter.judged_s == pytest.approx(4.0) and meter.loss_fraction == pytest.approx(0.9)


def test_capacity_that_came_only_at_the_period_s_end_serves_what_can_still_wait() -> None:
    """Down for the whole first period, 0.3 s of capacity at its end: the 0.5 s of work
    (deadline 2.5 s) gets it; the 0.2 s left is shed at its deadline, in the third."""
    meter = OracleMeter(delay_target_s=2.0)
    shed = [meter.period(1.0, 0.5, 0.3, down_s=1.0), meter.period(1.0, 0.0, 0.0)]
    assert [*shed, meter.period(1.0, 0.0, 0.0)] == pytest.approx([0.0, 0.0, 0.2])

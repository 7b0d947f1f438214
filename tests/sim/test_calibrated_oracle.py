"""The oracle whose machine comes from a separate calibration: the least loss each class
could have had, read from a run's arrivals only (simulated time: results documents built
here)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from spark_runner.control.calibrated_oracle import Calibration, calibrated_losses, run_losses

RATES = {"hi": 400.0, "lo": 800.0}
"""Tuples/s each class is offered: 1.2× a machine of 1,000 tuples/s."""


def results(shed: dict[str, float], periods: int = 120) -> dict[str, Any]:
    """A run of ``periods`` one-second periods at ``RATES``, each class shedding the
    share ``shed`` of its arrivals."""
    series = [
        {
            "t_s": float(t),
            "classes": {
                n: {"arrival_rate_per_s": rate, "shed_count": round(shed[n] * rate)}
                for n, rate in RATES.items()
            },
        }
        for t in range(periods + 1)
    ]
    classes = {
        "hi": {"priority": 6.0, "delay_target_s": 2.0},
        "lo": {"priority": 1.0, "delay_target_s": 2.0},
    }
    return {"classes": classes, "series": series}


MACHINE = Calibration(busy_per_s=1.0, costs_s={"hi": 1e-3, "lo": 1e-3}, floor_s=0.5)
"""A machine of 1,000 tuples/s of either class."""


def test_the_top_class_loses_nothing_and_the_lowest_absorbs_the_overload() -> None:
    least = calibrated_losses(results({"hi": 0.0, "lo": 0.25}), MACHINE)
    assert least["hi"] == pytest.approx(0.0, abs=1e-9)
    # 200 of lo's 800 tuples/s do not fit; the queue lo may keep within its target
    # (1.5 s of work) is a small share of 120 s
    assert least["lo"] == pytest.approx(0.25, abs=0.01)


def test_the_yardstick_does_not_move_with_the_run_it_judges() -> None:
    """A run that starves the top class (it sheds 30 % of hi, nothing of lo) gets the
    same yardstick as a good run, and fails it: an oracle fed the starved class's own
    capacity would have shrunk with it."""
    good = results({"hi": 0.0, "lo": 0.25})
    starved = results({"hi": 0.3, "lo": 0.1})
    assert calibrated_losses(starved, MACHINE) == calibrated_losses(good, MACHINE)
    least = calibrated_losses(starved, MACHINE)
    lost = run_losses(starved)
    assert lost["hi"] == pytest.approx(0.3)
    assert lost["hi"] > 1.15 * least["hi"] + 0.01
    assert run_losses(good)["lo"] <= 1.15 * calibrated_losses(good, MACHINE)["lo"]


def test_a_costlier_class_or_a_slower_machine_must_shed_more() -> None:
    run = results({"hi": 0.0, "lo": 0.25})
    base = calibrated_losses(run, MACHINE)["lo"]
    slower = calibrated_losses(run, replace(MACHINE, busy_per_s=0.9))["lo"]
    costlier = calibrated_losses(run, replace(MACHINE, costs_s={"hi": 1.5e-3, "lo": 1e-3}))["lo"]
    assert slower > base + 0.05 and costlier > base + 0.2


def test_a_calibration_needs_a_positive_rate_and_costs() -> None:
    with pytest.raises(ValueError, match="busy_per_s"):
        Calibration(busy_per_s=0.0, costs_s={})
    with pytest.raises(ValueError, match=r"costs_s\.lo"):
        Calibration(busy_per_s=1.0, costs_s={"lo": 0.0})
    with pytest.raises(ValueError, match=r"no cost for \['lo'\]"):
        calibrated_losses(results({"hi": 0.0, "lo": 0.0}), replace(MACHINE, costs_s={"hi": 1e-3}))


def test_a_calibration_run_gives_its_busy_time_costs_and_median_floor() -> None:
    """The first half of the periods (a JVM still warming) is left out, but for a class
    admitted only there."""
    series = [
        {
            "t_s": float(t),
            "classes": {
                "hi": {
                    "admitted": 300 if t < 10 else 600,
                    "busy_s": 0.9 if t < 10 else 0.6,
                    "floor_s": 3.0 if t < 10 else 1.0,
                },
                "lo": {
                    "admitted": 400 if t < 10 else 0,
                    "busy_s": 0.2 if t < 10 else 0.0,
                    "floor_s": 3.0 if t < 10 else 1.0 + 0.02 * t,
                },
            },
        }
        for t in range(21)
    ]
    calibration = Calibration.of_run({"classes": {"hi": {}, "lo": {}}, "series": series})
    assert calibration.busy_per_s == pytest.approx(0.6)
    # lo, shed in full once steady, from the whole run
    assert calibration.costs_s == pytest.approx({"hi": 1e-3, "lo": 5e-4})
    # periods 11..20: ten floors of 1.0 and 1.22..1.40
    assert calibration.floor_s == pytest.approx(1.22)

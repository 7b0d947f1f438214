"""What if: the job's last minutes replayed under the configuration in force and under a
proposed one (simulated time)."""

from __future__ import annotations

from typing import Any

import pytest

from spark_runner.core.errors import ParameterError
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.sim.whatif import MAX_REPLAY_TUPLES, REPLAY_MAX_S, what_if
from tests.sim.simkit import two_classes

T0 = 1_763_700_000.0


def samples(periods: int, rates: dict[str, float], cost_s: float) -> list[dict[str, Any]]:
    """What a job measured: each class at a constant rate, costing ``cost_s`` per tuple."""
    out = []
    for i in range(periods):
        for name, rate in rates.items():
            out.append(
                {
                    "class_name": name,
                    "t": T0 + 0.5 * (i + 1),
                    "period_s": 0.5,
                    "arrival_rate": rate,
                    "arrived_count": int(rate * 0.5),
                    "output_count": int(rate * 0.25),
                    "shed_count": int(rate * 0.25),
                    "load": rate * cost_s,
                    "violation_mean_s": 0.1,
                    "response_time_mean_s": 1.1,
                }
            )
    return out


def test_a_priority_change_is_predicted_before_it_is_applied() -> None:
    """The low class takes 1.8 s/s, the high one 0.3 s/s, measured at 3 ms per tuple, the
    scenario's model says 2 ms: the replay uses the measured costs and rates. Raising the
    low class's priority above the high one's moves the loss: predicted, the low class
    loses less and the high class more than under the configuration in force."""
    doc = two_classes(rate_hi=100, rate_lo=600, prio_hi=3, prio_lo=1, mode="dilos")
    for cls in doc["classes"]:
        cls["manager"] = {"kind": "aloma", "params": {"max_shed": 0.99}}
    current = scenario_live_config(scenario_from_dict(doc))
    proposed = current.merged({"classes": {"lo": {"priority": 9}}}, 1)
    measured = samples(60, {"hi": 100.0, "lo": 600.0}, cost_s=0.003)
    result = what_if(doc, measured, current, proposed)
    assert result.window_s == pytest.approx(30.0)
    assert result.measured["lo"].loss_fraction == pytest.approx(0.5, abs=0.01)
    assert result.measured["lo"].mean_violation_s == pytest.approx(0.1)
    now, then = result.current, result.proposed
    assert now["lo"].loss_fraction is not None and then["lo"].loss_fraction is not None
    assert now["hi"].loss_fraction is not None and then["hi"].loss_fraction is not None
    assert now["lo"].loss_fraction > 0.3  # 1.8 + 0.3 s/s on a 1 s/s processor
    assert then["lo"].loss_fraction < now["lo"].loss_fraction
    assert then["hi"].loss_fraction > now["hi"].loss_fraction


def test_nothing_to_replay_is_said() -> None:
    doc = two_classes(rate_hi=100, rate_lo=100)
    config = scenario_live_config(scenario_from_dict(doc))
    with pytest.raises(ParameterError, match=f"no samples in its last {REPLAY_MAX_S:g} s"):
        what_if(doc, [], config, config)


def test_the_replay_is_bounded_to_its_newest_part() -> None:
    """6,000 tuples/s per class for 30 s would be 360,000 arrivals: the replay keeps the
    newest part in which at most MAX_REPLAY_TUPLES arrive, measured figures included."""
    doc = two_classes(rate_hi=100, rate_lo=100, mode="dilos")
    config = scenario_live_config(scenario_from_dict(doc))
    measured = samples(60, {"hi": 6000.0, "lo": 6000.0}, cost_s=0.00005)
    result = what_if(doc, measured, config, config)
    assert result.window_s == pytest.approx(MAX_REPLAY_TUPLES / 12_000.0)
    assert result.current == result.proposed  # the same configuration, the same replay

"""The pace between batches: the tightest loaded target sets it, within its bounds; in the
closed loop (simulated time) a higher class then answers no later than a lower one."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_runner.engine.pacing import MIN_PACE_S, MIN_WORK_SHARE, TARGET_SHARE, pace_s

from .plant import Plant, one_map_scenario


def test_the_tightest_target_sets_the_pace_so_a_full_admission_meets_it() -> None:
    pace = pace_s([3.0, 1.5, 2.0], period_s=1.0, fixed_s=0.3, utilization=0.9)
    assert pace == pytest.approx(TARGET_SHARE * 1.5 / 1.9)
    # a tuple waits one pace in the log and at most u × pace in its batch
    assert pace * (1 + 0.9) <= TARGET_SHARE * 1.5 + 1e-12


def test_no_class_with_tuples_or_loose_targets_keep_the_configured_period() -> None:
    assert pace_s([], period_s=1.0, fixed_s=0.3, utilization=0.9) == 1.0
    assert pace_s([30.0], period_s=1.0, fixed_s=0.3, utilization=0.9) == 1.0


def test_a_target_no_batch_can_meet_does_not_starve_the_work() -> None:
    fixed = 0.4
    pace = pace_s([0.2], period_s=1.0, fixed_s=fixed, utilization=0.9)
    assert pace == pytest.approx(fixed / (0.9 * (1 - MIN_WORK_SHARE)))
    assert 0.9 * pace - fixed >= MIN_WORK_SHARE * 0.9 * pace - 1e-12
    assert pace_s([0.01], period_s=1.0, fixed_s=0.0, utilization=0.9) == MIN_PACE_S


RATES = {"gold": 100.0, "silver": 200.0, "bronze": 300.0}
TARGETS = {"gold": 1.5, "silver": 2.0, "bronze": 3.0}


def _mean_response(plant: Plant, name: str, last: int) -> float:
    samples = [s for o in plant.outcomes[-last:] for s in o.samples if s.class_name == name]
    count = sum(s.output_count for s in samples)
    return sum((s.response_time_mean_s or 0.0) * s.output_count for s in samples) / count


def test_every_class_loaded_latency_follows_priority_and_the_top_class_loses_nothing(
    tmp_path: Path,
) -> None:
    """Three loaded classes (priorities 6/3/1) at about 1.4× what the batches can take:
    the top class's tight target sets short batches; it is admitted in full, answers
    within its target and first; the lower classes wait longer and shed."""
    plant = Plant(one_map_scenario(RATES, TARGETS, cost_s=0.002), tmp_path)
    plant.run(200)
    tail = 100
    means = [_mean_response(plant, n, tail) for n in TARGETS]
    assert means == sorted(means), means  # gold ≤ silver ≤ bronze
    recent = [s for o in plant.outcomes[-tail:] for s in o.samples]
    gold = [s for s in recent if s.class_name == "gold"]
    assert sum(s.shed_count or 0 for s in gold) == 0
    assert max(s.response_time_max_s or 0.0 for s in gold) <= TARGETS["gold"]
    bronze_shed = sum(s.shed_count or 0 for s in recent if s.class_name == "bronze")
    assert bronze_shed > 0
    assert plant.outcomes[-1].decision.pace_s == pytest.approx(TARGET_SHARE * TARGETS["gold"] / 1.9)

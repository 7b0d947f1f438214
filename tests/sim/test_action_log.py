"""The control-action log, period by period in simulated time: what it records, when a
verdict comes and what it says."""

from __future__ import annotations

import pytest

from spark_runner.contract.actions import WINDOW, judge
from spark_runner.control.actions import SETTLE_MAX, SHED_STEP, ActionLog, Managed
from spark_runner.control.period import ClassPeriod
from spark_runner.core.elastic import ScalingAction

TARGETS = {"gold": 2.0, "bronze": 4.0}


def period(arrived: int = 100, shed: int = 0, response_max_s: float = 1.0) -> ClassPeriod:
    return ClassPeriod(
        arrived=arrived,
        processed=arrived - shed,
        shed=shed,
        outputs=arrived - shed,
        response_sum_s=0.5 * (arrived - shed),
        response_max_s=response_max_s,
        busy_s=0.5,
    )


MANAGED = Managed(
    loads={"gold": 0.3, "bronze": 0.9},
    usage={"gold": 0.4, "bronze": 1.3},
    states={"gold": "normal", "bronze": "overloaded"},
)
CALM = {"gold": period(), "bronze": period()}
NO_SHED = {"gold": 0.0, "bronze": 0.0}


def out(at_s: float, executors: int = 1, after: int = 3) -> ScalingAction:
    return ScalingAction(
        at_s=at_s,
        rule="scale_out",
        utilization=1.4,
        threshold=0.95,
        held_s=10.0,
        executors_before=executors,
        executors_after=after,
    )


def test_a_shed_change_is_noted_from_one_step_and_a_stop_always() -> None:
    log = ActionLog(TARGETS)
    small = {"gold": 0.0, "bronze": SHED_STEP / 2}
    assert log.observe(0.0, CALM, MANAGED, small, None, None) == []
    [more] = log.observe(1.0, CALM, MANAGED, {"gold": 0.0, "bronze": 0.3}, None, None)
    assert (more.kind, more.class_name, more.shed_before, more.shed_after) == (
        "shed_more",
        "bronze",
        0.0,
        0.3,
    )
    assert (more.usage, more.manager_state, more.verdict) == (1.3, "overloaded", None)
    assert log.observe(2.0, CALM, MANAGED, {"gold": 0.0, "bronze": 0.35}, None, None) == []
    [stop] = log.observe(3.0, CALM, MANAGED, NO_SHED, None, None)
    assert (stop.kind, stop.shed_before, stop.shed_after) == ("shed_less", 0.3, 0.0)
    assert [a.seq for a in log.actions] == [0, 1]


def test_logs_numbered_apart_never_reuse_a_number() -> None:
    """A job with a query per tier keeps a log per query: tier i of n numbers its actions
    i, i + n, … so that the job's numbers stay unique."""
    logs = [ActionLog(TARGETS, numbers=(tier, 2)) for tier in range(2)]
    for t, shed in enumerate((0.3, 0.0, 0.4)):
        for log in logs:
            log.observe(float(t), CALM, MANAGED, {"gold": 0.0, "bronze": shed}, None, None)
    assert [[a.seq for a in log.actions] for log in logs] == [[0, 2, 4], [1, 3, 5]]


def test_a_verdict_compares_the_windows_on_either_side_of_the_action() -> None:
    """Bronze misses its target by 3 s while it sheds nothing; it starts to shed, and from
    the next period it meets it: violation down, loss up."""
    log = ActionLog(TARGETS)
    late = {"gold": period(), "bronze": period(response_max_s=7.0)}
    for t in range(WINDOW):
        log.observe(float(t), late, MANAGED, NO_SHED, None, None)
    shedding = {"gold": 0.0, "bronze": 0.4}
    [taken] = log.observe(float(WINDOW), late, MANAGED, shedding, None, None)
    kept = {"gold": period(), "bronze": period(shed=40)}
    judged = []
    for t in range(WINDOW + 1):  # the period it takes effect in, then the window
        judged += log.observe(float(WINDOW + 1 + t), kept, MANAGED, shedding, None, None)
    [done] = judged
    assert done.seq == taken.seq and done.verdict is not None
    assert done.verdict.violation_before_s == 3.0 and done.verdict.violation_after_s == 0.0
    assert done.verdict.loss_before == 0.0 and done.verdict.loss_after == 0.4
    assert done.verdict.outcome == "worse"  # loss grew beyond its tolerance
    assert log.actions[-1] == done  # the log holds the judged action


def test_a_scale_out_is_judged_once_the_size_asked_serves() -> None:
    log = ActionLog(TARGETS)
    overloaded = {"gold": period(), "bronze": period(shed=50, response_max_s=6.0)}
    [taken] = log.observe(0.0, overloaded, MANAGED, NO_SHED, 1, out(0.0))
    assert (taken.kind, taken.executors_before, taken.executors_after) == ("scale_out", 1, 3)
    assert taken.threshold == 0.95 and taken.held_s == 10.0 and taken.class_name is None
    for t in range(1, 10):  # starting: nothing judged while one executor serves
        assert log.observe(float(t), overloaded, MANAGED, NO_SHED, 1, None) == []
    judged = []
    for t in range(10, 10 + WINDOW + 1):
        judged += log.observe(float(t), CALM, MANAGED, NO_SHED, 3, None)
    [done] = judged
    assert done.verdict is not None and done.verdict.outcome == "improved"
    assert (done.verdict.loss_before, done.verdict.loss_after) == (0.25, 0.0)  # the job's


def test_a_scale_out_is_judged_after_its_executors_have_warmed_up() -> None:
    """Their first batches are slow: the window after starts ``warmup_s`` after they serve."""
    log = ActionLog(TARGETS, warmup_s=4.0)
    log.observe(0.0, CALM, MANAGED, NO_SHED, 1, out(0.0))
    slow = {"gold": period(response_max_s=5.0), "bronze": period()}
    judged = []
    for t in range(10, 14):  # serving, warming up: slow batches
        judged += log.observe(float(t), slow, MANAGED, NO_SHED, 3, None)
    for t in range(14, 14 + WINDOW + 1):
        judged += log.observe(float(t), CALM, MANAGED, NO_SHED, 3, None)
    [done] = judged
    assert done.verdict is not None and done.verdict.violation_after_s == 0.0


def test_a_scale_out_that_never_serves_is_judged_after_the_settling_limit() -> None:
    log = ActionLog(TARGETS)
    log.observe(0.0, CALM, MANAGED, NO_SHED, 1, out(0.0))
    judged = []
    for t in range(1, SETTLE_MAX + WINDOW + 2):
        judged += log.observe(float(t), CALM, MANAGED, NO_SHED, 1, None)
    [done] = judged
    assert done.verdict is not None and done.verdict.outcome == "unchanged"


@pytest.mark.parametrize(
    ("before", "after", "outcome"),
    [
        ((1.0, 0.1), (0.5, 0.1), "improved"),
        ((1.0, 0.1), (0.95, 0.11), "unchanged"),  # within the tolerances
        ((0.0, 0.3), (0.0, 0.0), "improved"),
        ((0.5, 0.0), (0.2, 0.2), "worse"),  # better on one, worse on the other
        ((0.0, 0.0), (0.04, 0.0), "unchanged"),
    ],
)
def test_the_verdict_rule(
    before: tuple[float, float], after: tuple[float, float], outcome: str
) -> None:
    assert judge(before, after, WINDOW).outcome == outcome

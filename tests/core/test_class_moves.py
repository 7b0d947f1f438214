"""When the coordinator moves a class between jobs instead of executors."""

from __future__ import annotations

import dataclasses

from spark_runner.core.class_moves import ClassMove, choose_move
from spark_runner.core.coordinator import (
    ClassLoad,
    CoordinatorParams,
    JobReport,
    priority_allocation,
)


def report(name: str, classes: dict[str, tuple[float, float]], max_executors: int = 2) -> JobReport:
    """A job whose classes are ``name: (priority, load in executors)``."""
    loads = tuple(ClassLoad(n, p, load) for n, (p, load) in classes.items())
    return JobReport(name, loads, max_executors=max_executors)


# job a at its two executors: gold 1.5 and recs 0.8 use 1.15 of them; b holds recs ready
A = report("a", {"gold": (6, 1.5), "recs": (3, 0.8), "ads": (1, 0.0)})
B = report("b", {"silver": (4, 0.1), "recs": (3, 0.0)})
ALLOCATION = {"a": 2, "b": 1}
STANDBY = {"b": frozenset({"recs"})}


def test_an_overloaded_job_with_no_executor_to_gain_moves_its_lowest_loaded_class_out() -> None:
    assert priority_allocation([A, B], 3).executors == ALLOCATION  # a is at its maximum
    move = choose_move([A, B], 3, ALLOCATION, STANDBY)
    assert move == ClassMove("recs", "a", "b", origin_usage=1.15, target_usage=0.9)


def test_no_move_while_the_allocation_can_still_give_the_job_executors() -> None:
    roomy = report("a", {"gold": (6, 1.5), "recs": (3, 0.8)}, max_executors=3)
    assert priority_allocation([roomy, B], 4).executors["a"] == 3
    assert choose_move([roomy, B], 4, ALLOCATION, STANDBY) is None  # executors move first


def test_no_move_without_a_job_holding_the_class_ready() -> None:
    assert choose_move([A, B], 3, ALLOCATION, {}) is None
    assert choose_move([A, B], 3, ALLOCATION, {"a": frozenset({"recs"})}) is None  # itself


def test_no_move_to_a_job_it_would_overload() -> None:
    busy = report("b", {"silver": (4, 0.3), "recs": (3, 0.0)})  # 0.3 + 0.8 > 0.95
    assert choose_move([A, busy], 3, ALLOCATION, STANDBY) is None
    edge = report("b", {"silver": (4, 0.15), "recs": (3, 0.0)})  # 0.15 + 0.8: need_usage
    move = choose_move([A, edge], 3, ALLOCATION, STANDBY)
    assert move is not None and abs(move.target_usage - 0.95) < 1e-9
    stricter = CoordinatorParams(need_usage=0.9, target_usage=0.8, short_usage=1.0)
    assert choose_move([A, edge], 3, ALLOCATION, STANDBY, stricter) is None


def test_a_job_not_overloaded_moves_nothing() -> None:
    light = report("a", {"gold": (6, 1.2), "recs": (3, 0.7)})  # 0.95 of its two executors
    assert choose_move([light, B], 3, ALLOCATION, STANDBY) is None


def test_the_lowest_class_some_job_holds_ready_moves_and_the_least_used_job_takes_it() -> None:
    c = report("c", {"tin": (2, 0.05), "recs": (3, 0.0), "gold": (6, 0.0)})
    d = report("d", {"tin2": (2, 0.2), "gold": (6, 0.0)})
    ready = {"b": frozenset({"recs"}), "c": frozenset({"recs", "gold"}), "d": frozenset({"gold"})}
    allocation = {"a": 2, "b": 1, "c": 1, "d": 2}
    move = choose_move([A, B, c, d], 6, allocation, ready)
    # ads (load 0) has nothing to move; recs is lower than gold; c is left less used than b
    assert move is not None and (move.class_name, move.target) == ("recs", "c")
    # recs ready nowhere: gold, the next class up, goes to the job it fits in (not c)
    no_recs = {"c": frozenset({"gold"}), "d": frozenset({"gold"})}
    move = choose_move([A, B, c, d], 6, allocation, no_recs)
    assert move is not None and (move.class_name, move.target) == ("gold", "d")


def test_after_a_move_neither_job_is_overloaded_so_the_class_does_not_move_back() -> None:
    move = choose_move([A, B], 3, ALLOCATION, STANDBY)
    assert move is not None
    a_after = report("a", {"gold": (6, 1.5), "recs": (3, 0.0), "ads": (1, 0.0)})
    b_after = report("b", {"silver": (4, 0.1), "recs": (3, 0.8)})
    back = {"a": frozenset({"recs"}), "b": frozenset()}
    assert choose_move([a_after, b_after], 3, ALLOCATION, back) is None


def test_a_target_has_room_on_the_executors_serving_it_not_on_those_it_may_hold() -> None:
    roomy = report("b", {"silver": (4, 0.3), "recs": (3, 0.0)})
    allocation = {"a": 2, "b": 2}
    move = choose_move([A, roomy], 4, allocation, STANDBY)  # 1.1 of its two
    assert move == ClassMove("recs", "a", "b", origin_usage=1.15, target_usage=0.55)
    shrunk = dataclasses.replace(roomy, serving=1)  # its own policy holds one of the two
    assert choose_move([A, shrunk], 4, allocation, STANDBY) is None
    serving = dataclasses.replace(roomy, serving=2)
    assert choose_move([A, serving], 4, allocation, STANDBY) == move

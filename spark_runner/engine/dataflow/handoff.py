"""What a class's hand-off between jobs needs from the Spark network (no Spark import).

A class moves between jobs by splitting its event time at a switch instant ``B``
(:class:`~spark_runner.core.migration.HandOff` with tumbling windows, where the
activation instant and the origin's end are both ``B``): the origin computes the tuples
before ``B``, the target those from ``B`` on, and each side's outputs are exactly an
uninterrupted run's outputs for its share, so no state moves.

- A tumbling window aggregate needs ``B`` on a window boundary (a multiple of its size):
  every window then lies wholly on one side (:func:`switch_grid_s`).
- A window join's pair belongs to the side owning its *left* tuple. That side reads the
  right input ``size`` further than its own range (the origin up to ``B + size``, the
  target from ``B − size``), so the pairs across ``B`` are found once, by one side
  (UniMiCo's duplicate suppression, 001 §7.2.5.1, as input ranges): the point feeding a
  join's right side widens its range by the join's size (:func:`point_margins_s`).
- Stateless operators own every tuple where it is read.

A class can move when it shares no segment with another class, its window aggregates
are tumbling and its stateful SQL statements are none (their windows are not analysed),
and no point feeds both sides of a join (:func:`movable_issue`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from spark_runner.contract.control import EventRange
from spark_runner.engine.dataflow.network import RIGHT, NetworkPlan
from spark_runner.scenario.models import SqlOp, WindowAggregateOp, WindowJoinOp

GRID_MS = 1
"""Switch instants are whole milliseconds."""


def _reached(plan: NetworkPlan, node: int) -> list[tuple[int, int]]:
    """``(node, side)`` of every node downstream of ``node`` (the side its tuples enter)."""
    found: list[tuple[int, int]] = []
    todo = [node]
    seen = {node}
    while todo:
        for route in plan.nodes[todo.pop()].routes:
            found.append((route.child, route.side))
            if route.child not in seen:
                seen.add(route.child)
                todo.append(route.child)
    return found


def point_margins_s(plan: NetworkPlan) -> tuple[float, ...]:
    """Per point, how much further than its class's range it reads: the size of the
    join whose right side it feeds (0: none)."""
    margins = []
    for point in plan.points:
        sizes = [
            model.window.size_s
            for child, side in _reached(plan, point.node)
            if side == RIGHT and isinstance(model := plan.nodes[child].model, WindowJoinOp)
        ]
        margins.append(max(sizes, default=0.0))
    return tuple(margins)


def movable_issue(plan: NetworkPlan, class_name: str) -> str | None:
    """Why class ``class_name`` cannot move between jobs by its event time, or None."""
    for point in plan.points:
        reached = _reached(plan, point.node)
        outputs = {out[0] for child, _ in reached if (out := plan.nodes[child].output) is not None}
        mine = point.class_name == class_name
        if mine and outputs - {class_name}:
            return f"its stream {point.stream!r} feeds a segment other classes read"
        if not mine and class_name in outputs:
            return f"it reads a segment of class {point.class_name!r}"
        if not mine:
            continue
        joins: dict[int, set[int]] = {
            child: set() for child, _ in reached if plan.nodes[child].kind == "window_join"
        }
        for child, side in reached:
            if child in joins:
                joins[child].add(side)
            model = plan.nodes[child].model
            if isinstance(model, WindowAggregateOp) and model.window.slide_s not in (
                None,
                model.window.size_s,
            ):
                return f"operator {plan.nodes[child].op_id!r} is a sliding window"
            if isinstance(model, SqlOp) and model.stateful:
                return f"operator {plan.nodes[child].op_id!r} is a stateful SQL statement"
        if any(len(sides) > 1 for sides in joins.values()):
            return f"its stream {point.stream!r} feeds both sides of a join"
    return None


def switch_grid_s(plan: NetworkPlan, class_name: str) -> float:
    """The step of the instants the class may switch at: the least common multiple of its
    tumbling windows' sizes (whole milliseconds), a millisecond without one."""
    grid = GRID_MS
    for node in plan.nodes:
        model = node.model
        if isinstance(model, WindowAggregateOp) and node.owner == class_name:
            grid = math.lcm(grid, round(model.window.size_s * 1000))
    return grid / 1000


def log_start_s(
    plan: NetworkPlan, ranges: Mapping[str, EventRange], margins_s: Sequence[float]
) -> float:
    """The arrival instant a job taking over classes reads its log from: the earliest its
    points' ranges start (a tuple's arrival is never before its event time); 0: none
    starts (the job reads what arrives after it starts)."""
    starts = [
        start - margins_s[p.index]
        for p in plan.points
        if p.class_name in ranges and (start := ranges[p.class_name].from_s) is not None
    ]
    return min(starts, default=0.0)

"""Whether a class can move between jobs by its event time, and what each side reads.

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
  (UniMiCo's duplicate suppression, 001 §7.2.5.1, as input ranges). A stream read as a
  join's right side is therefore read further (:func:`stream_margins_s`); a right tuple
  further than a join's own size from every left tuple of its side pairs with none, so
  the largest size serves every join on the stream.
- Stateless operators own every tuple where it is read.

A class can move when it reads no shared segment, its window aggregates are tumbling,
it has no stateful SQL statement (its windows are not analysed), and no stream it joins
on the right is read by it in any other way (:func:`movable_issue`).
"""

from __future__ import annotations

import math

from spark_runner.scenario.models import (
    QueryClass,
    Scenario,
    SqlOp,
    WindowAggregateOp,
    WindowJoinOp,
    right_input,
)


def stream_margins_s(scenario: Scenario, class_name: str) -> dict[str, float]:
    """Per stream the class joins on the right, how much further than its range it reads
    it: the largest such join's size."""
    margins: dict[str, float] = {}
    for query in scenario.query_class(class_name).queries:
        for op in query.operators:
            if isinstance(op, WindowJoinOp):
                margins[op.right] = max(margins.get(op.right, 0.0), op.window.size_s)
    return margins


def movable_issue(scenario: Scenario, class_name: str) -> str | None:
    """Why class ``class_name`` cannot move between jobs by its event time, or None."""
    qc = scenario.query_class(class_name)
    segments = {s.name for s in scenario.shared_segments}
    for query in qc.queries:
        for name in (query.source, *(right_input(op) for op in query.operators)):
            if name in segments:
                return f"query {query.name!r} reads the shared segment {name!r}"
        for op in query.operators:
            if isinstance(op, WindowAggregateOp) and op.window.slide_s not in (
                None,
                op.window.size_s,
            ):
                return f"query {query.name!r} has a sliding window"
            if isinstance(op, SqlOp) and op.stateful:
                return f"query {query.name!r} has a stateful SQL statement"
    for stream in stream_margins_s(scenario, class_name):
        if reads_otherwise(qc, stream):
            return (
                f"stream {stream!r} is read on a join's right side and as a query's "
                "source: the join reads it further than the query may"
            )
    return None


def reads_otherwise(qc: QueryClass, stream: str) -> bool:
    """Whether a query of ``qc`` reads ``stream`` other than on a join's right side."""
    return any(query.source == stream for query in qc.queries)


def switch_grid_s(scenario: Scenario, class_name: str) -> float:
    """The step of the instants the class may switch at: the least common multiple of its
    tumbling windows' sizes (whole milliseconds), a millisecond without one."""
    grid = 1
    for query in scenario.query_class(class_name).queries:
        for op in query.operators:
            if isinstance(op, WindowAggregateOp):
                grid = math.lcm(grid, round(op.window.size_s * 1000))
    return grid / 1000

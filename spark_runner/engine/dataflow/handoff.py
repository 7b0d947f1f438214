"""Where a job's sources read when it computes a share of a moving class's event time
(the rules: :mod:`spark_runner.scenario.handoff`; no Spark import)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spark_runner.contract.control import EventRange
from spark_runner.engine.dataflow.network import NetworkPlan
from spark_runner.scenario.handoff import stream_margins_s


def point_margins_s(plan: NetworkPlan) -> tuple[float, ...]:
    """Per point, how much further than its class's event-time range it reads (the
    size of the joins whose right side it feeds; 0: none)."""
    margins = {n: stream_margins_s(plan.scenario, n) for n in plan.class_names}
    return tuple(margins[p.class_name].get(p.stream, 0.0) for p in plan.points)


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

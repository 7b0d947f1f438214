"""Registered classes and their queries → one scenario document (pure).

Streams a query names are generated at a constant rate (a stored scenario supplies real
workloads); a query reading ``query:<name>`` reads that shared query's output, which
becomes a shared segment owned by the highest-priority reader (spec §4); a class with
no registered query gets one generated stream and one filter, as the walking skeleton did.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

QUERY_PREFIX = "query:"
SEGMENT_PREFIX = "shared."
DEFAULT_KEYS = 100


@dataclass(frozen=True)
class ClassPart:
    name: str
    priority: float
    delay_target_s: float
    manager: str
    manager_params: dict[str, Any]
    thresholds: tuple[float, float, float, float]
    reserve_fraction: float
    max_lend_fraction: float


@dataclass(frozen=True)
class QueryPart:
    name: str
    source: str
    operators: list[dict[str, Any]]
    shared: bool = False


def segment_name(query_name: str) -> str:
    return SEGMENT_PREFIX + query_name


def compose(
    classes: Sequence[tuple[ClassPart, Sequence[QueryPart]]],
    shared: Sequence[QueryPart],
    *,
    rate_per_s: float,
    period_s: float,
    duration_s: float,
    name: str = "registered-classes",
) -> dict[str, Any]:
    """The scenario document of ``classes`` (with their own, non-shared queries) reading
    the given ``shared`` queries."""
    streams: list[str] = []
    segments: list[dict[str, Any]] = []

    def input_name(source: str) -> str:
        if source.startswith(QUERY_PREFIX):
            return segment_name(source.removeprefix(QUERY_PREFIX))
        if source not in streams:
            streams.append(source)
        return source

    def operators(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = [dict(op) for op in ops]
        for op in out:
            if op.get("kind") == "window_join" and isinstance(op.get("right"), str):
                op["right"] = input_name(op["right"])
        return out

    for query in shared:
        segments.append(
            {
                "name": segment_name(query.name),
                "source": input_name(query.source),
                "operators": operators(query.operators),
            }
        )
    class_docs = []
    for part, queries in classes:
        own = [q for q in queries if not q.shared]
        if own:
            query_docs = [
                {
                    "name": q.name,
                    "source": input_name(q.source),
                    "operators": operators(q.operators),
                }
                for q in own
            ]
        else:
            query_docs = [
                {
                    "name": "generated",
                    "source": input_name(f"stream.{part.name}"),
                    "operators": [{"kind": "filter", "predicate": "value < 0.5"}],
                }
            ]
        tau0, tau1, tau2, tau3 = part.thresholds
        class_docs.append(
            {
                "name": part.name,
                "priority": part.priority,
                "delay_target_s": part.delay_target_s,
                "manager": {"kind": part.manager, "params": dict(part.manager_params)},
                "reserve_fraction": part.reserve_fraction,
                "max_lend_fraction": part.max_lend_fraction,
                "thresholds": {"tau0": tau0, "tau1": tau1, "tau2": tau2, "tau3": tau3},
                "queries": query_docs,
            }
        )
    return {
        "version": 1,
        "name": name,
        "duration_s": duration_s,
        "control": {"period_s": period_s},
        "streams": [
            {
                "name": s,
                "keys": DEFAULT_KEYS,
                "arrival": {"kind": "constant", "rate_per_s": rate_per_s},
            }
            for s in streams
        ],
        "shared_segments": segments,
        "classes": class_docs,
    }

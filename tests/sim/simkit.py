"""Small scenarios built in code for the simulator tests (simulated time only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from spark_runner.scenario import Scenario

Build = Callable[..., Scenario]


def chain(n: int, cost_s: float, selectivity: float = 1.0) -> list[dict[str, Any]]:
    return [
        {
            "kind": "project",
            "columns": ["key", "value"],
            "sim": {"cost_per_tuple_s": cost_s, "selectivity": selectivity},
        }
        for _ in range(n)
    ]


def one_class(
    rate: float = 100.0,
    ops: int = 3,
    cost_s: float = 0.001,
    manager: dict[str, Any] | None = None,
    duration_s: float = 10.0,
    mode: str = "per_class",
) -> dict[str, Any]:
    return {
        "version": 1,
        "name": "t",
        "seed": 3,
        "duration_s": duration_s,
        "control": {"period_s": 0.5, "mode": mode},
        "engine": {"batch_overhead_s": 0.0001, "source_cost_per_tuple_s": 0.0},
        "streams": [{"name": "s", "arrival": {"kind": "constant", "rate_per_s": rate}}],
        "classes": [
            {
                "name": "c",
                "priority": 1,
                "delay_target_s": 2.0,
                "manager": manager or {"kind": "aloma", "params": {"max_shed": 0.99}},
                "queries": [{"name": "q", "source": "s", "operators": chain(ops, cost_s)}],
            }
        ],
    }


def two_classes(
    rate_hi: float,
    rate_lo: float,
    prio_hi: float = 3,
    prio_lo: float = 1,
    cost_s: float = 0.001,
    mode: str = "none",
    duration_s: float = 10.0,
) -> dict[str, Any]:
    doc = one_class(duration_s=duration_s, mode=mode)
    doc["streams"] = [
        {"name": "sh", "arrival": {"kind": "constant", "rate_per_s": rate_hi}},
        {"name": "sl", "arrival": {"kind": "constant", "rate_per_s": rate_lo}},
    ]
    doc["classes"] = [
        {
            "name": "hi",
            "priority": prio_hi,
            "delay_target_s": 1.0,
            "queries": [{"name": "q", "source": "sh", "operators": chain(2, cost_s)}],
        },
        {
            "name": "lo",
            "priority": prio_lo,
            "delay_target_s": 1.0,
            "queries": [{"name": "q", "source": "sl", "operators": chain(2, cost_s)}],
        },
    ]
    return doc

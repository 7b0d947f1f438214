"""The latency benchmarks' workloads, one definition for both sides: one stream of CSV
files (``trades``: ``account`` uniform over 0..999, ``amount`` uniform in [0, 1), ``ts``
the instant the file was written) and classes of one Spark SQL query each: the three of
:data:`CLASSES` (``bench_spark_latency``), or one of :data:`FLOOR_CLASSES`
(``bench_spark_floor``), by name in :data:`WORKLOADS`.

The files are written by :func:`trades_feeder`, the overhead benchmark's
:class:`~bench.overhead_workload.Feeder` (a file every 0.25 s, written hidden and renamed
in, its modification time the ``ts`` of its rows) writing ``trades`` only, over 1,000
accounts: headroom's files source takes a file's rows to arrive at its
modification time, plain Spark is measured on ``ts``, so both sides measure from the
same instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.overhead_workload import Feeder

STREAM = "trades"
ACCOUNTS = 1000
CONTROL_PERIOD_S = 1.0
"""headroom's control period: the longest pace; the tightest target sets a shorter one."""


@dataclass(frozen=True)
class LatencyClass:
    name: str
    priority: int
    target_s: float
    statement: str


CLASSES = (
    LatencyClass(
        "fraud",
        6,
        1.5,
        "SELECT window(event_time, '5 seconds') AS w, account, count(*) AS n, "
        "max(amount) AS top FROM trades WHERE amount > 0.9 GROUP BY 1, account",
    ),
    LatencyClass(
        "recs",
        3,
        2.0,
        "SELECT window(event_time, '10 seconds') AS w, account, avg(amount) AS mean "
        "FROM trades GROUP BY 1, account",
    ),
    LatencyClass(
        "ads",
        1,
        3.0,
        "SELECT window(event_time, '10 seconds') AS w, sum(amount) AS total FROM trades GROUP BY 1",
    ),
)


FLOOR_CLASSES = {
    "stateless": LatencyClass(
        "c", 1, 1.0, "SELECT account, amount, ts FROM trades WHERE amount < 0.5"
    ),
    "stateful": LatencyClass(
        "c",
        1,
        1.0,
        "SELECT window(event_time, '2 seconds') AS w, account, count(*) AS n "
        "FROM trades WHERE amount < 0.5 GROUP BY 1, account",
    ),
}
"""The floor benchmark's one class per query kind (its target is the benchmark's)."""

WORKLOADS: dict[str, tuple[LatencyClass, ...]] = {
    "trades": CLASSES,
    **{f"floor-{kind}": (c,) for kind, c in FLOOR_CLASSES.items()},
}
"""Every workload by name: its classes."""


def scenario(
    rate_per_s: float,
    duration_s: float,
    classes: tuple[LatencyClass, ...] = CLASSES,
    period_s: float = CONTROL_PERIOD_S,
) -> dict[str, Any]:
    """The headroom scenario: ``trades`` with the files' columns (``event_time: ts``;
    the rate and generators only document the feeder: the files source reads the
    files), ``classes`` with their priorities and targets, DILoS every ``period_s``."""
    return {
        "version": 1,
        "name": "latency",
        "seed": 1,
        "duration_s": duration_s,
        "control": {"period_s": period_s, "mode": "dilos"},
        "streams": [
            {
                "name": STREAM,
                "arrival": {"kind": "constant", "rate_per_s": rate_per_s},
                "columns": [
                    {
                        "name": "account",
                        "type": "long",
                        "generator": {"kind": "uniform", "min": 0, "max": ACCOUNTS - 1},
                    },
                    {"name": "amount", "type": "double"},
                    {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival"}},
                ],
                "event_time": "ts",
            }
        ],
        "classes": [
            {
                "name": c.name,
                "priority": c.priority,
                "delay_target_s": c.target_s,
                "queries": [
                    {
                        "name": c.name,
                        "source": STREAM,
                        "operators": [{"kind": "sql", "statement": c.statement}],
                    }
                ],
            }
            for c in classes
        ],
    }


def trades_feeder(files_dir: Path, rate_per_s: float) -> Feeder:
    """The overhead benchmark's :class:`~bench.overhead_workload.Feeder` writing
    ``trades`` alone, accounts uniform over 0..:data:`ACCOUNTS` − 1."""
    return Feeder(files_dir, rate_per_s, streams={STREAM: ("account", "amount")}, accounts=ACCOUNTS)

"""The latency benchmarks' workloads, one definition for both sides, by name in
:data:`WORKLOADS`: streams of CSV files (``ts`` the instant a file was written) and
classes, each a priority, a target and its queries as a user writes them in Spark SQL.

- ``trades`` (``bench_spark_latency``'s default): one stream ``trades`` (``account``
  uniform over 0..999, ``amount`` uniform in [0, 1)) and the three classes of
  :data:`CLASSES`, one window query each; headroom runs the same SQL.
- ``windows-joins``: the overload benchmark's network (:mod:`bench.bench_spark_overload`):
  a stream per class (``s1``–``s3``: ``key`` over 0..999, ``value`` in [0, 1)) at
  0.35 / 0.45 / 0.70 of 1.5 × the rate, and per class a filter, a map that burns
  :data:`COST_S` of CPU a tuple and a 2 s tumbling count per key, and a tenth of the
  stream joined with the whole stream on ``key`` within 1 s. headroom runs the benchmark's
  own operators (:func:`bench.bench_spark_common.three_classes`), plain Spark the same in
  SQL with the job's burn UDF (exact CPU time a row: the same cost on both sides).
- ``floor-stateless``, ``floor-stateful``: ``bench_spark_floor``'s one class over
  ``trades`` (:data:`FLOOR_CLASSES`).

The files are written by the overhead benchmark's :class:`~bench.overhead_workload.Feeder`
(a file every 0.25 s per stream, written hidden and renamed in, its modification time the
``ts`` of its rows): headroom's files source takes a file's rows to arrive at its
modification time, plain Spark is measured on ``ts``, so both sides measure from the same
instant.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bench_spark_common import JOIN_S, JOIN_SHARE, STATEFUL_KEYS, WINDOW_S, three_classes
from bench.overhead_workload import Feeder, stream_columns

STREAM = "trades"
ACCOUNTS = 1000
CONTROL_PERIOD_S = 1.0
"""headroom's control period: the longest pace; the tightest target sets a shorter one."""


@dataclass(frozen=True)
class LatencyClass:
    name: str
    priority: int
    target_s: float
    statements: tuple[str, ...]
    """Its queries over the view ``<stream>`` (a join's other side: ``<stream>_r``)."""
    stream: str = STREAM


CLASSES = (
    LatencyClass(
        "fraud",
        6,
        1.5,
        (
            "SELECT window(event_time, '5 seconds') AS w, account, count(*) AS n, "
            "max(amount) AS top FROM trades WHERE amount > 0.9 GROUP BY 1, account",
        ),
    ),
    LatencyClass(
        "recs",
        3,
        2.0,
        (
            "SELECT window(event_time, '10 seconds') AS w, account, avg(amount) AS mean "
            "FROM trades GROUP BY 1, account",
        ),
    ),
    LatencyClass(
        "ads",
        1,
        3.0,
        (
            "SELECT window(event_time, '10 seconds') AS w, sum(amount) AS total "
            "FROM trades GROUP BY 1",
        ),
    ),
)


FLOOR_CLASSES = {
    "stateless": LatencyClass(
        "c", 1, 1.0, ("SELECT account, amount, ts FROM trades WHERE amount < 0.5",)
    ),
    "stateful": LatencyClass(
        "c",
        1,
        1.0,
        (
            "SELECT window(event_time, '2 seconds') AS w, account, count(*) AS n "
            "FROM trades WHERE amount < 0.5 GROUP BY 1, account",
        ),
    ),
}
"""The floor benchmark's one class per query kind (its target is the benchmark's)."""

COST_S = 0.0002
"""windows-joins: the map's CPU a tuple, s (the overload benchmark's ``--cost``)."""
NETWORK_PERIOD_S = 0.6
"""windows-joins: headroom's control period (the overload benchmark's ``--period``)."""
NETWORK_MIX = (0.35, 0.45, 0.70)
"""windows-joins: each class's stream, a share of 1.5 × the rate (the overload benchmark's
mix, 1.5 in all): at ``--rate`` r the streams carry r rows/s together."""


def network_class(name: str, priority: int, target_s: float, stream: str) -> LatencyClass:
    """A windows-joins class in Spark SQL: what :func:`~bench.bench_spark_common.
    stateful_queries` declares, with the burn as the job's UDF."""
    burn = f"headroom_burn(CAST({round(COST_S * 1e9)} AS BIGINT))"
    counts = (
        f"SELECT window(event_time, '{WINDOW_S:g} seconds') AS w, key, count(*) AS n "
        f"FROM {stream} WHERE value < 0.9 AND NOT {burn} GROUP BY 1, key"
    )
    pairs = (
        f"SELECT l.key, l.value, r.value AS value_r FROM {stream} l JOIN {stream}_r r "
        f"ON l.key = r.key AND r.event_time BETWEEN l.event_time - INTERVAL {JOIN_S:g} SECONDS "
        f"AND l.event_time + INTERVAL {JOIN_S:g} SECONDS WHERE l.value < {JOIN_SHARE:g}"
    )
    return LatencyClass(name, priority, target_s, (counts, pairs), stream)


NETWORK_CLASSES = (
    network_class("c1", 6, 1.5, "s1"),
    network_class("c2", 3, 2.0, "s2"),
    network_class("c3", 1, 3.0, "s3"),
)


@dataclass(frozen=True)
class Workload:
    classes: tuple[LatencyClass, ...]
    shares: Mapping[str, float]
    """Each stream's share of the workload's rate (rows/s)."""
    columns: tuple[str, str] = ("account", "amount")
    """Each stream's key and value columns (then ``ts``)."""
    network: Callable[[Mapping[str, float], float], dict[str, Any]] | None = None
    """headroom's scenario from the streams' rates and the duration, when headroom does not
    run the classes' SQL."""
    burn: bool = False
    """Plain Spark needs the burn UDF."""

    def rates(self, rate: float) -> dict[str, float]:
        """Each stream's rows/s at the workload's ``rate``."""
        return {name: share * rate for name, share in self.shares.items()}

    def scenario(self, rate: float, duration_s: float) -> dict[str, Any]:
        """headroom's scenario at ``rate``."""
        if self.network is not None:
            return self.network(self.rates(rate), duration_s)
        return scenario(rate, duration_s, self.classes)

    def feeder(self, files_dir: Path, rate: float) -> Feeders:
        """Writers of every stream's files at ``rate``, not started."""
        return Feeders(
            [
                Feeder(
                    files_dir,
                    stream_rate,
                    seed=i + 1,
                    streams={name: self.columns},
                    accounts=ACCOUNTS,
                )
                for i, (name, stream_rate) in enumerate(self.rates(rate).items())
            ]
        )


class Feeders:
    """Several :class:`~bench.overhead_workload.Feeder` started and stopped together."""

    def __init__(self, feeders: list[Feeder]) -> None:
        self.feeders = feeders

    def start(self) -> Feeders:
        for f in self.feeders:
            f.start()
        return self

    def stop(self) -> None:
        for f in self.feeders:
            f.stop()


def network_scenario(rates: Mapping[str, float], duration_s: float) -> dict[str, Any]:
    """The overload benchmark's three classes at ``rates`` (streams ``s1``–``s3``) with
    the files' columns (``event_time: ts``, the instant a file was written)."""
    classes = NETWORK_CLASSES
    doc = three_classes(
        [rates[c.stream] for c in classes],
        [c.target_s for c in classes],
        cost_s=COST_S,
        period_s=NETWORK_PERIOD_S,
        stateful=True,
        duration_s=duration_s,
    )
    for s in doc["streams"]:
        s.pop("keys", None)
        s["columns"] = stream_columns("key", "value", STATEFUL_KEYS)
        s["event_time"] = "ts"
    return doc


WORKLOADS: dict[str, Workload] = {
    "trades": Workload(CLASSES, {STREAM: 1.0}),
    "windows-joins": Workload(
        NETWORK_CLASSES,
        {c.stream: m / sum(NETWORK_MIX) for c, m in zip(NETWORK_CLASSES, NETWORK_MIX, strict=True)},
        ("key", "value"),
        network_scenario,
        burn=True,
    ),
    **{f"floor-{kind}": Workload((c,), {STREAM: 1.0}) for kind, c in FLOOR_CLASSES.items()},
}
"""Every workload by name."""


def scenario(
    rate_per_s: float,
    duration_s: float,
    classes: tuple[LatencyClass, ...] = CLASSES,
    period_s: float = CONTROL_PERIOD_S,
) -> dict[str, Any]:
    """The headroom scenario of SQL classes over ``trades`` (the rate only documents the
    feeder: the files source reads the files), DILoS every ``period_s``."""
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
                "columns": stream_columns("account", "amount", ACCOUNTS),
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
                        "name": c.name if len(c.statements) == 1 else f"{c.name}_{k}",
                        "source": STREAM,
                        "operators": [{"kind": "sql", "statement": statement}],
                    }
                    for k, statement in enumerate(c.statements)
                ],
            }
            for c in classes
        ],
    }

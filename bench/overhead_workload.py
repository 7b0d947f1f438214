"""The overhead benchmark's workload, one definition for both sides: two streams of CSV
files (trades, quotes) written at a fixed rate, and two SQL queries over them (a filter,
a map and a window aggregate; a stream-stream join)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql.types import (
    DoubleType,
    LongType,
    StructField,
    StructType,
    TimestampType,
)

ACCOUNTS = 10_000
WATERMARK_S = 30.0
FILE_EVERY_S = 0.25

STREAMS: dict[str, tuple[str, str]] = {
    "trades": ("account", "amount"),
    "quotes": ("account", "bid"),
}
"""Each stream's long key and double value; both also carry ``ts`` (their event time)."""


@dataclass(frozen=True)
class Query:
    name: str
    reads: tuple[str, ...]
    statement: str


QUERIES = (
    Query(
        "aggregates",
        ("trades",),
        "SELECT window(event_time, '5 seconds') AS w, account, count(amount) AS n, "
        "avg(amount * 1.1 + 1) AS mean FROM trades WHERE amount > 0.2 GROUP BY 1, account",
    ),
    Query(
        "matches",
        ("trades", "quotes"),
        "SELECT t.account, t.amount, q.bid FROM trades t JOIN quotes q ON t.account = "
        "q.account AND q.event_time BETWEEN t.event_time - INTERVAL 1 SECONDS AND "
        "t.event_time + INTERVAL 1 SECONDS WHERE t.amount > 0.5",
    ),
)


def spark_schema(stream: str, columns: tuple[str, str] | None = None) -> StructType:
    """``stream``'s file schema: its key and value (``columns``, else :data:`STREAMS`'),
    then ``ts``."""
    key, value = columns or STREAMS[stream]
    return StructType(
        [
            StructField(key, LongType()),
            StructField(value, DoubleType()),
            StructField("ts", TimestampType()),
        ]
    )


def stream_columns(key: str, value: str, keys: int) -> list[dict[str, Any]]:
    """A files stream's columns as a scenario declares them: ``key`` uniform over ``keys``
    integers, ``value``, ``ts`` (the generators only document the feeder: the files
    source reads the files)."""
    return [
        {"name": key, "type": "long", "generator": {"kind": "uniform", "min": 0, "max": keys - 1}},
        {"name": value, "type": "double"},
        {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival"}},
    ]


def scenario(period_s: float, target_s: float) -> dict[str, Any]:
    """The headroom scenario of the same streams and queries: one class per query, a
    target far above any response time here (nothing to shed)."""
    return {
        "version": 1,
        "name": "overhead",
        "seed": 1,
        "duration_s": 3600,
        "control": {"period_s": period_s, "mode": "dilos"},
        "streams": [
            {
                "name": name,
                "arrival": {"kind": "constant", "rate_per_s": 1},
                "columns": stream_columns(key, value, ACCOUNTS),
                "event_time": "ts",
            }
            for name, (key, value) in STREAMS.items()
        ],
        "classes": [
            {
                "name": q.name,
                "priority": len(QUERIES) - i,
                "delay_target_s": target_s,
                "queries": [
                    {
                        "name": q.name,
                        "source": q.reads[0],
                        "operators": [{"kind": "sql", "statement": q.statement}],
                    }
                ],
            }
            for i, q in enumerate(QUERIES)
        ],
    }


class Feeder:
    """Writes a CSV file per stream every :data:`FILE_EVERY_S` at ``rate_per_s`` rows/s
    per stream (written hidden, renamed in), until stopped; counts what it wrote. Each
    row's key is uniform over ``accounts``; a file's modification time is its rows' ``ts``
    (headroom's files source takes it as their arrival, so both sides measure from it)."""

    def __init__(
        self,
        files_dir: Path,
        rate_per_s: float,
        seed: int = 1,
        streams: dict[str, tuple[str, str]] = STREAMS,
        accounts: int = ACCOUNTS,
    ) -> None:
        self.files_dir = files_dir
        self.streams = streams
        self.accounts = accounts
        self.rows_per_file = max(1, round(rate_per_s * FILE_EVERY_S))
        self.rng = np.random.default_rng(seed)
        self.written: list[tuple[float, int]] = []  # (time, rows per stream) per round
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        for name in streams:
            (files_dir / name).mkdir(parents=True, exist_ok=True)

    def start(self) -> Feeder:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def rows_until(self, t: float) -> int:
        """Rows per stream written up to wall time ``t``."""
        return sum(n for at, n in self.written if at <= t)

    def _run(self) -> None:
        n = 0
        next_at = time.time()
        while not self._stop.is_set():
            ms = time.time_ns() // 1_000_000
            stamp = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
            for name, (key, value) in self.streams.items():
                keys = self.rng.integers(0, self.accounts, self.rows_per_file)
                values = self.rng.random(self.rows_per_file)
                lines = [f"{k},{v:.6f},{stamp}" for k, v in zip(keys, values, strict=True)]
                hidden = self.files_dir / name / f".{n:07d}.csv"
                hidden.write_text(f"{key},{value},ts\n" + "\n".join(lines) + "\n")
                os.utime(hidden, ns=(ms * 1_000_000, ms * 1_000_000))
                os.replace(hidden, self.files_dir / name / f"{n:07d}.csv")
            self.written.append((ms / 1000, self.rows_per_file))
            n += 1
            next_at += FILE_EVERY_S
            self._stop.wait(max(0.0, next_at - time.time()))

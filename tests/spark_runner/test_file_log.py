"""A growing directory of files as the sources' log: discovery order, counts, rows mapped
to the stream's columns, arrival at the file's time, exact replays (no Spark)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spark_runner.engine.sources.columns import ColumnSpec
from spark_runner.engine.sources.feed import (
    FeedPoint,
    FeedSpec,
    initial_offset,
    next_offset,
    plan_partitions,
)
from spark_runner.engine.sources.file_log import FileLog
from spark_runner.engine.sources.offsets import ADMIT_ALL, Decision, SourceOffset
from spark_runner.engine.sources.streams import StreamSpec

S = 1_000_000
T0 = 1_800_000_000.0
COLUMNS = (
    ColumnSpec("account", "long", "uniform", {}),
    ColumnSpec("amount", "double", "uniform", {}),
    ColumnSpec("ts", "timestamp", "arrival", {}),
)


def feed(tmp_path: Path) -> FeedSpec:
    stream = StreamSpec("trades", 0, (0.0,), (0.0,), COLUMNS, event_time="ts")
    return FeedSpec(
        kind="files",
        points=(FeedPoint("src:c:trades", "c", "trades"),),
        streams={"trades": stream},
        decision_path=str(tmp_path / "run" / "decision.json"),
        files_dir=str(tmp_path / "in"),
    )


def put(path: Path, text_or_table: str | pa.Table, at_s: float) -> None:
    """Write a file elsewhere, rename it into place, date it ``at_s``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden = path.with_name("." + path.name)
    if isinstance(text_or_table, str):
        hidden.write_text(text_or_table)
    else:
        pq.write_table(text_or_table, hidden)
    os.replace(hidden, path)
    os.utime(path, (at_s, at_s))


def read(log: FileLog, spec: FeedSpec, start: SourceOffset, end: SourceOffset) -> dict[str, Any]:
    """Every kept row from ``start`` to ``end``, the batch's pieces one after the other."""
    pieces = [log.rows(p) for g in plan_partitions(spec, start, end, {}) for p in g]
    return {
        k: (np.concatenate([p[k] for p in pieces]) if isinstance(pieces[0][k], np.ndarray)
            else pa.concat_arrays([p[k] for p in pieces]).to_pylist())
        for k in pieces[0]
    }  # fmt: skip


def test_files_arrive_in_discovery_order_and_read_as_the_streams_columns(tmp_path: Path) -> None:
    spec = feed(tmp_path)
    trades = tmp_path / "in" / "trades"
    put(trades / "old.csv", "account,amount\n1,1.0\n", T0 - 5)  # there before the run
    log = FileLog(spec, tmp_path / "run")
    start = initial_offset(spec, log, round(T0 * S))
    put(
        trades / "b.json",
        "\n".join(json.dumps({"account": i, "amount": i / 2}) for i in range(3)),
        T0 + 1,
    )
    put(trades / "a.csv", "amount,account,extra\n9.5,7,x\noops,8,y\n", T0 + 2)
    put(trades / "c.parquet", pa.table({"account": [5], "amount": [0.25]}), T0 + 3)
    put(trades / "late.csv", "account\n1\n", T0 + 60)  # not arrived yet at T0 + 10
    end = next_offset(spec, log, start, ADMIT_ALL, round((T0 + 10) * S))
    assert end.points[0].arrived == 6  # the old file is not part of the run
    rows = read(log, spec, start, end)
    assert rows["account"] == [0, 1, 2, 7, 8, 5]  # by arrival, each file's rows in order
    assert rows["amount"] == [0.0, 0.5, 1.0, 9.5, None, 0.25]  # unreadable: null
    assert rows["ts"] == [None] * 6  # no such column in the files
    assert np.array_equal(rows["arrival_s"], [T0 + 1] * 3 + [T0 + 2] * 2 + [T0 + 3])
    assert rows["seq"].tolist() == list(range(6))

    # a budget leaves rows waiting, oldest first; a replay of the same offsets reads the same
    # rows whatever arrived since (another source process builds the same numbering)
    put(trades / "d.json", json.dumps({"account": 11, "amount": 3}), T0 + 11)
    budget = Decision(
        version=1,
        quotas={"c": 1.0},
        budget_s=0.001,
        costs_s={"src:c:trades": 0.001},
        admit_all=False,
    )
    later = next_offset(spec, log, end, budget, round((T0 + 70) * S))
    assert (later.points[0].arrived, later.points[0].taken) == (8, 7)
    again = FileLog(spec, tmp_path / "run")
    assert read(again, spec, start, end)["account"] == rows["account"]
    assert log.head_s(0, later.points[0], round((T0 + 70) * S)) == T0 + 60

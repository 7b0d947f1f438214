"""What a run admitted, read back from its checkpoint (no Spark).

Every batch's offset log entry holds, per point, the cumulative counters and the decision
that applied, so the tuples a batch admitted can be produced again exactly: the same
slices of the generated log, the same kept positions. This audits a run — the outputs of
a stateful query can be checked against its inputs, e.g. after a crash and a restart —
without having kept the inputs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from spark_runner.engine.sources.feed import FeedSpec, GeneratedLog, plan_partitions
from spark_runner.engine.sources.offsets import SourceOffset, read_offset_log


def admitted_tuples(checkpoint: str | Path, last_batch: int) -> list[dict[str, np.ndarray]]:
    """Per point (in the feed's order), the generated tuples batches 0..``last_batch``
    admitted: ``seq``, ``arrival_s`` (epoch s) and the stream's columns. A Redis feed is
    not replayed here (its entries are read from the broker)."""
    spec = FeedSpec.load(Path(checkpoint) / "headroom" / "feed.json")
    parts: dict[int, list[dict[str, np.ndarray]]] = {i: [] for i in range(len(spec.points))}
    previous: SourceOffset | None = None
    for batch in range(last_batch + 1):
        end = read_offset_log(checkpoint, batch)
        start = previous or end.run_start()
        log = GeneratedLog(spec, end.origin_us)
        for group in plan_partitions(spec, start, end, {}):
            for piece in group:
                parts[piece.point].append(log.rows(piece))
        previous = end
    out = []
    for i, pieces in sorted(parts.items()):
        names = ["seq", "arrival_s"] + [c.name for c in spec.streams[spec.points[i].stream].columns]
        out.append({k: np.concatenate([p[k] for p in pieces] or [np.empty(0)]) for k in names})
    return out


Columns = Mapping[str, np.ndarray]


def final_values(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, Any], Any]:
    """A window aggregate's result per (window start, key) once every update is in: the
    ``value`` of its update in the highest batch (update mode writes one per batch that
    touched it; a file sink's rows carry ``batch_id``)."""
    newest: dict[tuple[Any, Any], tuple[int, Any]] = {}
    for r in rows:
        cell = (r["window_start_s"], r["key"])
        if cell not in newest or newest[cell][0] < r["batch_id"]:
            newest[cell] = (r["batch_id"], r["value"])
    return {cell: value for cell, (_, value) in newest.items()}


def join_matches(
    left: Columns,
    right: Columns,
    *,
    on: str,
    size_s: float,
    values: tuple[str, str],
    times: tuple[str, str] = ("arrival_s", "arrival_s"),
) -> Counter[tuple[float, float, float]]:
    """``(join value, left value, right value)`` of every match of a window join: equal
    ``on`` and times (columns ``times``, in one unit) at most ``size_s`` apart in that unit;
    the reference a join's outputs are checked against."""
    pairs: Counter[tuple[float, float, float]] = Counter()
    for k, v, t in zip(left[on], left[values[0]], left[times[0]], strict=True):
        near = (right[on] == k) & (np.abs(right[times[1]] - t) <= size_s)
        for v2 in right[values[1]][near]:
            pairs[(float(k), float(v), float(v2))] += 1
    return pairs

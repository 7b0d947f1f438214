"""Window aggregates and window joins, finished on the driver (no Spark).

Spark delivers, per batch, the tuples that reached each window operator after every
operator upstream of it (the per-tuple work runs in the executors). Their state is small
— per window and group four numbers; per join side the tuples of the last window — and
lives here, so a batch costs no shuffle (measured on 2 cores: a shuffle and a join inside
the batch cost 0.6–0.9 s per batch, merging here ~10 ms).

Windows are on arrival time (event time = the tuple's arrival instant):

- **window aggregate**: tumbling ``[k·size, (k+1)·size)`` or sliding
  ``[k·slide, k·slide + size)``; every batch emits one *update* per (window, group) it
  touched, with the aggregate over everything seen so far (incremental results, as the
  thesis's engine: selectivity 1 per input tuple). The update's arrival instant — the one
  its response time is measured from — is that of the *earliest* input of the batch that
  contributed to it.
- **window join**: a left and a right tuple match when their ``on_column`` values are equal
  and their arrival instants at most ``size_s`` apart; a match is emitted by the batch in
  which its second tuple arrives, and its arrival instant is that tuple's (the later one).

State is evicted when no future tuple can reach it: every point's oldest waiting tuple
arrives no earlier than the point's head (offsets), so a window ending before the heads of
all points upstream of the operator is final, and a join tuple older than that minus the
window cannot match anymore.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from spark_runner.scenario.models import WindowAggregateOp, WindowJoinOp

Columns = Mapping[str, np.ndarray]


@dataclass
class Outputs:
    """Output tuples of one operator in one batch (arrays of equal length)."""

    arrival_s: np.ndarray
    key: np.ndarray | None = None
    value: np.ndarray | None = None
    value2: np.ndarray | None = None
    group: list[str] | None = None
    window_start_s: np.ndarray | None = None
    window_end_s: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.arrival_s)


class WindowAggregate:
    """Incremental ``function(column)`` per group over tumbling or sliding windows."""

    def __init__(self, model: WindowAggregateOp) -> None:
        self.model = model
        self.size_s = model.window.size_s
        self.slide_s = model.window.slide_s or model.window.size_s
        self.windows_per_tuple = math.ceil(self.size_s / self.slide_s - 1e-9)
        # (window index, group values) → [count, sum, min, max]
        self.state: dict[tuple[int, tuple[object, ...]], list[float]] = {}

    def process(self, rows: Columns) -> Outputs:
        t = rows["arrival_s"]
        if len(t) == 0:
            return Outputs(arrival_s=np.empty(0))
        fn = self.model.function
        base = np.floor(t / self.slide_s).astype(np.int64)
        ks, ts, gs, vs = [], [], [], []
        for j in range(self.windows_per_tuple):
            k = base - j
            inside = t < k * self.slide_s + self.size_s
            ks.append(k[inside])
            ts.append(t[inside])
            gs.append([rows[c][inside] for c in self.model.group_by])
            if fn != "count":
                vs.append(rows[self.model.column][inside].astype(np.float64))
        k_all, t_all = np.concatenate(ks), np.concatenate(ts)
        columns = [k_all.astype(np.float64)] + [
            np.concatenate([g[i] for g in gs]).astype(np.float64)
            for i in range(len(self.model.group_by))
        ]
        keys, inverse = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        n_groups = len(keys)
        counts = np.bincount(inverse, minlength=n_groups)
        t_min = np.full(n_groups, np.inf)
        np.minimum.at(t_min, inverse, t_all)
        if fn != "count":
            v_all = np.concatenate(vs)
            ok = ~np.isnan(v_all)
            sums = np.bincount(inverse[ok], weights=v_all[ok], minlength=n_groups)
            valid = np.bincount(inverse[ok], minlength=n_groups)
            lows = np.full(n_groups, np.inf)
            highs = np.full(n_groups, -np.inf)
            np.minimum.at(lows, inverse[ok], v_all[ok])
            np.maximum.at(highs, inverse[ok], v_all[ok])
        values = np.empty(n_groups)
        state = self.state
        window_index = keys[:, 0].astype(np.int64).tolist()
        groups = [tuple(row) for row in keys[:, 1:].tolist()]
        count_list = counts.tolist()
        for i in range(n_groups):
            key = (window_index[i], groups[i])
            cell = state.get(key)
            if cell is None:
                cell = state[key] = [0.0, 0.0, math.inf, -math.inf]
            cell[0] += count_list[i]
            if fn != "count" and valid[i]:
                cell[1] += float(sums[i])
                cell[2] = min(cell[2], float(lows[i]))
                cell[3] = max(cell[3], float(highs[i]))
            values[i] = _aggregate(fn, cell)
        start = keys[:, 0] * self.slide_s
        by = list(self.model.group_by)
        return Outputs(
            arrival_s=t_min,
            key=keys[:, 1 + by.index("key")] if "key" in by else None,
            value=values,
            group=None if by == ["key"] else ["|".join(f"{v:g}" for v in g) for g in groups],
            window_start_s=start,
            window_end_s=start + self.size_s,
        )

    def evict(self, horizon_s: float) -> int:
        """Drop windows that end at or before ``horizon_s``; returns how many."""
        last_final = math.floor((horizon_s - self.size_s) / self.slide_s)
        gone = [key for key in self.state if key[0] <= last_final]
        for key in gone:
            del self.state[key]
        return len(gone)


def _aggregate(function: str, cell: list[float]) -> float:
    count, total, low, high = cell
    if function == "count":
        return count
    if function == "sum":
        return total
    if function == "avg":
        return total / count if count else math.nan
    if function == "min":
        return low if math.isfinite(low) else math.nan
    return high if math.isfinite(high) else math.nan


class WindowJoin:
    """Left ⋈ right on ``on_column`` within ``window.size_s`` of arrival (see module)."""

    KEEP = ("jk", "key", "value", "arrival_s")

    def __init__(self, model: WindowJoinOp) -> None:
        self.model = model
        self.size_s = model.window.size_s
        self.left = pd.DataFrame({c: pd.Series(dtype="float64") for c in self.KEEP})
        self.right = pd.DataFrame({c: pd.Series(dtype="float64") for c in self.KEEP})

    def _frame(self, rows: Columns) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "jk": rows[self.model.on_column],
                "key": rows["key"],
                "value": rows["value"],
                "arrival_s": rows["arrival_s"],
            }
        )

    def process(self, left_rows: Columns, right_rows: Columns) -> Outputs:
        new_left, new_right = self._frame(left_rows), self._frame(right_rows)
        matches = [
            self._match(new_left, pd.concat([self.right, new_right], ignore_index=True)),
            self._match(self.left, new_right),
        ]
        if len(new_left):
            self.left = pd.concat([self.left, new_left], ignore_index=True)
        if len(new_right):
            self.right = pd.concat([self.right, new_right], ignore_index=True)
        pairs = (
            pd.concat([m for m in matches if len(m)], ignore_index=True)
            if any(len(m) for m in matches)
            else None
        )
        if pairs is None:
            return Outputs(arrival_s=np.empty(0))
        return Outputs(
            arrival_s=np.maximum(pairs["arrival_s_l"], pairs["arrival_s_r"]).to_numpy(),
            key=pairs["key_l"].to_numpy(),
            value=pairs["value_l"].to_numpy(dtype=np.float64),
            value2=pairs["value_r"].to_numpy(dtype=np.float64),
        )

    def _match(self, left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
        if not len(left) or not len(right):
            return left.iloc[0:0]
        pairs = left.merge(right, on="jk", suffixes=("_l", "_r"))
        near = (pairs["arrival_s_l"] - pairs["arrival_s_r"]).abs() <= self.size_s
        return pairs[near]

    def evict(self, horizon_s: float) -> int:
        """Drop tuples that no tuple arriving at ``horizon_s`` or later can match."""
        limit = horizon_s - self.size_s
        before = len(self.left) + len(self.right)
        self.left = self.left[self.left["arrival_s"] >= limit]
        self.right = self.right[self.right["arrival_s"] >= limit]
        return before - len(self.left) - len(self.right)

    @property
    def state_size(self) -> int:
        return len(self.left) + len(self.right)

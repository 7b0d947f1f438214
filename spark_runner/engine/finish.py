"""A batch's collected rows → output tuples per query and exact counts per operator (no Spark).

The pipeline returns one row per tuple per node where it ended: an output of a stateless
query, an input parked at a window operator, a tuple a filter dropped or an edge shed
(statuses in :mod:`network`). From those and the source counts of the offsets:

- **outputs**: stateless outputs as they are; window operators finished here
  (:mod:`stateful`);
- **counts** per node, bottom-up: a stateless node *passed* as many tuples as the copies
  that reached its first route's destination (plus the ones shed on that edge), and
  *reached* ``passed + dropped``; a window operator reached what was parked there and
  passed its outputs. Selectivity = passed / reached.

Counts are exact: every tuple that entered Spark is accounted for at exactly one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from spark_runner.engine.network import (
    FILTERED,
    LEFT,
    OUTPUT,
    PARKED,
    RIGHT,
    SHED,
    NetworkPlan,
)
from spark_runner.engine.offsets import BatchRecord
from spark_runner.engine.stateful import Outputs, WindowAggregate, WindowJoin
from spark_runner.scenario.models import WindowAggregateOp, WindowJoinOp

STATUSES = 8


@dataclass
class NodeCounts:
    """Per node (indexed like ``NetworkPlan.nodes``) in one batch."""

    reached: np.ndarray
    passed: np.ndarray
    shed: np.ndarray
    """Copies shed on the edge into the node (by its owner class)."""

    def selectivity(self) -> dict[int, float]:
        return {
            int(i): float(self.passed[i] / self.reached[i])
            for i in np.flatnonzero(self.reached > 0)
        }


@dataclass
class FinishedBatch:
    """What one batch produced."""

    counts: NodeCounts
    outputs: dict[int, Outputs] = field(default_factory=dict)
    """Per output node, its output tuples."""
    state_size: int = 0


def _column(table: pa.Table, name: str) -> np.ndarray:
    col = table.column(name)
    if col.null_count:
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    return np.asarray(col.to_numpy(zero_copy_only=False))


class BatchFinisher:
    """Holds the window state of a run and finishes its batches in order."""

    def __init__(self, plan: NetworkPlan) -> None:
        self.plan = plan
        self.aggregates: dict[int, WindowAggregate] = {}
        self.joins: dict[int, WindowJoin] = {}
        for n in plan.nodes:
            if isinstance(n.model, WindowAggregateOp):
                self.aggregates[n.index] = WindowAggregate(n.model)
            elif isinstance(n.model, WindowJoinOp):
                self.joins[n.index] = WindowJoin(n.model)
        self._upstream_points = {i: self._points_above(i) for i in (*self.aggregates, *self.joins)}

    def _points_above(self, index: int) -> tuple[int, ...]:
        seen, stack, found = set(), [index], []
        parents = self.plan.graph.parents
        while stack:
            i = stack.pop()
            for p in parents[i]:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
                    point = self.plan.nodes[p].point
                    if point is not None:
                        found.append(point)
        return tuple(sorted(found))

    def finish(self, table: pa.Table, record: BatchRecord) -> FinishedBatch:
        plan = self.plan
        n = len(plan.nodes)
        node = _column(table, "node").astype(np.int64) if table.num_rows else np.empty(0, np.int64)
        status = _column(table, "status").astype(np.int64) if table.num_rows else node
        side = _column(table, "side").astype(np.int64) if table.num_rows else node
        by_status = np.bincount(node * STATUSES + status, minlength=n * STATUSES).reshape(
            n, STATUSES
        )
        parked_side = np.zeros((n, 2), dtype=np.int64)
        shed_side = np.zeros((n, 2), dtype=np.int64)
        for arr, wanted in ((parked_side, PARKED), (shed_side, SHED)):
            sel = status == wanted
            if sel.any():
                np.add.at(arr, (node[sel], side[sel]), 1)
        columns = {name: _column(table, name) for name in table.column_names}
        outputs: dict[int, Outputs] = {}
        for out_node in plan.outputs:
            i = out_node.index
            if out_node.kind == "window_aggregate":
                mask = (node == i) & (status == PARKED)
                outputs[i] = self.aggregates[i].process(_subset(columns, mask))
            elif out_node.kind == "window_join":
                rows = (node == i) & (status == PARKED)
                outputs[i] = self.joins[i].process(
                    _subset(columns, rows & (side == LEFT)),
                    _subset(columns, rows & (side == RIGHT)),
                )
            else:
                mask = (node == i) & (status == OUTPUT)
                sub = _subset(columns, mask)
                outputs[i] = Outputs(arrival_s=sub["arrival_s"], key=sub["key"], value=sub["value"])
        counts = self._counts(record, by_status, parked_side, shed_side, outputs)
        heads = [p.head_s for p in record.end.points]
        for i, agg in self.aggregates.items():
            if self._upstream_points[i]:
                agg.evict(min(heads[p] for p in self._upstream_points[i]))
        for i, join in self.joins.items():
            if self._upstream_points[i]:
                join.evict(min(heads[p] for p in self._upstream_points[i]))
        size = sum(len(a.state) for a in self.aggregates.values()) + sum(
            j.state_size for j in self.joins.values()
        )
        return FinishedBatch(counts=counts, outputs=outputs, state_size=size)

    def _counts(
        self,
        record: BatchRecord,
        by_status: np.ndarray,
        parked_side: np.ndarray,
        shed_side: np.ndarray,
        outputs: Mapping[int, Outputs],
    ) -> NodeCounts:
        plan = self.plan
        n = len(plan.nodes)
        reached = np.zeros(n, dtype=np.int64)
        passed = np.zeros(n, dtype=np.int64)
        shed = by_status[:, SHED].copy()
        for i in reversed(plan.graph.order):
            nd = plan.nodes[i]
            if nd.stateful:
                reached[i] = parked_side[i].sum()
                passed[i] = len(outputs[i]) if i in outputs else 0
                continue
            first = nd.routes[0] if nd.routes else None
            if first is None:
                through = 0
            elif first.status == OUTPUT:
                through = int(by_status[i, OUTPUT])
            elif plan.nodes[first.child].stateful:
                c, s = first.child, first.side
                through = int(parked_side[c, s] + shed_side[c, s])
            else:
                through = int(reached[first.child] + shed[first.child])
            passed[i] = through
            if nd.point is not None:
                reached[i] = record.delta(nd.point).kept
            else:
                reached[i] = through + int(by_status[i, FILTERED])
        return NodeCounts(reached=reached, passed=passed, shed=shed)


def _subset(columns: Mapping[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {name: values[mask] for name, values in columns.items()}


OUTPUT_SCHEMA = pa.schema(
    [
        pa.field("batch_id", pa.int64()),
        pa.field("class", pa.string()),
        pa.field("query", pa.string()),
        pa.field("key", pa.float64()),
        pa.field("value", pa.float64()),
        pa.field("value2", pa.float64()),
        pa.field("group", pa.string()),
        pa.field("window_start_s", pa.float64()),
        pa.field("window_end_s", pa.float64()),
        pa.field("arrival_s", pa.float64()),
        pa.field("output_s", pa.float64()),
    ]
)
"""The sink's rows: every query's output tuples in one schema (absent fields null)."""


def output_table(
    plan: NetworkPlan, batch_id: int, outputs: Mapping[int, Outputs], output_s: float
) -> pa.Table:
    """All output tuples of a batch as one table (:data:`OUTPUT_SCHEMA`)."""
    parts: list[pa.Table] = []
    for i, out in outputs.items():
        rows = len(out)
        if not rows:
            continue
        owner = plan.nodes[i].output
        assert owner is not None

        def col(values: np.ndarray | None, rows: int = rows) -> pa.Array:
            if values is None:
                return pa.nulls(rows, pa.float64())
            return pa.array(np.asarray(values, dtype=np.float64), from_pandas=True)

        parts.append(
            pa.table(
                [
                    pa.array(np.full(rows, batch_id, dtype=np.int64)),
                    pa.array([owner[0]] * rows, pa.string()),
                    pa.array([owner[1]] * rows, pa.string()),
                    col(out.key),
                    col(out.value),
                    col(out.value2),
                    pa.array(out.group, pa.string())
                    if out.group is not None
                    else pa.nulls(rows, pa.string()),
                    col(out.window_start_s),
                    col(out.window_end_s),
                    col(out.arrival_s),
                    pa.array(np.full(rows, output_s)),
                ],
                schema=OUTPUT_SCHEMA,
            )
        )
    if not parts:
        return OUTPUT_SCHEMA.empty_table()
    return pa.concat_tables(parts)

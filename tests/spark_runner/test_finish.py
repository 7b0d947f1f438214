"""Exact per-operator counts from the rows a batch brought back."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from spark_runner.engine.finish import BatchFinisher, output_table
from spark_runner.engine.network import FILTERED, OUTPUT, PARKED, SHED, compile_network
from spark_runner.engine.offsets import BatchRecord, PointState, SourceOffset
from spark_runner.scenario import Scenario


def table(rows: list[tuple[int, int, int, float]]) -> pa.Table:
    """(node, status, side, arrival_s) rows with the pipeline's columns."""
    n = len(rows)
    return pa.table(
        {
            "point": np.zeros(n, dtype=np.int32),
            "seq": np.arange(n),
            "key": np.arange(n) % 3,
            "value": np.full(n, 0.5),
            "v10": np.full(n, 5.0),
            "arrival_s": np.array([r[3] for r in rows]),
            "node": np.array([r[0] for r in rows], dtype=np.int32),
            "side": np.array([r[2] for r in rows], dtype=np.int32),
            "status": np.array([r[1] for r in rows], dtype=np.int32),
        }
    )


def record(kept: list[int]) -> BatchRecord:
    start = SourceOffset(0, 0, tuple(PointState() for _ in kept))
    end = SourceOffset(
        0, 10**6, tuple(PointState(arrived=k, taken=k, kept=k, head_s=1.0) for k in kept)
    )
    return BatchRecord(0, start, end)


def test_counts_and_outputs(two_classes: Scenario) -> None:
    plan = compile_network(two_classes)
    ids = {n.op_id: n.index for n in plan.nodes}
    f, p = ids["gold.q.0.filter"], ids["gold.q.1.project"]
    m, a = ids["bronze.q.0.map"], ids["bronze.q.1.window_aggregate"]
    rows = (
        [(f, FILTERED, 0, 0.1)] * 6  # gold: 10 in, filter drops 6
        + [(p, OUTPUT, 0, 0.2)] * 4  # the 4 others are outputs
        + [(a, PARKED, 0, 0.3)] * 5  # bronze: 5 through the map into the aggregate
    )
    finished = BatchFinisher(plan).finish(table(rows), record([10, 5]))
    c = finished.counts
    assert (c.reached[f], c.passed[f]) == (10, 4)
    assert (c.reached[p], c.passed[p]) == (4, 4)
    assert (c.reached[m], c.passed[m]) == (5, 5)
    assert c.reached[a] == 5
    assert c.reached[plan.points[0].node] == 10
    assert c.selectivity()[f] == 0.4
    assert len(finished.outputs[p]) == 4
    # the aggregate emitted one update (one window, keys 0..2 → 3 groups at most)
    assert 1 <= len(finished.outputs[a]) <= 3
    sink = output_table(plan, 0, finished.outputs, 1.0)
    assert set(sink.column("class").to_pylist()) == {"gold", "bronze"}
    assert sink.num_rows == 4 + len(finished.outputs[a])


def test_copies_shed_on_an_edge_count_for_the_lower_class(sharing: Scenario) -> None:
    plan = compile_network(sharing)
    seg_last = next(n for n in plan.nodes if n.op_id == "seg.seg13.1.project")
    into3 = next(r.child for r in seg_last.routes if plan.nodes[r.child].owner == "class3")
    into1 = next(r.child for r in seg_last.routes if plan.nodes[r.child].owner == "class1")
    seg_first = next(n for n in plan.nodes if n.op_id == "seg.seg13.0.filter")
    rows = (
        [(into1, PARKED, 0, 0.1)] * 8
        + [(into3, PARKED, 0, 0.1)] * 5
        + [(into3, SHED, 0, 0.1)] * 3
        + [(seg_first.index, FILTERED, 0, 0.1)] * 2
    )
    kept = [0] * len(plan.points)
    kept[plan.nodes[seg_first.index - 1].point or 0] = 10
    finished = BatchFinisher(plan).finish(table(rows), record(kept))
    c = finished.counts
    assert c.shed[into3] == 3 and c.reached[into3] == 5
    assert (c.reached[seg_first.index], c.passed[seg_first.index]) == (10, 8)
    assert c.passed[seg_last.index] == 8

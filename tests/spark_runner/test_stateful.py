"""Window aggregates and window joins finished on the driver, batch by batch."""

from __future__ import annotations

import numpy as np
import pytest

from spark_runner.engine.stateful import WindowAggregate, WindowJoin
from spark_runner.scenario.models import JoinWindow, Window, WindowAggregateOp, WindowJoinOp


def agg(
    function: str = "count", size: float = 2.0, slide: float | None = None, **kw: object
) -> WindowAggregate:
    window = Window(type="sliding", size_s=size, slide_s=slide) if slide else Window(size_s=size)
    fields = {"kind": "window_aggregate", "window": window, "function": function, **kw}
    return WindowAggregate(WindowAggregateOp.model_validate(fields))


def rows(t: list[float], key: list[int], value: list[float] | None = None) -> dict[str, np.ndarray]:
    return {
        "arrival_s": np.array(t, dtype=float),
        "key": np.array(key, dtype=float),
        "value": np.array(value if value is not None else [0.5] * len(t), dtype=float),
    }


def by_window_key(out: object) -> dict[tuple[float, float], tuple[float, float]]:
    return {
        (float(s), float(k)): (float(v), float(a))
        for s, k, v, a in zip(out.window_start_s, out.key, out.value, out.arrival_s, strict=True)  # type: ignore[attr-defined]
    }


def test_tumbling_count_emits_incremental_updates_with_the_earliest_input() -> None:
    op = agg("count", size=2.0)
    first = by_window_key(op.process(rows([0.1, 0.5, 1.9, 2.2], [1, 1, 2, 1])))
    assert first == {(0.0, 1.0): (2, 0.1), (0.0, 2.0): (1, 1.9), (2.0, 1.0): (1, 2.2)}
    # the next batch updates window [0, 2) of key 1 again: the total so far, and the
    # earliest input *of this batch* is what its response time is measured from
    second = by_window_key(op.process(rows([1.95], [1])))
    assert second == {(0.0, 1.0): (3, 1.95)}


@pytest.mark.parametrize(
    ("function", "expected"), [("sum", 0.9), ("avg", 0.3), ("min", 0.1), ("max", 0.5)]
)
def test_functions_over_batches(function: str, expected: float) -> None:
    op = agg(function, size=10.0)
    op.process(rows([1.0, 2.0], [7, 7], [0.1, 0.3]))
    [(value, _)] = by_window_key(op.process(rows([3.0], [7], [0.5]))).values()
    assert value == pytest.approx(expected)


def test_sliding_window_membership() -> None:
    op = agg("count", size=3.0, slide=1.0)
    out = by_window_key(op.process(rows([5.5], [0])))
    # 5.5 lies in [3, 6), [4, 7) and [5, 8)
    assert sorted(s for s, _ in out) == [3.0, 4.0, 5.0]


def test_eviction_keeps_windows_that_can_still_change() -> None:
    op = agg("count", size=2.0)
    op.process(rows([0.5, 2.5, 4.5], [0, 0, 0]))
    assert op.evict(horizon_s=4.0) == 2  # [0, 2) and [2, 4) are final
    assert [k for k, _ in op.state] == [2]


def test_grouping_by_several_columns_names_the_group() -> None:
    op = agg("count", size=1.0, group_by=["key", "value"])
    out = op.process(rows([0.1, 0.2], [1, 1], [0.25, 0.75]))
    assert sorted(out.group or []) == ["1|0.25", "1|0.75"]


def join(size: float = 1.0) -> WindowJoin:
    return WindowJoin(WindowJoinOp(kind="window_join", right="r", window=JoinWindow(size_s=size)))


def pairs(out: object) -> set[tuple[float, float, float]]:
    return {
        (float(v), float(w), float(a))
        for v, w, a in zip(out.value, out.value2, out.arrival_s, strict=True)  # type: ignore[attr-defined]
    }


def test_join_matches_within_the_window_once_when_the_second_tuple_arrives() -> None:
    op = join(size=1.0)
    out = op.process(rows([10.0, 10.2], [1, 2], [0.1, 0.2]), rows([10.5], [1], [0.9]))
    assert pairs(out) == {(0.1, 0.9, 10.5)}
    # a later right tuple matches the stored left tuple; the arrival is the later one
    out = op.process(rows([], []), rows([10.9, 11.5], [1, 1], [0.8, 0.7]))
    assert pairs(out) == {(0.1, 0.8, 10.9)}  # 11.5 is 1.5 s after 10.0: no match
    # nothing is emitted twice
    assert len(op.process(rows([], []), rows([], []))) == 0


def test_join_state_is_evicted_when_nothing_can_match_it() -> None:
    op = join(size=1.0)
    op.process(rows([1.0, 5.0], [1, 1]), rows([1.2], [1]))
    assert op.state_size == 3
    assert op.evict(horizon_s=3.0) == 2  # only tuples at or after 2.0 may still match
    assert op.state_size == 1

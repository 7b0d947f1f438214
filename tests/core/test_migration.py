"""UniMiCo's hand-off: the migration timestamp, and outputs equal to an uninterrupted run's
for sliding-window aggregates and joins, with no state moved."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_runner.core.errors import ParameterError
from spark_runner.core.migration import HandOff, migration_timestamp, tuple_window_delta

Row = tuple[int, int, int]  # (timestamp, key, value)


def test_the_thesis_example_hands_off_after_the_window_that_starts_at_3() -> None:
    """Figure 34: length 4, slide 2; the origin last emitted w1 (start 1), the target
    first read the tuple of timestamp 4: the origin finishes w2 (start 3), the target
    starts with w3 (start 5)."""
    hand_off = HandOff.plan(length=4, slide=2, ts_start=4, ts_last_w=1)
    assert hand_off.ts_mi == 3 and hand_off.activation == 5 and hand_off.origin_until == 7
    assert hand_off.read_twice == 2


def test_the_migration_timestamp_follows_equation_7_1() -> None:
    assert migration_timestamp(ts_start=3, ts_last_w=6, slide=2) == 6  # target read early
    assert migration_timestamp(ts_start=10, ts_last_w=4, slide=2) == 8  # on the grid: δ = s
    assert migration_timestamp(ts_start=11, ts_last_w=4, slide=3) == 10  # δ = 7 % 3
    with pytest.raises(ParameterError, match="slide"):
        migration_timestamp(1, 0, 0)


def test_the_tuple_based_delta_follows_equation_7_2() -> None:
    """Figure 35: 3 tuples between, slide 2: (3 + 1) % 2 = 0, so δ = s = 2."""
    assert tuple_window_delta(between=3, slide=2) == 2
    assert tuple_window_delta(between=4, slide=3) == 2
    with pytest.raises(ParameterError, match="between"):
        tuple_window_delta(-1, 2)


def test_a_window_shorter_than_its_slide_is_refused() -> None:
    with pytest.raises(ParameterError, match="length"):
        HandOff(length=1, slide=2, ts_mi=2)


def windows(rows: Iterable[Row], length: int, slide: int) -> dict[tuple[int, int], int]:
    """Sum of values per (window start, key) over the windows each row falls in."""
    out: dict[tuple[int, int], int] = defaultdict(int)
    for ts, key, value in rows:
        start = (ts // slide) * slide
        while start > ts - length:
            if start >= 0:
                out[(start, key)] += value
            start -= slide
    return dict(out)


def pairs(left: Sequence[Row], right: Sequence[Row], length: int, slide: int) -> set[Row]:
    """Join pairs ``(ts_left, ts_right, key)`` of equal keys sharing at least one window."""
    found = set()
    for ts_a, key_a, _ in left:
        for ts_b, key_b, _ in right:
            # the latest window that holds the earlier tuple holds the later one too
            shared = (min(ts_a, ts_b) // slide) * slide > max(ts_a, ts_b) - length
            if key_a == key_b and shared:
                found.add((ts_a, ts_b, key_a))
    return found


rows_strategy = st.lists(
    st.tuples(st.integers(0, 120), st.integers(0, 3), st.integers(1, 9)), max_size=60
)


@given(
    rows_strategy,
    rows_strategy,
    st.integers(1, 6),
    st.integers(1, 4),
    st.integers(0, 100),
    st.integers(0, 30),
)
def test_origin_and_target_together_emit_what_an_uninterrupted_run_emits(
    left: list[Row], right: list[Row], slide: int, spans: int, ts_start: int, back: int
) -> None:
    length = slide * spans
    ts_last_w = max(0, ts_start - back) // slide * slide
    hand_off = HandOff.plan(length, slide, ts_start, ts_last_w)
    origin_rows = [r for r in left if hand_off.origin_reads(r[0])]
    target_rows = [r for r in left if hand_off.target_reads(r[0])]  # no state handed over

    whole = windows(left, length, slide)
    origin = {
        w: v for w, v in windows(origin_rows, length, slide).items() if hand_off.origin_window(w[0])
    }
    target = {
        w: v for w, v in windows(target_rows, length, slide).items() if hand_off.target_window(w[0])
    }
    assert origin.keys().isdisjoint(target.keys())
    assert {**origin, **target} == whole

    origin_right = [r for r in right if hand_off.origin_reads(r[0])]
    target_right = [r for r in right if hand_off.target_reads(r[0])]
    origin_pairs = {
        p
        for p in pairs(origin_rows, origin_right, length, slide)
        if hand_off.origin_emits_pair(p[0], p[1])
    }
    target_pairs = pairs(target_rows, target_right, length, slide)
    assert origin_pairs.isdisjoint(target_pairs)
    assert origin_pairs | target_pairs == pairs(left, right, length, slide)
    # window recreation: the origin stops within one window length of the target's
    # first tuple, and the two read the same stretch for length − slide
    if ts_start > ts_last_w:
        assert hand_off.origin_until - ts_start <= length
    assert hand_off.read_twice == length - slide

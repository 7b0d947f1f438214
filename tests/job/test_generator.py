"""The synthetic stream's generation functions, without Spark."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_runner.job.generator import (
    ARROW_SCHEMA,
    US_PER_S,
    ClassStream,
    generate,
    seq_range,
    tuples_before,
    unit_values,
)

ORIGIN_US = 1_763_700_000_000_000
GOLD = ClassStream(class_id=0, name="gold", rate_per_s=200.0)
BRONZE = ClassStream(class_id=1, name="bronze", rate_per_s=0.3)


def table(stream: ClassStream, start_us: int, end_us: int, **kwargs: int) -> pa.Table:
    seqs = seq_range(stream, ORIGIN_US, start_us, end_us)
    return pa.Table.from_batches(
        list(generate(stream, ORIGIN_US, seqs, **kwargs)), schema=ARROW_SCHEMA
    )


def test_same_range_gives_the_same_tuples() -> None:
    end_us = ORIGIN_US + 3 * US_PER_S
    assert table(GOLD, ORIGIN_US, end_us).equals(table(GOLD, ORIGIN_US, end_us))


def test_values_depend_on_class_and_seq_only() -> None:
    # Generating [1 s, 2 s) alone or as part of [0 s, 3 s) gives identical rows.
    part = table(GOLD, ORIGIN_US + US_PER_S, ORIGIN_US + 2 * US_PER_S)
    whole = table(GOLD, ORIGIN_US, ORIGIN_US + 3 * US_PER_S)
    assert part.equals(whole.slice(200, 200))

    other_name = ClassStream(class_id=0, name="silver", rate_per_s=200.0)
    assert not np.array_equal(
        table(other_name, ORIGIN_US, ORIGIN_US + US_PER_S)["value"].to_numpy(),
        table(GOLD, ORIGIN_US, ORIGIN_US + US_PER_S)["value"].to_numpy(),
    )


def test_rate_and_columns() -> None:
    rows = table(GOLD, ORIGIN_US, ORIGIN_US + 10 * US_PER_S)
    assert rows.num_rows == 2000
    assert rows.schema == ARROW_SCHEMA
    assert set(rows["class_name"].to_pylist()) == {"gold"}
    assert set(rows["class_id"].to_pylist()) == {0}
    assert rows["seq"].to_pylist() == list(range(2000))
    arrivals = rows["arrival_s"].to_numpy()
    assert arrivals[0] == ORIGIN_US / US_PER_S
    # Epoch seconds as doubles resolve ~0.24 µs; that is the only error allowed.
    assert np.allclose(np.diff(arrivals), 1 / 200.0, rtol=0, atol=1e-6)

    values = rows["value"].to_numpy()
    assert ((values >= 0) & (values < 1)).all()
    # Uniform enough that a selectivity of 0.5 keeps about half.
    assert 0.45 < (values < 0.5).mean() < 0.55


def test_slow_class_has_fractional_rate() -> None:
    rows = table(BRONZE, ORIGIN_US, ORIGIN_US + 100 * US_PER_S)
    assert rows.num_rows == 30
    assert rows["arrival_s"].to_numpy()[1] == pytest.approx(ORIGIN_US / US_PER_S + 1 / 0.3)


def test_boundaries_are_half_open() -> None:
    # Tuple 1 of a 2/s stream is scheduled exactly at origin + 0.5 s.
    stream = ClassStream(class_id=0, name="c", rate_per_s=2.0)
    half_us = ORIGIN_US + US_PER_S // 2
    assert seq_range(stream, ORIGIN_US, ORIGIN_US, half_us) == range(0, 1)
    assert seq_range(stream, ORIGIN_US, half_us, half_us + 1) == range(1, 2)
    assert seq_range(stream, ORIGIN_US, ORIGIN_US, ORIGIN_US) == range(0, 0)


def test_nothing_before_the_origin_and_nothing_at_rate_zero() -> None:
    assert tuples_before(100.0, ORIGIN_US, ORIGIN_US - 5 * US_PER_S) == 0
    idle = ClassStream(class_id=2, name="idle", rate_per_s=0.0)
    assert len(seq_range(idle, ORIGIN_US, ORIGIN_US, ORIGIN_US + 60 * US_PER_S)) == 0
    assert list(generate(idle, ORIGIN_US, range(0))) == []


def test_record_batches_are_bounded() -> None:
    batches = list(generate(GOLD, ORIGIN_US, range(0, 2500), max_rows=1000))
    assert [b.num_rows for b in batches] == [1000, 1000, 500]
    with pytest.raises(ValueError, match="max_rows"):
        list(generate(GOLD, ORIGIN_US, range(0, 10), max_rows=0))


def test_invalid_rate_is_refused_with_the_class_name() -> None:
    with pytest.raises(ValueError, match=r"'gold'.*finite number >= 0"):
        ClassStream(class_id=0, name="gold", rate_per_s=float("nan"))
    with pytest.raises(ValueError, match="rate_per_s"):
        ClassStream(class_id=0, name="gold", rate_per_s=-1.0)


@given(
    rate_per_s=st.floats(min_value=0.01, max_value=50_000, allow_nan=False),
    cuts_us=st.lists(st.integers(min_value=0, max_value=600 * US_PER_S), min_size=1, max_size=8),
)
def test_consecutive_ranges_partition_the_stream(rate_per_s: float, cuts_us: list[int]) -> None:
    """However a time span is cut into batches, each tuple is in exactly one batch,
    and every tuple's arrival lies in its batch's [start, end)."""
    stream = ClassStream(class_id=0, name="c", rate_per_s=rate_per_s)
    bounds = [ORIGIN_US, *sorted(ORIGIN_US + c for c in cuts_us)]
    next_seq = 0
    for start_us, end_us in itertools.pairwise(bounds):
        seqs = seq_range(stream, ORIGIN_US, start_us, end_us)
        assert seqs.start == next_seq  # no gap, no overlap
        next_seq = seqs.stop
        if len(seqs):
            # Scheduled instants relative to the origin, in µs, up to float rounding.
            assert seqs[0] * US_PER_S / rate_per_s >= (start_us - ORIGIN_US) - 1e-6
            assert seqs[-1] * US_PER_S / rate_per_s < (end_us - ORIGIN_US) + 1e-6
    assert next_seq == tuples_before(rate_per_s, ORIGIN_US, bounds[-1])


@given(st.lists(st.integers(min_value=0, max_value=2**62), min_size=1, max_size=50))
def test_unit_values_stay_in_unit_interval(seqs: list[int]) -> None:
    values = unit_values(0xDEADBEEF, np.array(seqs, dtype=np.int64))
    assert ((values >= 0) & (values < 1)).all()

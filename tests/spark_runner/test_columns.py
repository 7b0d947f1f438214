"""Generated column values: deterministic, distributed as declared; broker text and file
columns parsed, a whole column as each value alone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from spark_runner.engine.sources.columns import (
    ColumnSpec,
    arrow_array,
    column_values,
    generate,
    parse,
)
from spark_runner.scenario.columns import ZipfGen

SEQS = np.arange(200_000, dtype=np.int64)
ARRIVALS = 1_800_000_000.0 + SEQS / 1000.0


def values(column: ColumnSpec, seqs: np.ndarray = SEQS) -> np.ndarray:
    return generate(column, 7, "trades", seqs, ARRIVALS[: len(seqs)])


def test_values_depend_on_seed_stream_column_and_seq_only() -> None:
    column = ColumnSpec("amount", "double", "normal", {"mean": 5.0, "sd": 2.0})
    part = generate(column, 7, "trades", SEQS[1000:2000], ARRIVALS[1000:2000])
    assert np.array_equal(part, values(column)[1000:2000])
    assert not np.array_equal(generate(column, 8, "trades", SEQS, ARRIVALS), values(column))
    other = ColumnSpec("price", "double", "normal", {"mean": 5.0, "sd": 2.0})
    assert not np.array_equal(values(other), values(column))


def test_zipf_keys_are_skewed_as_declared() -> None:
    column = ColumnSpec("account", "long", "zipf", {"n": 50, "s": 1.2})
    counts = np.bincount(values(column), minlength=50) / len(SEQS)
    expected = np.array(ZipfGen(kind="zipf", n=50, s=1.2).weights())
    assert np.abs(counts - expected).max() < 0.005
    assert counts[0] > 10 * counts[20]  # the head key is hot
    names = generate(ColumnSpec("k", "string", "zipf", {"n": 3}), 7, "t", SEQS[:5], ARRIVALS[:5])
    assert set(names.tolist()) <= {"k0", "k1", "k2"}


def test_normal_uniform_choice_sequence_and_arrival() -> None:
    normal = values(ColumnSpec("x", "double", "normal", {"mean": 80.0, "sd": 30.0}))
    assert normal.mean() == pytest.approx(80.0, abs=0.5)
    assert normal.std() == pytest.approx(30.0, abs=0.5)
    ints = values(ColumnSpec("x", "long", "uniform", {"min": 3, "max": 7}))
    assert set(np.unique(ints).tolist()) == {3, 4, 5, 6, 7}
    doubles = values(ColumnSpec("x", "double", "uniform", {"min": -1.0, "max": 1.0}))
    assert doubles.min() >= -1.0 and doubles.max() < 1.0
    choice = values(ColumnSpec("x", "string", "choice", {"values": ["a", "b"], "weights": [3, 1]}))
    assert (choice == "a").mean() == pytest.approx(0.75, abs=0.01)
    assert np.array_equal(values(ColumnSpec("x", "long", "sequence", {})), SEQS)
    lagged = values(ColumnSpec("x", "timestamp", "arrival", {"lag_max_s": 2.0}))
    lag_s = ARRIVALS - lagged / 1e6
    assert lag_s.min() >= -1e-6 and lag_s.max() <= 2.0 + 1e-6 and lag_s.mean() > 0.9
    assert arrow_array(ColumnSpec("x", "timestamp", "arrival", {}), lagged[:3]).type.unit == "us"


@pytest.mark.parametrize(
    ("column_type", "raw", "expected"),
    [
        ("long", b"42", 42),
        ("long", "42.0", 42),
        ("long", "4.5", None),
        ("double", "1e3", 1000.0),
        ("double", "nan", None),
        ("double", "abc", None),
        ("boolean", "true", True),
        ("boolean", 0, False),
        ("timestamp", "1800000000.5", 1_800_000_000_500_000),
        ("timestamp", "2027-01-15T08:00:00.5+00:00", 1_800_000_000_500_000),
        ("timestamp", "2027-01-15T09:00:00.5+01:00", 1_800_000_000_500_000),
        ("timestamp", "2027-01-15 08:00:00.5", 1_800_000_000_500_000),  # naive: UTC
        ("timestamp", "2027-01-15T08:00:00.5Z", 1_800_000_000_500_000),
        ("timestamp", "yesterday", None),
        ("string", 12, "12"),
        ("double", None, None),
    ],
)
def test_broker_text_reads_as_the_columns_type_or_null(
    column_type: str, raw: object, expected: object
) -> None:
    column = ColumnSpec("x", column_type, "uniform", {})
    assert parse(column, raw) == expected
    assert as_python(column_values(column, [raw])) == [expected]  # a column of one


TYPED = {
    "long": pa.array([3, None, -7], pa.int64()),
    "double": pa.array([0.5, float("nan"), None, 4.0, float("inf"), -2.0]),
    "boolean": pa.array([True, None, False]),
    "timestamp": pa.array([datetime(2027, 1, 15, 8, 0, 0, 500_000), None], pa.timestamp("ns")),
    "string": pa.array(["k1", None, " 2.5 ", "1", "TRUE", "1e3", "4.0", "x", "1800000000.5"]),
    "binary": pa.array([b"12", b"0.5", None]),
    "null": pa.nulls(2),
}


@pytest.mark.parametrize("column_type", ["long", "double", "boolean", "timestamp", "string"])
@pytest.mark.parametrize("raw", TYPED, ids=str)
def test_a_whole_column_reads_as_each_of_its_values_alone(column_type: str, raw: str) -> None:
    """Files' typed columns and brokers' texts, whichever way a column is read."""
    column = ColumnSpec("x", column_type, "uniform", {})
    one_by_one = [parse(column, v) for v in TYPED[raw].to_pylist()]
    assert as_python(column_values(column, TYPED[raw])) == one_by_one
    assert as_python(column_values(column, TYPED[raw].to_pylist())) == one_by_one


def as_python(values: pa.Array) -> list[Any]:
    """Values as :func:`parse` gives them (timestamps in epoch microseconds)."""
    if pa.types.is_timestamp(values.type):
        values = values.cast(pa.int64())
    return list(values.to_pylist())

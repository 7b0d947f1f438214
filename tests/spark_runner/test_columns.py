"""Generated column values: deterministic, distributed as declared; broker text parsed."""

from __future__ import annotations

import numpy as np
import pytest

from spark_runner.engine.columns import ColumnSpec, arrow_array, generate, parse
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
    assert parse(ColumnSpec("x", column_type, "uniform", {}), raw) == expected

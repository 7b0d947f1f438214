"""Filter predicates: grammar and the selectivity the simulator derives from them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_runner.scenario.columns import default_columns
from spark_runner.scenario.predicates import PredicateError, parse_predicate


@pytest.mark.parametrize(
    ("text", "keys", "expected"),
    [
        ("value < 0.5", 100, 0.5),
        ("value >= 0.25 and value < 0.75", 100, 0.5),
        ("value < 1.0", 100, 1.0),
        ("key < 50", 100, 0.5),
        ("key <= 49 AND value < 0.5", 100, 0.25),
        ("key = 3", 10, 0.1),
        ("key != 3", 10, 0.9),
        ("value > 0.9 and value < 0.1", 100, 0.0),
        ("value == 0.5", 100, 0.0),
    ],
)
def test_selectivity(text: str, keys: int, expected: float) -> None:
    assert parse_predicate(text).selectivity(default_columns(keys)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "is empty"),
        ("and < 1", "expected a column name"),
        ("value 0.5", "expected a comparison operator"),
        ("value < high", "expected a number"),
        ("value < 0.5 or key < 3", "expected 'and'"),
        ("value < 0.5 and", "ends early"),
        ("value < 0.5; drop", "cannot read"),
    ],
)
def test_errors_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(PredicateError, match=fragment):
        parse_predicate(text)


comparison = st.tuples(
    st.sampled_from(["value", "key"]),
    st.sampled_from(["<", "<=", ">", ">=", "=", "!="]),
    st.floats(min_value=-2, max_value=120, allow_nan=False).map(lambda x: round(x, 2)),
)


@given(st.lists(comparison, min_size=1, max_size=4), st.integers(min_value=1, max_value=200))
def test_selectivity_is_a_fraction_and_and_only_narrows(
    parts: list[tuple[str, str, float]], keys: int
) -> None:
    texts = [f"{c} {op} {n}" for c, op, n in parts]
    columns = default_columns(keys)
    whole = parse_predicate(" and ".join(texts)).selectivity(columns)
    assert 0.0 <= whole <= 1.0
    for t in texts:
        assert whole <= parse_predicate(t).selectivity(columns) + 1e-12

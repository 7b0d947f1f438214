"""Filter predicates: a small, SQL-compatible language and the selectivity it implies.

Grammar (case-insensitive keywords)::

    predicate  := comparison ("and" comparison)*
    comparison := column op number
    column     := "value" | "key"
    op         := "<" | "<=" | ">" | ">=" | "=" | "==" | "!="

The text is valid Spark SQL, so the Spark engine evaluates it as is. The simulator needs
only the fraction of tuples it keeps: generated tuples carry ``value`` uniform in [0, 1)
and ``key`` uniform over the integers ``0 .. keys-1`` (independent), so the selectivity of
a conjunction is the product, per column, of the measure of the interval it leaves.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

COLUMNS = ("value", "key")
_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|-?\.\d+(?:[eE][-+]?\d+)?)"
    r"|(?P<op><=|>=|==|!=|<|>|=)|(?P<word>[A-Za-z_][A-Za-z_0-9]*))"
)


class PredicateError(ValueError):
    """The predicate text does not follow the grammar (message says where)."""


@dataclass(frozen=True, slots=True)
class Comparison:
    column: str
    op: str
    number: float


@dataclass(frozen=True, slots=True)
class Predicate:
    """A parsed conjunction of comparisons."""

    text: str
    comparisons: tuple[Comparison, ...]

    @property
    def sql(self) -> str:
        """The predicate rebuilt from its parsed parts: the only text handed to Spark."""
        return " AND ".join(f"{c.column} {c.op} {c.number!r}" for c in self.comparisons)

    def selectivity(self, keys: int) -> float:
        """Fraction of generated tuples kept (``keys`` distinct keys, ``value`` in [0, 1))."""
        return _value_fraction(self.comparisons) * _key_fraction(self.comparisons, keys)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise PredicateError(f"cannot read {stripped[pos:]!r} (position {pos + 1})")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def parse_predicate(text: str) -> Predicate:
    """Parse ``text`` or raise :class:`PredicateError` with a readable reason."""
    tokens = _tokens(text)
    if not tokens:
        raise PredicateError("is empty; write e.g. 'value < 0.5'")
    comparisons: list[Comparison] = []
    i = 0
    early = "ends early; each comparison is 'column op number', e.g. 'value < 0.5'"
    while True:
        if i >= len(tokens):
            raise PredicateError(early)
        k1, col = tokens[i]
        if k1 != "word" or col.lower() not in COLUMNS:
            raise PredicateError(f"{col!r} is not a column; use one of {', '.join(COLUMNS)}")
        if i + 1 >= len(tokens):
            raise PredicateError(early)
        k2, op = tokens[i + 1]
        if k2 != "op":
            raise PredicateError(f"expected a comparison operator after {col!r}, got {op!r}")
        if i + 2 >= len(tokens):
            raise PredicateError(early)
        k3, num = tokens[i + 2]
        if k3 != "num":
            raise PredicateError(f"expected a number after {col!r} {op}, got {num!r}")
        number = float(num)
        if not math.isfinite(number):
            raise PredicateError(f"number {num!r} is out of range (it must be finite)")
        comparisons.append(Comparison(col.lower(), "==" if op == "=" else op, number))
        i += 3
        if i == len(tokens):
            break
        kind, word = tokens[i]
        if kind != "word" or word.lower() != "and":
            raise PredicateError(f"expected 'and' between comparisons, got {word!r}")
        i += 1
    return Predicate(text=text, comparisons=tuple(comparisons))


def _value_fraction(comparisons: tuple[Comparison, ...]) -> float:
    low, high = 0.0, 1.0
    for c in comparisons:
        if c.column != "value":
            continue
        if c.op in ("<", "<="):
            high = min(high, c.number)
        elif c.op in (">", ">="):
            low = max(low, c.number)
        elif c.op == "==":
            return 0.0  # a single point of a continuous uniform
        # "!=" removes a single point: the measure is unchanged
    return max(0.0, high - low)


def _key_fraction(comparisons: tuple[Comparison, ...], keys: int) -> float:
    if keys <= 0:
        return 0.0
    low, high = 0, keys - 1  # inclusive integer range
    excluded: set[int] = set()
    for c in comparisons:
        if c.column != "key":
            continue
        x = c.number
        if c.op == "<":
            high = min(high, math.ceil(x) - 1)
        elif c.op == "<=":
            high = min(high, math.floor(x))
        elif c.op == ">":
            low = max(low, math.floor(x) + 1)
        elif c.op == ">=":
            low = max(low, math.ceil(x))
        elif c.op == "==":
            if not float(x).is_integer():
                return 0.0
            low, high = max(low, int(x)), min(high, int(x))
        elif float(x).is_integer():
            excluded.add(int(x))
    if high < low:
        return 0.0
    count = high - low + 1 - sum(1 for e in excluded if low <= e <= high)
    return max(0, count) / keys

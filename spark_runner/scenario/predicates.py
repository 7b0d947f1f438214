"""Filter predicates: a small, SQL-compatible language and the selectivity it implies.

Grammar (case-insensitive keywords)::

    predicate  := comparison ("and" comparison)*
    comparison := column op number
    column     := a column of the stream (an identifier)
    op         := "<" | "<=" | ">" | ">=" | "=" | "==" | "!="

The text is valid Spark SQL; the Spark engine evaluates the predicate rebuilt from its
parsed parts. The simulator needs only the share of tuples it keeps: a generated stream's
columns are independent, so the selectivity of a conjunction is the product, per column,
of the share its comparisons leave under the column's generator (:mod:`columns`; a column
whose share cannot be told, e.g. a string, counts as keeping everything).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from spark_runner.scenario.columns import StreamColumn

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

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(c.column for c in self.comparisons)

    def selectivity(self, columns: Sequence[StreamColumn]) -> float:
        """Share of generated tuples kept, for a stream of ``columns``."""
        share = 1.0
        for column in columns:
            mine = [(c.op, c.number) for c in self.comparisons if c.column == column.name]
            if mine:
                fraction = column.fraction(mine)
                share *= 1.0 if fraction is None else fraction
        return share


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
        if k1 != "word" or col.lower() == "and":
            raise PredicateError(f"expected a column name, got {col!r}")
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
        comparisons.append(Comparison(col, "==" if op == "=" else op, number))
        i += 3
        if i == len(tokens):
            break
        kind, word = tokens[i]
        if kind != "word" or word.lower() != "and":
            raise PredicateError(f"expected 'and' between comparisons, got {word!r}")
        i += 1
    return Predicate(text=text, comparisons=tuple(comparisons))

"""A stream's own columns: their types, how a generated stream draws them, and the share of
tuples a comparison keeps (for the simulator).

A stream declares its columns (at most ``MAX_COLUMNS``), each with a type and a
*generator*, and optionally which timestamp column is its event time::

    columns:
      - {name: account, type: long, generator: {kind: zipf, n: 1000, s: 1.1}}
      - {name: amount, type: double, generator: {kind: normal, mean: 80, sd: 30}}
      - {name: country, type: string, generator: {kind: choice, values: [FR, DE, US]}}
      - {name: ts, type: timestamp, generator: {kind: arrival, lag_max_s: 2}}
    event_time: ts

Generators (every value a deterministic hash of the seed, the stream, the column and the
tuple's ``seq``, so a replay regenerates the same tuples):

- ``uniform`` ``min``..``max``: a double in [min, max), or an integer in [min, max];
- ``zipf`` ``n``, ``s``: rank ``r`` in 0..n-1 with probability ∝ 1 / (r + 1)^s (rank 0 the
  most frequent: skewed keys), a long, or the string ``k<r>``;
- ``normal`` ``mean``, ``sd``: a double;
- ``choice`` ``values`` (``weights``): one of the values, of the column's type;
- ``sequence``: the tuple's ``seq`` (a long);
- ``arrival`` (``lag_max_s``): a timestamp (or double seconds) up to ``lag_max_s`` before the
  tuple's arrival instant, uniformly: events that happened a little before they arrived.

A stream without ``columns`` has the two of every earlier scenario: ``key`` (long, uniform
over ``0 .. keys-1``) and ``value`` (double, uniform in [0, 1)). Without ``event_time`` a
window's event time is the arrival instant.

No Spark, no numpy: the engine draws the values (``engine/sources/columns.py``).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import accumulate
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from spark_runner.scenario.sql_allowlist import NILADIC_RULE, spark_function_name

IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
ColumnName = Annotated[
    str, StringConstraints(pattern=IDENTIFIER_PATTERN, min_length=1, max_length=64)
]
"""A stream column's name: an SQL identifier (letters, digits, underscores)."""

ColumnType = Literal["long", "double", "string", "boolean", "timestamp"]
MAX_COLUMNS = 64
"""Most columns of one stream."""
MAX_CHOICES = 1_000
"""Most values of a ``choice`` generator."""
MAX_ZIPF_N = 1_000_000
"""Most ranks of a ``zipf`` generator (its distribution, computed once per ``n`` and
``s``, takes about half a second of CPU and 8 MB)."""
ZIPF_CACHE_SIZE = 4
"""Most ``zipf`` distributions one process keeps (the least recently used goes first):
at most 32 MB at ``MAX_ZIPF_N``."""
MAX_ZIPF_S = 10.0
"""Largest Zipf exponent."""
MAX_ABS = 1e15
"""Largest magnitude of a generator's number (uniform bounds, normal mean and sd)."""
MAX_LAG_S = 86_400.0
"""Longest event-time lag behind arrival, s."""
EVENT_TIME = "event_time"
"""The one watermarked column of every row: a copy of the stream's event-time column,
else the arrival instant."""
READ_COLUMN = "read_s"
"""A source row's share of the time its source took to produce it: the seconds a batch of
rows took in the reader on its first row, 0 on the others (the engine's cost model counts
it, :mod:`spark_runner.engine.sources.source`)."""
ROW_COLUMNS = frozenset({"point", "seq", "arrival_s", READ_COLUMN, EVENT_TIME})
"""The engine's own columns of every row the Spark engine reads (besides ``shed_<n>``)."""
SQL_ENGINE_COLUMNS = frozenset({"arrival_s", EVENT_TIME})
"""The engine's columns a SQL query may read besides the stream's own."""
CLASS_COLUMN, QUERY_COLUMN = "class", "query"
"""The columns every output row carries besides the query's own."""
WINDOW_BOUNDS = ("window_start_s", "window_end_s")
"""The columns a window aggregate gives its window's bounds."""
RESERVED_COLUMNS = ROW_COLUMNS | {CLASS_COLUMN, QUERY_COLUMN, *WINDOW_BOUNDS}
"""Every name the engine gives a column of its own: no stream column, no map output and no
SQL output may take one, nor a ``shed_<n>`` name (:func:`engine_column`)."""
SHED_PREFIX = "shed_"
"""A row's ``shed_<k>`` column carries class ``k``'s shed fraction for its edges."""
RIGHT_SUFFIX = "_r"
"""A window join's output names the right side's column ``<name>_r`` where the left has
one (:func:`join_columns`)."""


def engine_column(name: str) -> bool:
    """``name`` is one of the engine's own columns, compared case-insensitively (Spark
    resolves names so)."""
    folded = name.lower()
    return folded in RESERVED_COLUMNS or folded.startswith(SHED_PREFIX)


def data_column(name: str) -> bool:
    """A column of the data a row carries, not one of the engine's row columns."""
    return name not in ROW_COLUMNS and not name.startswith(SHED_PREFIX)


def join_columns(left: Sequence[str], right: Sequence[str]) -> list[str]:
    """The names a window join gives the ``right`` side's data columns beside the ``left``
    side's: ``<name>_r`` where the left has the name, compared case-insensitively."""
    taken = {name.lower() for name in left}
    return [f"{name}{RIGHT_SUFFIX}" if name.lower() in taken else name for name in right]


def repeated_name(names: Sequence[str]) -> str | None:
    """The first of ``names`` that an earlier one matches case-insensitively (Spark
    resolves names so: two such columns are ambiguous), else None."""
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            return name
        seen.add(name.lower())
    return None


def engine_column_rule() -> str:
    """The rule :func:`engine_column` checks, as an error message states it after a name."""
    return (
        f"is the engine's own column name (RESERVED_COLUMNS: "
        f"{', '.join(sorted(RESERVED_COLUMNS))}, and {SHED_PREFIX}<n>; compared "
        "case-insensitively); choose another"
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Number = Annotated[float, Field(ge=-MAX_ABS, le=MAX_ABS, allow_inf_nan=False)]


class UniformGen(_Model):
    kind: Literal["uniform"]
    min: Number = 0.0
    max: Number = 1.0

    @model_validator(mode="after")
    def _ordered(self) -> UniformGen:
        if not self.min < self.max:
            raise ValueError(f"min ({self.min:g}) must be below max ({self.max:g})")
        return self


class ZipfGen(_Model):
    kind: Literal["zipf"]
    n: int = Field(ge=1, le=MAX_ZIPF_N)
    s: float = Field(default=1.0, gt=0, le=MAX_ZIPF_S, allow_inf_nan=False)

    def weights(self) -> list[float]:
        raw = [1.0 / (r + 1) ** self.s for r in range(self.n)]
        total = math.fsum(raw)
        return [w / total for w in raw]

    def share(self, low: int, high: int, excluded: set[int]) -> float:
        """Probability of a rank in ``low..high`` (within ``0..n-1``) other than the
        ``excluded`` ones."""
        cdf = _zipf_cdf(self)
        dropped = math.fsum(cdf[e + 1] - cdf[e] for e in excluded if low <= e <= high)
        return max(0.0, cdf[high + 1] - cdf[low] - dropped)


@lru_cache(maxsize=ZIPF_CACHE_SIZE)
def _zipf_cdf(generator: ZipfGen) -> array[float]:
    """``cdf[r]``: the probability of a rank below ``r`` (``cdf[0] = 0``, ``cdf[n] = 1``).

    Every preview and job start reads the filters' selectivity from a freshly parsed
    scenario; keyed by the (frozen) generator, equal ``n`` and ``s`` share one entry."""
    return array("d", accumulate(generator.weights(), initial=0.0))


class NormalGen(_Model):
    kind: Literal["normal"]
    mean: Number = 0.0
    sd: float = Field(default=1.0, gt=0, le=MAX_ABS, allow_inf_nan=False)


Choice = Annotated[str, StringConstraints(max_length=200)] | bool | Number


class ChoiceGen(_Model):
    kind: Literal["choice"]
    values: list[Choice] = Field(min_length=1, max_length=MAX_CHOICES)
    weights: list[Annotated[float, Field(ge=0, le=MAX_ABS, allow_inf_nan=False)]] | None = None

    @model_validator(mode="after")
    def _weights(self) -> ChoiceGen:
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(
                    f"weights has {len(self.weights)} entries for {len(self.values)} values"
                )
            if not sum(self.weights) > 0:
                raise ValueError("weights must not all be 0")
        return self

    def probabilities(self) -> list[float]:
        weights = self.weights or [1.0] * len(self.values)
        total = math.fsum(weights)
        return [w / total for w in weights]


class SequenceGen(_Model):
    kind: Literal["sequence"]


class ArrivalGen(_Model):
    kind: Literal["arrival"]
    lag_max_s: float = Field(default=0.0, ge=0, le=MAX_LAG_S, allow_inf_nan=False)


Generator = Annotated[
    UniformGen | ZipfGen | NormalGen | ChoiceGen | SequenceGen | ArrivalGen,
    Field(discriminator="kind"),
]

GENERATOR_TYPES: dict[str, tuple[str, ...]] = {
    "uniform": ("long", "double"),
    "zipf": ("long", "string"),
    "normal": ("double",),
    "choice": ("long", "double", "string", "boolean"),
    "sequence": ("long",),
    "arrival": ("timestamp", "double"),
}
"""The column types each generator can fill."""


DEFAULT_GENERATORS: dict[str, dict[str, Any]] = {
    "long": {"kind": "uniform"},
    "double": {"kind": "uniform"},
    "string": {"kind": "zipf", "n": 100},
    "boolean": {"kind": "choice", "values": [True, False]},
    "timestamp": {"kind": "arrival"},
}
"""The generator of a column that names none, by its type: a declared stream (read from
Redis or files) needs no generator, and its columns still get one that fills them."""


class StreamColumn(_Model):
    """One column of a stream: its name, its type and how a generated stream draws it
    (without ``generator``: :data:`DEFAULT_GENERATORS` of its type)."""

    name: ColumnName
    type: ColumnType = "double"
    generator: Generator = UniformGen(kind="uniform")

    @model_validator(mode="before")
    @classmethod
    def _default_generator(cls, data: Any) -> Any:
        if isinstance(data, dict) and "generator" not in data:
            kind = data.get("type", "double")
            if isinstance(kind, str) and kind in DEFAULT_GENERATORS:
                return {**data, "generator": DEFAULT_GENERATORS[kind]}
        return data

    @model_validator(mode="after")
    def _fits(self) -> StreamColumn:
        if engine_column(self.name):
            raise ValueError(f"column name {self.name!r} {engine_column_rule()}")
        if spark_function_name(self.name):
            raise ValueError(f"column name {self.name!r}: {NILADIC_RULE}")
        kinds = GENERATOR_TYPES[self.generator.kind]
        if self.type not in kinds:
            raise ValueError(
                f"column {self.name!r}: a {self.generator.kind} generator fills "
                f"{' or '.join(kinds)} columns, not {self.type}"
            )
        if isinstance(self.generator, ChoiceGen):
            for value in self.generator.values:
                if not _fits_type(value, self.type):
                    raise ValueError(
                        f"column {self.name!r}: choice value {value!r} is not a {self.type}"
                    )
        return self

    def fraction(self, comparisons: Sequence[tuple[str, float]]) -> float | None:
        """Share of generated tuples for which every ``column op number`` holds, or None
        when it cannot be told (a string, a boolean, a timestamp, a sequence)."""
        g = self.generator
        if isinstance(g, UniformGen) and self.type == "long":
            return _integers(math.ceil(g.min), math.floor(g.max), comparisons)
        if isinstance(g, UniformGen):
            low, width = g.min, g.max - g.min
            return _continuous(lambda x: min(1.0, max(0.0, (x - low) / width)), comparisons)
        if isinstance(g, NormalGen):
            scale = g.sd * math.sqrt(2)
            return _continuous(lambda x: 0.5 * (1 + math.erf((x - g.mean) / scale)), comparisons)
        if isinstance(g, ZipfGen) and self.type == "long":
            ranks = _integer_range(0, g.n - 1, comparisons)
            return 0.0 if ranks is None else g.share(*ranks)
        if isinstance(g, ChoiceGen) and self.type in ("long", "double"):
            return _discrete([float(v) for v in g.values], g.probabilities(), comparisons)
        return None


def _fits_type(value: object, column_type: str) -> bool:
    if column_type == "string":
        return isinstance(value, str)
    if column_type == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return column_type == "double" or float(value).is_integer()


def _holds(x: float, op: str, number: float) -> bool:
    return {
        "<": x < number, "<=": x <= number, ">": x > number, ">=": x >= number,
        "==": x == number, "!=": x != number,
    }[op]  # fmt: skip


def _discrete(
    values: Sequence[float],
    probabilities: Sequence[float],
    comparisons: Sequence[tuple[str, float]],
) -> float:
    return math.fsum(
        p
        for v, p in zip(values, probabilities, strict=True)
        if all(_holds(v, op, n) for op, n in comparisons)
    )


def _integers(low: int, high: int, comparisons: Sequence[tuple[str, float]]) -> float:
    """Share of the integers ``low..high`` (uniform) for which every comparison holds."""
    count = high - low + 1
    kept = _integer_range(low, high, comparisons)
    if kept is None:
        return 0.0
    low, high, excluded = kept
    return max(0, high - low + 1 - sum(1 for e in excluded if low <= e <= high)) / count


def _integer_range(
    low: int, high: int, comparisons: Sequence[tuple[str, float]]
) -> tuple[int, int, set[int]] | None:
    """The integers of ``low..high`` for which every comparison holds, as a narrower
    range and the values ``!=`` removes from it; None when none is left."""
    excluded: set[int] = set()
    for op, x in comparisons:
        if op == "<":
            high = min(high, math.ceil(x) - 1)
        elif op == "<=":
            high = min(high, math.floor(x))
        elif op == ">":
            low = max(low, math.floor(x) + 1)
        elif op == ">=":
            low = max(low, math.ceil(x))
        elif op == "==":
            if not float(x).is_integer():
                return None
            low, high = max(low, int(x)), min(high, int(x))
        elif float(x).is_integer():
            excluded.add(int(x))
    return None if high < low else (low, high, excluded)


def _continuous(cdf: Callable[[float], float], comparisons: Sequence[tuple[str, float]]) -> float:
    low, high = -math.inf, math.inf
    for op, x in comparisons:
        if op in ("<", "<="):
            high = min(high, x)
        elif op in (">", ">="):
            low = max(low, x)
        elif op == "==":
            return 0.0  # a single point of a continuous distribution
        # "!=" removes a single point: the measure is unchanged
    if high <= low:
        return 0.0
    return max(
        0.0, (cdf(high) if high < math.inf else 1.0) - (cdf(low) if low > -math.inf else 0.0)
    )


def default_columns(keys: int) -> tuple[StreamColumn, StreamColumn]:
    """The columns of a stream that declares none: ``key`` and ``value``."""
    return (
        StreamColumn(
            name="key", type="long", generator=UniformGen(kind="uniform", min=0, max=keys - 1)
        )
        if keys > 1
        else StreamColumn(name="key", type="long", generator=ChoiceGen(kind="choice", values=[0])),
        StreamColumn(name="value", type="double", generator=UniformGen(kind="uniform")),
    )

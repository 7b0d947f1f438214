"""A stream's columns as the sources produce them: types and generated values (no Spark).

:class:`ColumnSpec` is a stream column of the scenario (``scenario/columns.py``) in the
plain form the feed specification carries to the source processes (which import neither
pydantic nor the scenario). :func:`generate` draws a column's values for a run of tuple
numbers ``seq``: every value is a function of (seed, stream, column, seq) only — SplitMix64
of the seq under a key hashed from the names — so every class reading a stream sees the
same tuples and a replayed batch regenerates them exactly. :func:`parse` reads a broker
entry's text (or JSON value) into a column's type; :func:`column_values` reads a whole
column so, by Arrow's casts where they agree with :func:`parse` (a file's typed column,
texts that are plain numbers), value by value otherwise.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ARROW_TYPES: dict[str, pa.DataType] = {
    "long": pa.int64(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
DEFAULT_SEED = 0x5EED_0F_4EAD_2008
"""Mixed into every column's hash key."""
SQL_TYPES = {
    "long": "BIGINT",
    "double": "DOUBLE",
    "string": "STRING",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
}


def shed_column(class_index: int) -> str:
    """The row column carrying class ``class_index``'s shed fraction for its edges."""
    return f"shed_{class_index}"


def class_key(name: str, seed: int = DEFAULT_SEED) -> int:
    """A stable 64-bit key for a name (Python's ``hash`` is salted per process)."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") ^ (seed & 0xFFFF_FFFF_FFFF_FFFF)


def unit_values(key: int, seqs: np.ndarray) -> np.ndarray:
    """Uniform floats in [0, 1) from SplitMix64 of (key, seq); vectorised, wraps mod 2**64."""
    with np.errstate(over="ignore"):
        z = seqs.astype(np.uint64) * np.uint64(0x9E37_79B9_7F4A_7C15) + np.uint64(key)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58_476D_1CE4_E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D0_49BB_1331_11EB)
        z = z ^ (z >> np.uint64(31))
    # The top 53 bits fill a double's mantissa exactly, so the result is < 1.0.
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


@dataclass(frozen=True)
class ColumnSpec:
    """One column: ``name``, ``type`` (a key of :data:`ARROW_TYPES`) and its generator
    (``kind`` and its parameters, as in the scenario)."""

    name: str
    type: str
    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "kind": self.kind, "params": self.params}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ColumnSpec:
        return cls(str(data["name"]), str(data["type"]), str(data["kind"]), dict(data["params"]))


def generate(
    column: ColumnSpec, seed: int, stream: str, seqs: np.ndarray, arrival_s: np.ndarray
) -> np.ndarray:
    """The values of ``column`` for tuples ``seqs`` of ``stream`` (arriving at
    ``arrival_s``, epoch s); timestamps as epoch microseconds."""
    p = column.params
    u = unit_values(class_key(f"{seed}:{stream}:{column.name}"), seqs)
    if column.kind == "uniform":
        low, high = float(p.get("min", 0.0)), float(p.get("max", 1.0))
        if column.type == "long":
            low, high = math.ceil(low), math.floor(high)
            return np.asarray(np.floor(low + u * (high - low + 1)), dtype=np.int64)
        return low + u * (high - low)
    if column.kind == "zipf":
        ranks = np.searchsorted(_zipf_cdf(int(p["n"]), float(p.get("s", 1.0))), u, side="right")
        ranks = np.minimum(ranks, int(p["n"]) - 1)
        if column.type == "string":
            return np.array([f"k{r}" for r in ranks.tolist()], dtype=object)
        return ranks.astype(np.int64)
    if column.kind == "normal":
        # Box-Muller from two independent uniforms (the second under its own key)
        v = unit_values(class_key(f"{seed}:{stream}:{column.name}:2"), seqs)
        radius = np.sqrt(-2.0 * np.log1p(-u))
        normal = radius * np.cos(2 * np.pi * v)
        return np.asarray(float(p.get("mean", 0.0)) + float(p.get("sd", 1.0)) * normal)
    if column.kind == "choice":
        values: Sequence[Any] = p["values"]
        weights = np.asarray(p.get("weights") or [1.0] * len(values), dtype=np.float64)
        cdf = np.cumsum(weights / weights.sum())
        index = np.minimum(np.searchsorted(cdf, u, side="right"), len(values) - 1)
        options: np.ndarray = np.array(values, dtype=_numpy_type(column.type))
        return np.asarray(options[index])
    if column.kind == "sequence":
        return seqs.astype(np.int64)
    if column.kind == "arrival":
        event_s = arrival_s - u * float(p.get("lag_max_s", 0.0))
        if column.type == "timestamp":
            return np.asarray(np.round(event_s * 1e6), dtype=np.int64)
        return event_s
    raise ValueError(f"column {column.name!r}: unknown generator {column.kind!r}")


def _numpy_type(column_type: str) -> Any:
    return {"long": np.int64, "double": np.float64, "boolean": np.bool_}.get(column_type, object)


_CDF_CACHE: dict[tuple[int, float], np.ndarray] = {}


def _zipf_cdf(n: int, s: float) -> np.ndarray:
    if (n, s) not in _CDF_CACHE:
        weights = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
        _CDF_CACHE[(n, s)] = np.cumsum(weights) / weights.sum()
    return _CDF_CACHE[(n, s)]


def parse(column: ColumnSpec, raw: Any) -> Any:
    """A broker entry's value (text, or a JSON scalar) as ``column``'s type; None when it
    is missing or does not read as one (the row keeps a null there)."""
    if raw is None:
        return None
    if isinstance(raw, datetime):  # a typed file's timestamp (naive: UTC)
        return _epoch_us(raw) if column.type == "timestamp" else None
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    try:
        if column.type == "long":
            number = float(raw)
            return int(number) if number.is_integer() else None
        if column.type == "double":
            number = float(raw)
            return number if math.isfinite(number) else None
        if column.type == "boolean":
            return raw if isinstance(raw, bool) else str(raw).strip().lower() in ("true", "1")
        if column.type == "timestamp":  # epoch seconds, or ISO 8601 text
            try:
                seconds = float(raw)
            except ValueError:
                return _epoch_us(datetime.fromisoformat(str(raw).strip()))
            return round(seconds * 1e6) if math.isfinite(seconds) else None
        return str(raw)
    except (TypeError, ValueError, OverflowError):
        return None


def _epoch_us(moment: datetime) -> int:
    """Microseconds since the epoch (a naive time is UTC)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return round(aware.timestamp() * 1e6)


def arrow_array(column: ColumnSpec, values: Any) -> pa.Array:
    """``values`` (from :func:`generate`, :func:`parse` or :func:`column_values`) as an
    Arrow array of the column's type."""
    if isinstance(values, pa.Array):
        return values.cast(ARROW_TYPES[column.type])
    if column.type == "timestamp":
        return pa.array(values, type=pa.int64()).cast(ARROW_TYPES["timestamp"])
    return pa.array(values, type=ARROW_TYPES[column.type])


def column_values(column: ColumnSpec, raw: pa.Array | pa.ChunkedArray | Sequence[Any]) -> pa.Array:
    """Raw values — a file's column, or the values of a broker's entries — as an Arrow
    array of ``column``'s type, each read as :func:`parse` reads it (a timestamp to the
    microsecond): by Arrow's casts where they give the same, one value at a time where
    they cannot (mixed values, text that is not a plain number)."""
    try:
        if isinstance(raw, pa.ChunkedArray):
            values = raw.combine_chunks()
        else:
            values = raw if isinstance(raw, pa.Array) else pa.array(raw)
        cast = _cast(column.type, values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        cast = None
    if cast is not None:
        return cast
    items = raw.to_pylist() if isinstance(raw, pa.Array | pa.ChunkedArray) else raw
    return arrow_array(column, [parse(column, v) for v in items])


def _cast(column_type: str, values: pa.Array) -> pa.Array | None:
    """``values`` as ``column_type`` where Arrow reads them as :func:`parse` does; None
    where only :func:`parse` can (raises where a cast fails on a value)."""
    if pa.types.is_null(values.type):
        return pa.nulls(len(values), ARROW_TYPES[column_type])
    if pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        values = values.cast(pa.string())  # raises on bytes that are not UTF-8
    kind = values.type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if column_type == "string":
        return values.cast(pa.string()) if text else None
    if column_type == "boolean":
        if pa.types.is_boolean(kind):
            return values
        if pa.types.is_integer(kind):
            return pc.equal(values, 1)
        if text:
            words = pc.utf8_lower(pc.utf8_trim_whitespace(values))
            chosen = pc.is_in(words, value_set=pa.array(["true", "1"]))
            return pc.if_else(pc.is_valid(values), chosen, pa.scalar(None, pa.bool_()))
        return None
    if column_type == "timestamp" and pa.types.is_timestamp(kind):
        return values.cast(ARROW_TYPES["timestamp"], safe=False)  # naive: UTC
    if text:
        values = values.cast(pa.float64())  # raises where a text is not a plain number
    elif not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
        return None
    if column_type == "long" and pa.types.is_integer(values.type):
        return values.cast(pa.int64())
    return _from_number(column_type, values.cast(pa.float64()))


def _from_number(column_type: str, number: pa.Array) -> pa.Array | None:
    """Finite float64 values as ``column_type`` (a long only where integral; a timestamp
    from epoch seconds); the others null."""
    finite = pc.is_finite(number)
    if column_type == "double":
        return pc.if_else(finite, number, pa.scalar(None, pa.float64()))
    if column_type == "long":
        whole = pc.and_(finite, pc.equal(pc.floor(number), number))
        return pc.if_else(whole, number, pa.scalar(None, pa.float64())).cast(pa.int64())
    if column_type == "timestamp":
        micros = pc.round(pc.multiply(number, 1e6))
        kept = pc.if_else(finite, micros, pa.scalar(None, pa.float64()))
        return kept.cast(pa.int64()).cast(ARROW_TYPES["timestamp"])
    return None

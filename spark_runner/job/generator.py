"""Deterministic tuple generation for the synthetic multi-class stream (no Spark).

Class k emits tuples at a constant rate r_k: tuple number n (from 0) is *scheduled* to
arrive at ``origin + n / r_k``. That scheduled instant is the tuple's arrival time
(qos-model §1: never the time Spark read it).

A tuple belongs to the half-open time range [start, end) when its scheduled arrival lies
in it, so consecutive ranges partition the stream exactly: ``seq_range`` of [a, b) and of
[b, c) are adjacent and never overlap, whatever the float rounding, because both use the
same ``tuples_before(b)``.

``value`` is a uniform number in [0, 1) from a seeded hash of (class name, seq), so
replaying a range after a restart yields the very same tuples.

Times are integer microseconds since the Unix epoch (``*_us``) where they serve as
offsets, and float seconds (``*_s``) in the tuples.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

US_PER_S = 1_000_000
DEFAULT_SEED = 0x5EED_0F_4EAD_2008

ARROW_SCHEMA = pa.schema(
    [
        pa.field("class_id", pa.int32()),
        pa.field("class_name", pa.string()),
        pa.field("seq", pa.int64()),
        pa.field("arrival_s", pa.float64()),
        pa.field("value", pa.float64()),
    ]
)
"""Column layout of generated tuples; ``source.SCHEMA`` is the same layout for Spark."""

MAX_ROWS_PER_RECORD_BATCH = 65_536


@dataclass(frozen=True)
class ClassStream:
    """One class's generated stream: its position in the snapshot, its name and its rate."""

    class_id: int
    name: str
    rate_per_s: float

    def __post_init__(self) -> None:
        if not (self.rate_per_s >= 0 and math.isfinite(self.rate_per_s)):
            raise ValueError(
                f"rate_per_s of class {self.name!r} is {self.rate_per_s}; "
                "it must be a finite number >= 0"
            )


def tuples_before(rate_per_s: float, origin_us: int, t_us: int) -> int:
    """Number of tuples of a stream scheduled strictly before ``t_us``."""
    elapsed_us = t_us - origin_us
    if elapsed_us <= 0 or rate_per_s == 0:
        return 0
    return math.ceil(elapsed_us * rate_per_s / US_PER_S)


def seq_range(stream: ClassStream, origin_us: int, start_us: int, end_us: int) -> range:
    """Sequence numbers of the tuples scheduled in [start_us, end_us)."""
    first = tuples_before(stream.rate_per_s, origin_us, start_us)
    stop = tuples_before(stream.rate_per_s, origin_us, end_us)
    return range(first, max(first, stop))


def class_key(name: str, seed: int = DEFAULT_SEED) -> int:
    """A stable 64-bit key for a class name (Python's ``hash`` is salted per process)."""
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


def generate(
    stream: ClassStream,
    origin_us: int,
    seqs: range,
    seed: int = DEFAULT_SEED,
    max_rows: int = MAX_ROWS_PER_RECORD_BATCH,
) -> Iterator[pa.RecordBatch]:
    """The tuples ``seqs`` of ``stream`` as Arrow record batches of at most ``max_rows``."""
    if max_rows <= 0:
        raise ValueError(f"max_rows is {max_rows}; it must be > 0")
    if len(seqs) == 0:
        return
    key = class_key(stream.name, seed)
    origin_s = origin_us / US_PER_S
    for chunk_start in range(seqs.start, seqs.stop, max_rows):
        chunk_stop = min(chunk_start + max_rows, seqs.stop)
        seq = np.arange(chunk_start, chunk_stop, dtype=np.int64)
        n_rows = len(seq)
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(np.full(n_rows, stream.class_id, dtype=np.int32)),
                pa.array([stream.name] * n_rows, type=pa.string()),
                pa.array(seq),
                pa.array(origin_s + seq / stream.rate_per_s),
                pa.array(unit_values(key, seq)),
            ],
            schema=ARROW_SCHEMA,
        )

"""Generated input streams: when each tuple arrives and what it carries (no Spark).

A stream follows the rate schedule of its arrival pattern
(:func:`spark_runner.scenario.arrivals.build_schedule`, the simulator's, from the same
seed). Tuple ``n`` (from 0) arrives at ``A⁻¹(n)``, the instant the schedule's integral
``A(t)`` reaches ``n``; the tuples arrived before ``t`` are the ``ceil(A(t))`` first. Times
here are *scenario* seconds from the run's origin; the source adds the origin.

The tuples carry the stream's columns (:mod:`columns`), each a hash of (seed, stream,
column, seq): every class reading a stream sees the very same tuples, and a batch replayed
after a failure regenerates them exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spark_runner.engine.sources.columns import ColumnSpec, generate


@dataclass(frozen=True)
class StreamSpec:
    """One stream's schedule (``rates[i]`` tuples/s on ``[starts[i], starts[i+1])``), its
    columns and the one that is its event time (None: the arrival instant)."""

    name: str
    seed: int
    starts: tuple[float, ...]
    rates: tuple[float, ...]
    columns: tuple[ColumnSpec, ...]
    event_time: str | None = None
    _cumulative: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.starts or self.starts[0] != 0.0 or len(self.starts) != len(self.rates):
            raise ValueError(
                f"stream {self.name!r}: a schedule starts at 0 with one rate per start"
            )
        starts = np.asarray(self.starts, dtype=np.float64)
        rates = np.asarray(self.rates, dtype=np.float64)
        cumulative = np.concatenate(([0.0], np.cumsum(np.diff(starts) * rates[:-1])))
        object.__setattr__(self, "_cumulative", cumulative)

    def count_before(self, t_s: float) -> float:
        """``A(t)``: expected tuples in ``[0, t_s)``."""
        if t_s <= 0:
            return 0.0
        i = int(np.searchsorted(self.starts, t_s, side="right")) - 1
        return float(self._cumulative[i] + self.rates[i] * (t_s - self.starts[i]))

    def arrived_before(self, t_s: float) -> int:
        """Whole tuples that arrived strictly before ``t_s``."""
        return math.ceil(self.count_before(t_s) - 1e-9)

    def arrival_times(self, seqs: np.ndarray) -> np.ndarray:
        """``A⁻¹(n)`` for every ``n`` in ``seqs`` (scenario seconds)."""
        n = seqs.astype(np.float64)
        i = np.searchsorted(self._cumulative, n, side="right") - 1
        rates = np.asarray(self.rates)[i]
        starts = np.asarray(self.starts)[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = starts + (n - self._cumulative[i]) / rates
        return np.asarray(np.where(rates > 0, t, starts), dtype=np.float64)

    def values_of(self, seqs: np.ndarray, arrival_s: np.ndarray) -> dict[str, np.ndarray]:
        """Every column's values for tuples ``seqs`` arriving at ``arrival_s`` (epoch s)."""
        return {c.name: generate(c, self.seed, self.name, seqs, arrival_s) for c in self.columns}

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seed": self.seed,
            "starts": list(self.starts),
            "rates": list(self.rates),
            "columns": [c.to_json() for c in self.columns],
            "event_time": self.event_time,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StreamSpec:
        return cls(
            name=str(data["name"]),
            seed=int(data["seed"]),
            starts=tuple(float(x) for x in data["starts"]),
            rates=tuple(float(x) for x in data["rates"]),
            columns=tuple(ColumnSpec.from_json(c) for c in data["columns"]),
            event_time=data.get("event_time"),
        )

"""Generated input streams: when each tuple arrives and what it carries (no Spark).

A stream follows the rate schedule of its arrival pattern
(:func:`spark_runner.scenario.arrivals.build_schedule`, the simulator's, from the same
seed). Tuple ``n`` (from 0) arrives at ``A⁻¹(n)``, the instant the schedule's integral
``A(t)`` reaches ``n``; the tuples arrived before ``t`` are the ``ceil(A(t))`` first. Times
here are *scenario* seconds from the run's origin; the source adds the origin.

``key`` is uniform over ``0 .. keys-1`` and ``value`` uniform in [0, 1), both a hash of
(seed, stream, seq): every class reading a stream sees the very same tuples, and a batch
replayed after a failure regenerates them exactly.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spark_runner.job.generator import class_key, unit_values
from spark_runner.scenario.arrivals import build_schedule
from spark_runner.scenario.models import Scenario


@dataclass(frozen=True)
class StreamSpec:
    """One stream's schedule: ``rates[i]`` tuples/s on ``[starts[i], starts[i+1])``."""

    name: str
    keys: int
    seed: int
    starts: tuple[float, ...]
    rates: tuple[float, ...]
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

    def keys_of(self, seqs: np.ndarray) -> np.ndarray:
        units = unit_values(self._hash("key"), seqs)
        return np.asarray(np.floor(units * self.keys), dtype=np.int64)

    def values_of(self, seqs: np.ndarray) -> np.ndarray:
        return unit_values(self._hash("value"), seqs)

    def _hash(self, column: str) -> int:
        return class_key(f"{self.seed}:{self.name}:{column}")

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "keys": self.keys,
            "seed": self.seed,
            "starts": list(self.starts),
            "rates": list(self.rates),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StreamSpec:
        return cls(
            name=str(data["name"]),
            keys=int(data["keys"]),
            seed=int(data["seed"]),
            starts=tuple(float(x) for x in data["starts"]),
            rates=tuple(float(x) for x in data["rates"]),
        )


def stream_specs(scenario: Scenario) -> dict[str, StreamSpec]:
    """Every stream's schedule, drawn exactly as the simulator draws it."""
    out: dict[str, StreamSpec] = {}
    for s in scenario.streams:
        schedule = build_schedule(
            s.arrival,
            scenario.duration_s,
            random.Random(f"{scenario.seed}:stream:{s.name}"),
            scenario.control.period_s,
        )
        out[s.name] = StreamSpec(
            name=s.name,
            keys=s.keys,
            seed=scenario.seed,
            starts=schedule.starts,
            rates=schedule.rates,
        )
    return out

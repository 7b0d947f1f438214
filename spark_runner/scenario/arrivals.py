"""Arrival patterns as piecewise-constant rate schedules (shared by the simulator and Spark).

Every pattern of the format becomes a :class:`RateSchedule`: segment start times and the
rate (tuples/s) that holds from each start to the next. The schedule answers the rate at a
time and the expected number of tuples in an interval (its integral); a generator turns
the integral into whole tuples with ``floor(count_before(t))`` so consecutive intervals
partition the stream exactly.

Randomness (the Pareto pattern) comes only from the ``random.Random`` handed in, so a
schedule is reproducible from the scenario's seed.
"""

from __future__ import annotations

import bisect
import csv
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spark_runner.scenario.models import (
    Arrival,
    ConstantArrival,
    ParetoArrival,
    StepArrival,
    TraceArrival,
)


class TraceError(ValueError):
    """A trace file broke a rule; ``line`` is 1-based (0 for the file as a whole)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class RateSchedule:
    """A piecewise-constant rate: ``rates[i]`` tuples/s on ``[starts[i], starts[i+1])``.

    Invariants: ``starts[0] == 0``, strictly increasing starts, rates finite and >= 0; the
    last rate holds for ever.
    """

    starts: tuple[float, ...]
    rates: tuple[float, ...]
    _cumulative: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.starts or self.starts[0] != 0.0 or len(self.starts) != len(self.rates):
            raise ValueError("a schedule starts at 0 with one rate per start")
        cumulative = [0.0]
        for i in range(1, len(self.starts)):
            cumulative.append(
                cumulative[-1] + self.rates[i - 1] * (self.starts[i] - self.starts[i - 1])
            )
        object.__setattr__(self, "_cumulative", tuple(cumulative))

    def rate_at(self, t_s: float) -> float:
        """Rate in force at ``t_s`` (tuples/s)."""
        if t_s < 0:
            return 0.0
        return self.rates[bisect.bisect_right(self.starts, t_s) - 1]

    def count_before(self, t_s: float) -> float:
        """Expected tuples arrived in ``[0, t_s)`` (the integral of the rate)."""
        if t_s <= 0:
            return 0.0
        i = bisect.bisect_right(self.starts, t_s) - 1
        return self._cumulative[i] + self.rates[i] * (t_s - self.starts[i])

    def mean_rate(self, t0_s: float, t1_s: float) -> float:
        """Average rate over ``[t0_s, t1_s)``."""
        if t1_s <= t0_s:
            return self.rate_at(t0_s)
        return (self.count_before(t1_s) - self.count_before(t0_s)) / (t1_s - t0_s)

    def segments(self, duration_s: float) -> list[tuple[float, float, float]]:
        """``(start, end, rate)`` pieces covering ``[0, duration_s)``."""
        out: list[tuple[float, float, float]] = []
        for i, start in enumerate(self.starts):
            if start >= duration_s:
                break
            end = self.starts[i + 1] if i + 1 < len(self.starts) else duration_s
            out.append((start, min(end, duration_s), self.rates[i]))
        return out


def read_trace(path: str | Path) -> list[tuple[float, float]]:
    """Rows ``(time_s, rate_per_s)`` of a trace CSV (header ``time_s,rate_per_s``).

    Lines starting with ``#`` are comments. Times must start at 0 and increase; rates must
    be finite and >= 0. Raises :class:`TraceError` naming the line.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(name, 0, f"cannot read: {exc.strerror or exc}") from None
    rows: list[tuple[float, float]] = []
    header_seen = False
    for line_no, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or row[0].lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in row]
        if not header_seen:
            if cells[:2] != ["time_s", "rate_per_s"]:
                raise TraceError(name, line_no, "the header must be 'time_s,rate_per_s'")
            header_seen = True
            continue
        if len(cells) < 2:
            raise TraceError(name, line_no, "needs two columns: time_s,rate_per_s")
        try:
            t, r = float(cells[0]), float(cells[1])
        except ValueError:
            # The row is not echoed: an error must never show a file's contents.
            raise TraceError(name, line_no, "time_s and rate_per_s must be numbers") from None
        if not (math.isfinite(t) and math.isfinite(r)) or r < 0 or t < 0:
            raise TraceError(name, line_no, "time_s and rate_per_s must be finite and >= 0")
        if rows and t <= rows[-1][0]:
            raise TraceError(name, line_no, f"time_s {t} must be > the previous {rows[-1][0]}")
        if not rows and t != 0:
            raise TraceError(name, line_no, "the first row must be at time_s 0")
        rows.append((t, r))
    if not header_seen:
        raise TraceError(name, 0, "is empty; expected a 'time_s,rate_per_s' header and rows")
    if not rows:
        raise TraceError(name, 0, "has a header but no rows")
    return rows


def build_schedule(
    arrival: Arrival,
    duration_s: float,
    rng: random.Random,
    default_period_s: float,
) -> RateSchedule:
    """The rate schedule of ``arrival`` over ``[0, duration_s)``.

    ``default_period_s`` is the Pareto period when the pattern gives none (the thesis draws
    one rate per control period). ``rng`` is used only by the Pareto pattern.
    """
    if isinstance(arrival, ConstantArrival):
        return RateSchedule((0.0,), (arrival.rate_per_s,))
    if isinstance(arrival, StepArrival):
        return _step_schedule([(p.at_s, p.rate_per_s) for p in arrival.steps])
    if isinstance(arrival, ParetoArrival):
        return _pareto_schedule(arrival, duration_s, rng, default_period_s)
    if isinstance(arrival, TraceArrival):
        rows = read_trace(arrival.path)
        return _trace_schedule(rows, arrival, duration_s)
    raise TypeError(f"unknown arrival pattern {arrival!r}")


def _step_schedule(points: Sequence[tuple[float, float]]) -> RateSchedule:
    starts, rates = [0.0], [0.0]
    for at, rate in points:
        if at == 0.0:
            rates[0] = rate
        else:
            starts.append(at)
            rates.append(rate)
    return RateSchedule(tuple(starts), tuple(rates))


def bounded_pareto(rng: random.Random, low: float, high: float, shape: float) -> float:
    """One draw from the Pareto(α = ``shape``) distribution truncated to ``[low, high]``."""
    if high <= low:
        return low
    u = rng.random()
    ratio = (low / high) ** shape
    return float(low / (1.0 - u * (1.0 - ratio)) ** (1.0 / shape))


def _pareto_schedule(
    arrival: ParetoArrival, duration_s: float, rng: random.Random, default_period_s: float
) -> RateSchedule:
    period = arrival.period_s or default_period_s
    starts: list[float] = []
    rates: list[float] = []
    range_starts = [r.from_s for r in arrival.ranges]
    n = max(1, math.ceil(duration_s / period))
    for i in range(n):
        t = i * period
        rng_range = arrival.ranges[bisect.bisect_right(range_starts, t) - 1]
        starts.append(t)
        rates.append(
            bounded_pareto(rng, rng_range.min_rate_per_s, rng_range.max_rate_per_s, arrival.shape)
        )
    return RateSchedule(tuple(starts), tuple(rates))


def _trace_schedule(
    rows: Sequence[tuple[float, float]], arrival: TraceArrival, duration_s: float
) -> RateSchedule:
    scaled = [(t * arrival.time_scale, r * arrival.scale) for t, r in rows]
    if not arrival.loop or len(scaled) == 1:
        return _step_schedule(scaled)
    # one more row interval: the trace's length is its last time plus the mean row spacing
    span = scaled[-1][0] + scaled[-1][0] / (len(scaled) - 1)
    points: list[tuple[float, float]] = []
    offset = 0.0
    while offset < duration_s:
        points.extend((t + offset, r) for t, r in scaled)
        offset += span
    return _step_schedule(points)

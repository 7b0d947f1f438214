"""Moving a continuous query between jobs without moving its state: UniMiCo's hand-off
at a window boundary (001 §7.2; StreamCloud's window recreation, 002 §V, is the same idea).

The originating job keeps running the query until its last open window ends; the target
job starts the query from the first window that begins after the tuples it could read.
Windows that overlap are computed on both sides from the same input (the overlap is
read twice), so each side rebuilds the state it needs and none is transferred; each
window's result is emitted by exactly one side.

Windows are time-based: a window of ``length`` starts every ``slide`` (Spark's
``window(ts, length, slide)`` aligns them to multiples of ``slide``). Timestamps are
integers in one unit the caller chooses (e.g. milliseconds), so the arithmetic is exact.

- The *migration timestamp* ``ts_mi`` (Definition 12, Eq. 7.1) is the start of the last
  window the originating job computes: the latest grid start before the first tuple the
  target read (``ts_start``), and no earlier than the last window already emitted.
- The target *activates* at ``ts_mi + slide``: it drops every tuple before that instant and
  emits the windows that start there or later (a window that started earlier would be
  partial there: it is the origin's).
- The origin reads tuples up to ``ts_mi + length`` (its last window's end) and stops:
  within one window length of the target's first tuple (``ts_mi < ts_start``).
- A join that is the query's last window operator emits a pair on the origin only if one
  of its tuples is before the activation instant; a pair of two later tuples is the
  target's (UniMiCo's duplicate suppression, §7.2.5.1).

Pure: no Spark import, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_runner.core.errors import ParameterError


def migration_timestamp(ts_start: int, ts_last_w: int, slide: int) -> int:
    """Eq. 7.1: the start of the last window the originating job computes, given the
    first tuple the target read (``ts_start``) and the start of the most recent window
    the origin emitted (``ts_last_w``)."""
    if slide <= 0:
        raise ParameterError("slide", slide, "must be > 0")
    if ts_start <= ts_last_w:
        return ts_last_w
    gap = (ts_start - ts_last_w) % slide
    return ts_start - (slide if gap == 0 else gap)


def tuple_window_delta(between: int, slide: int) -> int:
    """Eq. 7.2's δ for a tuple-based window: with ``between`` tuples from the last
    emitted window's start to the target's first tuple, the migration timestamp is the
    timestamp of the δ-th tuple before the first one at or after ``ts_start``."""
    if slide <= 0:
        raise ParameterError("slide", slide, "must be > 0")
    if between < 0:
        raise ParameterError("between", between, "must be >= 0")
    return slide if (between + 1) % slide == 0 else (between + 1) % slide


@dataclass(frozen=True)
class HandOff:
    """Who computes what when a query with a time-based window moves between jobs.

    Attributes:
        length, slide: the query's controlling window (the one nearest its output).
        ts_mi: the migration timestamp (:func:`migration_timestamp`).
    """

    length: int
    slide: int
    ts_mi: int

    def __post_init__(self) -> None:
        if self.slide <= 0:
            raise ParameterError("slide", self.slide, "must be > 0")
        if self.length < self.slide:
            raise ParameterError("length", self.length, f"must be >= slide={self.slide}")

    @classmethod
    def plan(cls, length: int, slide: int, ts_start: int, ts_last_w: int) -> HandOff:
        """The hand-off for a target that first read ``ts_start``, the origin having last
        emitted the window that starts at ``ts_last_w``."""
        return cls(length, slide, migration_timestamp(ts_start, ts_last_w, slide))

    @property
    def activation(self) -> int:
        """The target's first window starts here; it drops the tuples before it."""
        return self.ts_mi + self.slide

    @property
    def origin_until(self) -> int:
        """The origin reads the tuples before this instant (its last window's end)."""
        return self.ts_mi + self.length

    @property
    def read_twice(self) -> int:
        """How long a stretch of the stream both jobs read (``length − slide``)."""
        return self.length - self.slide

    def origin_window(self, start: int) -> bool:
        """The origin emits the window that starts at ``start``."""
        return start <= self.ts_mi

    def target_window(self, start: int) -> bool:
        """The target emits the window that starts at ``start``."""
        return start >= self.activation

    def origin_reads(self, ts: int) -> bool:
        return ts < self.origin_until

    def target_reads(self, ts: int) -> bool:
        return ts >= self.activation

    def origin_emits_pair(self, ts_a: int, ts_b: int) -> bool:
        """Whether the origin emits a join pair of tuples at ``ts_a`` and ``ts_b`` (it
        joined them in one of its windows): not when both are the target's."""
        return min(ts_a, ts_b) < self.activation


def prefer_state_transfer(window_s: float, transfer_s: float, slack_s: float) -> bool:
    """StreamCloud's choice (002 §V): move the state instead of recreating the windows
    when moving it takes less time than a window needs to fill, and the class's slack
    (its target less its response time) covers the pause it causes."""
    return transfer_s < window_s and transfer_s <= slack_s


def switch_instant(now: int, lead: int, grid: int) -> int:
    """The hand-off's switch instant: the first multiple of ``grid`` (the window sizes'
    common multiple, so it is a window boundary for every window of the query) at least
    ``lead`` after ``now``, so both jobs hold their ranges before a tuple reaches it."""
    if grid <= 0:
        raise ParameterError("grid", grid, "must be > 0")
    if lead < 0:
        raise ParameterError("lead", lead, "must be >= 0")
    return -(-(now + lead) // grid) * grid

"""ALoMa's response-time monitor: normal / UT / OT, and the trend tests (001 §5.2.1, §5.2.3).

Each period the monitor takes one response time ``rt`` (the period's worst or mean output
response time, s) and classifies it against the delay target ``D``:

- ``OT``: ``rt > D``;
- ``UT``: ``rt >= ut_factor × O`` (and ``rt <= D``), where the "O point" ``O`` is the
  smallest response time seen so far; every ``refresh_periods`` observations ``O`` is
  doubled and then re-takes the smallest value seen since (spec §3.4);
- ``normal``: otherwise.

Trend flags (spec §3.4, defaults 0.1/0.1) feed Algorithm 1's "not increasing"/"not
decreasing" tests: *significantly below* is ``rt < (1 − below_margin) × D`` and not rising,
*critically above* is ``rt > (1 + above_margin) × D`` and not falling fast enough to reach
D within one response time (``rt − previous > −(rt − D) × T / rt``; Algorithm 1's literal
test is ``rt >= previous``, which lets a creeping drain hold a violation for dozens of
periods). With ``below_margin = 0`` the first test is Algorithm 1's ``rt <= previous`` (UT
already implies ``rt <= D``). The first observation has no trend and counts as flat.

*Rising over* is the mirror of *critically above*, with the same one-response-time
horizon: ``rt <= D`` but rising fast enough to pass D within one response time
(``rt + (rt − previous) × rt / T > D``). The tuples admitted now leave about one response
time from now, so when it holds they will be late although no output is late yet; ALoMa
treats it like OT. A capacity drop shows first this way: at half the capacity the response
time of the outputs grows by about T every period (001 §5.3.2.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spark_runner.core.observation import LoadState


@dataclass(frozen=True, slots=True)
class MonitorReading:
    """One classification.

    Attributes:
        state: normal / UT / OT.
        response_time_s: the response time classified, s.
        o_point_s: the O-point estimate after this observation, s.
        significantly_below: ``rt`` well below D and not rising ("not increasing" test).
        critically_above: ``rt`` well above D and not falling ("not decreasing" test).
        rising_over: ``rt`` still within D but rising fast enough to pass it within one
            response time.
    """

    state: LoadState
    response_time_s: float
    o_point_s: float
    significantly_below: bool
    critically_above: bool
    rising_over: bool = False


class ResponseTimeMonitor:
    """Stateful classifier; see the module docstring. Times in seconds."""

    def __init__(self, ut_factor: float, refresh_periods: int) -> None:
        self.ut_factor = ut_factor
        self.refresh_periods = refresh_periods
        self._o_point = math.inf
        self._previous: float | None = None
        self._since_refresh = 0
        self._last_state = LoadState.NORMAL

    @property
    def o_point_s(self) -> float:
        """Smallest response time seen (after refreshes); ``inf`` before any."""
        return self._o_point

    @property
    def previous_s(self) -> float | None:
        return self._previous

    @property
    def last_state(self) -> LoadState:
        return self._last_state

    def observe(
        self,
        rt: float,
        delay_target_s: float,
        above_margin: float,
        below_margin: float,
        period_s: float,
    ) -> MonitorReading:
        """Classify ``rt`` (s) and update the O point and the previous response time."""
        self._since_refresh += 1
        if self._since_refresh > self.refresh_periods and math.isfinite(self._o_point):
            self._o_point *= 2.0  # forget a stale minimum; rt re-takes it below
            self._since_refresh = 1
        self._o_point = min(self._o_point, rt)
        if rt > delay_target_s:
            state = LoadState.OT
        elif rt >= self.ut_factor * self._o_point:
            state = LoadState.UT
        else:
            state = LoadState.NORMAL
        prev = self._previous
        not_rising = prev is None or rt <= prev
        # Above D, a response time that falls too slowly to reach D within one response
        # time is "not decreasing": a creeping drain would hold the violation for long.
        # A first reading has no trend: it is not "not decreasing" (one late period at the
        # start, a warm-up's tail, must not make a class within its capacity shed; over
        # its capacity, Algorithm 1 sheds the excess at once whatever the trend).
        not_falling = (
            prev is not None and rt > 0 and rt - prev > -(rt - delay_target_s) * period_s / rt
        )
        # Within D, a response time rising fast enough to pass D within one response time.
        rising_over = (
            prev is not None
            and prev < rt <= delay_target_s
            and rt + (rt - prev) * rt / period_s > delay_target_s
        )
        reading = MonitorReading(
            state=state,
            response_time_s=rt,
            o_point_s=self._o_point,
            significantly_below=not_rising and rt < (1.0 - below_margin) * delay_target_s,
            critically_above=not_falling and rt > (1.0 + above_margin) * delay_target_s,
            rising_over=rising_over,
        )
        self._previous = rt
        self._last_state = state
        return reading

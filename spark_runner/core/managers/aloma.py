"""ALoMa, the adaptive load manager we ship by default (001 ch. 5, Algorithm 1).

ALoMa learns the class's capacity L_C (its headroom H, s/s) from two monitors that must
agree: the load monitor (incoming load L, Eq. 3.1) and the response-time monitor
(normal / UT / OT, see :mod:`response_monitor`). Every period (Algorithm 1)::

    if L > L_C:
        normal -> increase L_C (Eq. 5.1)
        OT     -> shed (L − L_C) more                       # both monitors agree
        UT     -> if shedding and rt not increasing: increase L_C; shed x % less (Eq. 5.2)
    else:
        OT     -> if rt not decreasing: decrease L_C (Eq. 5.1); shed x % more (Eq. 5.2)
        else   -> if shedding: shed (L_C − L) less

Interpretation choices (documented because the thesis leaves them open):

- **L is the load the class admits under the shed fraction in force**, ``L_in × (1 − s)``,
  with ``L_in`` the observation's load before shedding. This is what the thesis's load
  monitor measures (its shedders sit in the source operators, so their selectivity
  ``1 − s`` is part of the measured load coefficient), and it is the only reading under
  which every line is consistent: "shed (L − L_C) more" then admits exactly L_C, and
  "shed (L_C − L) less" admits exactly L_C again.
- **Pinned-load probe.** Once shedding pins the admitted load at L_C, ``L = L_C`` and
  "shed (L_C − L) less" is 0, so with a deterministic load ALoMa could never discover that
  it over-sheds (the thesis relies on measurement noise for this). When the response time
  is significantly below D and not rising while shedding, ALoMa therefore sheds
  ``max(L_C − L, x %)`` less (and, in the normal state with L > L_C, x % less besides
  raising L_C): the same Eq. 5.2 probe as Algorithm 1 line 12. The next period's L then
  exceeds L_C and lines 5–6 / 11 learn the capacity.
- "Not increasing" (lines 10, 12) is *significantly below*: ``rt < (1 − 0.1) D`` and not
  rising. "Not decreasing" (line 17) is *critically above*: ``rt > (1 + 0.1) D`` and not
  falling fast enough to reach D within one response time — Algorithm 1's literal
  ``rt >= previous`` lets a creeping drain hold a violation for dozens of periods. With
  ``below_margin = 0`` the first test is literal (see :mod:`response_monitor`).
- ``L > L_C`` is tested with a relative tolerance of 1e-9, so a load pinned at L_C by
  floating-point arithmetic counts as equal.
- A period without output tuples gives the response-time monitor nothing: ALoMa holds its
  shed fraction and L_C (and drops shedding if nothing arrived at all).
- ``k`` of Eq. 5.2 counts consecutive periods of the same probe (shed less, or shed
  more); it resets when the probe does not fire.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import (
    DEFAULT_HEADROOM,
    MIN_HEADROOM,
    LoadManager,
    ManagerParams,
    add_shed,
    remove_shed,
    shed_load_less,
    shed_load_more,
)
from spark_runner.core.managers.response_monitor import MonitorReading, ResponseTimeMonitor
from spark_runner.core.observation import Decision, LoadState, Observation
from spark_runner.core.params import (
    require_at_least,
    require_choice,
    require_greater,
    require_in_half_open,
    require_positive,
)

RESPONSE_STATISTICS = ("max", "mean")
_EPS = 1e-9  # relative tolerance: an admitted load pinned at L_C must not count as above it


def capacity_step(load: float, capacity: float) -> float:
    """Eq. 5.1: move the capacity estimate ``capacity`` toward ``load`` (both s/s).

    ``z = 100 × |L − L_C| / L_C`` (or 1 when that is below 1) and the estimate moves by
    ``log2(z + 1) / z × |L − L_C|``: gaps under 1 % close fully, big gaps only partly.
    Requires ``capacity > 0``.
    """
    gap = abs(load - capacity)
    if gap == 0.0:
        return capacity
    z = 100.0 * gap / capacity
    z = max(z, 1.0)
    step = math.log2(z + 1.0) / z * gap
    return capacity + step if load > capacity else capacity - step


def probe_percent(k: int) -> float:
    """Eq. 5.2: the probe size ``x = 1 + log2(k)`` in percent, for the k-th period in a row."""
    if k < 1:
        raise ValueError("k counts periods from 1")
    return 1.0 + math.log2(k)


@dataclass(frozen=True)
class AlomaParams(ManagerParams):
    """ALoMa's parameters (spec §3.4 defaults).

    Attributes:
        initial_headroom: starting capacity estimate L_C, s/s (> 0) [0.8]; a live change
            takes effect on ``reset()`` (use ``set_headroom`` to move L_C now).
        ut_factor: UT once the response time reaches this multiple of the O point (> 1) [2].
        o_point_refresh_periods: refresh the O point (double it) this often (>= 1) [100].
        above_margin: "critically above" margin on D for the not-decreasing test [0.1].
        below_margin: "significantly below" margin on D for the not-increasing test [0.1].
        response_statistic: which per-period response time the monitor classifies:
            "max" (worst case, matches D's definition) or "mean" ["max"].
    """

    initial_headroom: float = DEFAULT_HEADROOM
    ut_factor: float = 2.0
    o_point_refresh_periods: int = 100
    above_margin: float = 0.1
    below_margin: float = 0.1
    response_statistic: str = "max"

    def __post_init__(self) -> None:
        super().__post_init__()
        require_positive("initial_headroom", self.initial_headroom, " s/s")
        require_greater("ut_factor", self.ut_factor, 1.0)
        require_at_least("o_point_refresh_periods", self.o_point_refresh_periods, 1)
        require_in_half_open("above_margin", self.above_margin, 0.0, 1.0)
        require_in_half_open("below_margin", self.below_margin, 0.0, 1.0)
        require_choice("response_statistic", self.response_statistic, RESPONSE_STATISTICS)


class AlomaManager(LoadManager[AlomaParams]):
    """ALoMa (Algorithm 1). See the module docstring for the exact reading."""

    kind: ClassVar[str] = "aloma"
    params_type: ClassVar[type[ManagerParams]] = AlomaParams

    def reset(self) -> None:
        self._capacity = self._params.initial_headroom
        self._shed = 0.0
        self._monitor = ResponseTimeMonitor(
            self._params.ut_factor, self._params.o_point_refresh_periods
        )
        self._k_less = 0  # consecutive "shed x % less" probes
        self._k_more = 0  # consecutive "shed x % more" probes
        self._periods = 0

    @property
    def headroom(self) -> float:
        """The learnt capacity estimate L_C, s/s."""
        return self._capacity

    def set_headroom(self, headroom: float) -> None:
        super().set_headroom(headroom)
        self._capacity = max(headroom, MIN_HEADROOM)

    def _on_reconfigure(self, old: ManagerParams, new: ManagerParams) -> None:
        assert isinstance(new, AlomaParams)
        self._monitor.ut_factor = new.ut_factor
        self._monitor.refresh_periods = new.o_point_refresh_periods

    def step(self, obs: Observation) -> Decision:
        """One run of Algorithm 1 on the period that just ended."""
        p = self._params
        self._periods += 1
        shed = self._shed
        load = obs.load * (1.0 - shed)  # admitted load under the shed in force
        stats = obs.response_time
        if not stats.has_output:
            self._k_less = self._k_more = 0
            if obs.load <= 0.0:
                return self._finish(obs, 0.0, LoadState.NORMAL, action="idle")
            return self._finish(obs, shed, self._monitor.last_state, action="hold_no_output")

        rt = stats.max_s if p.response_statistic == "max" else stats.mean_s
        reading = self._monitor.observe(
            rt, p.delay_target_s, p.above_margin, p.below_margin, obs.period_s
        )
        state = reading.state
        shedding = shed > 0.0
        capacity = self._capacity
        action = "hold"
        probe_less = probe_more = False

        below = shedding and reading.significantly_below
        if load > capacity * (1.0 + _EPS):
            if state is LoadState.NORMAL:
                capacity = capacity_step(load, capacity)
                action = "increase_capacity"
                if below:  # completion: a pinned load never shows L > L_C on its own
                    probe_less = True
                    shed = remove_shed(shed, probe_percent(self._k_less + 1) / 100.0)
                    action = "increase_capacity_shed_less"
            elif state is LoadState.OT:
                shed = shed_load_more(shed, load, load - capacity)
                action = "shed_excess"
            elif below:
                capacity = capacity_step(load, capacity)
                probe_less = True
                shed = remove_shed(shed, probe_percent(self._k_less + 1) / 100.0)
                action = "increase_capacity_shed_less"
        elif state is LoadState.OT:
            if reading.critically_above:
                capacity = capacity_step(load, capacity)
                probe_more = True
                shed = add_shed(shed, probe_percent(self._k_more + 1) / 100.0)
                action = "decrease_capacity_shed_more"
        elif shedding:
            shed = shed_load_less(shed, load, capacity - load)
            action = "shed_gap_less"
            if below:
                by_probe = remove_shed(self._shed, probe_percent(self._k_less + 1) / 100.0)
                if by_probe < shed:
                    probe_less = True
                    shed = by_probe
                    action = "probe_shed_less"

        self._k_less = self._k_less + 1 if probe_less else 0
        self._k_more = self._k_more + 1 if probe_more else 0
        self._capacity = max(capacity, MIN_HEADROOM)
        return self._finish(obs, shed, state, action=action, reading=reading)

    def _finish(
        self,
        obs: Observation,
        shed: float,
        state: LoadState,
        *,
        action: str,
        reading: MonitorReading | None = None,
    ) -> Decision:
        o_point = self._monitor.o_point_s
        details = {
            "capacity": self._capacity,
            "usage": obs.load / self._capacity,
            "o_point_s": o_point if math.isfinite(o_point) else 0.0,
            "response_time_s": reading.response_time_s if reading else 0.0,
            "k_less": float(self._k_less),
            "k_more": float(self._k_more),
            "periods": float(self._periods),
        }
        return self._decide(obs, shed, state, action=action, details=details)

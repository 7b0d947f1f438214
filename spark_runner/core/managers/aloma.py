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
  ``below_margin = 0`` the first test is literal (see :mod:`response_monitor`). A first
  reading has no trend and is never "not decreasing": one late period at the start (a
  warm-up's tail) does not make a class within its capacity shed.
- ``L > L_C`` is tested with a relative tolerance of 1e-9, so a load pinned at L_C by
  floating-point arithmetic counts as equal.
- A period without output tuples gives the response-time monitor nothing: ALoMa holds its
  shed fraction and L_C (and drops shedding if nothing arrived at all).
- **k of Eq. 5.2 counts the periods of a situation, not of one action.** The thesis:
  "k is the number of times the situation has been observed in a sequence". The
  situations are *over the target* (OT, or rising over D, below) and *shedding more than
  needed* (shedding while not over the target). While over the target, "shed (L − L_C)
  more" and "decrease L_C, shed x % more" alternate as the measured L wobbles around L_C;
  counting each action separately reset k every other period and kept the probe at 1–2 %.

Capacity drops (001 §5.3.2.2: a background job takes half the processor, and ALoMa
"adapts very quickly" and holds D). With L pinned at L_C, Eq. 5.1 has no gap to close and
only the x % probe of line 19 acts, so Algorithm 1 alone re-learns a halved capacity in
about a hundred periods, and the work queued at the old speed keeps the response time over
D meanwhile (the shedder drops arriving tuples only, never queued ones). Three additions
make ALoMa meet the target again as soon as the work queued before the change has left —
about ten periods when the response time sat near D before — and act only while outputs
are late (or about to be) or the class's queue never emptied in a period:

- **Rising over D counts as OT.** The response-time monitor also flags a response time
  still within D but rising fast enough to pass it within one response time (the tuples
  admitted now leave about one response time later); ALoMa acts on it as on OT.
- **Measured capacity.** A class that had work queued for the whole period (queued work at
  its start at least the work completed in it, some left at its end) ran at its capacity,
  so the work it completed per second, ``S = L − ΔqL / T`` (admitted load minus the growth
  of the queued load qL, Eq. 4.1), *is* its capacity for that period. When the response
  time is over the target and ``S < L_C`` both monitors agree that L_C is too high and by
  how much: ``L_C ← S``. (Eq. 5.1 is cautious because a disagreement may come from stale
  statistics; here the capacity is measured, not inferred from a disagreement.) When a
  saturated period shows ``S > L_C`` the estimate is too low (an unlearned prior, a
  processor stall that made one period look slow, time a higher class left unused):
  ``L_C ← S`` as well; for this raise a period whose queue was not empty at its start and
  did not shrink counts as saturated too (arrivals stayed ahead of service: the work
  done is at least what the class can get). That reading may miss an idle spell before a
  burst, so it never cuts L_C. (On Spark a middle class served 0.40–0.46 s/s of time a
  higher class left unused, with L_C at 0.31–0.33 and a queue growing 4,500 → 9,800
  tuples, shed 37 % for two periods for a load of 0.52 s/s.) Either way L_C moves by at
  most a factor ``MAX_CAPACITY_FACTOR`` per period: one stalled or one lucky period is not
  the class's capacity. (Eq. 5.1 closed a gap of 0.26 → 0.40 s/s by 0.01 in a period on
  Spark, and the class shed half its load for the difference. Time borrowed from a
  higher class that later takes it back shows as a saturated, late period, and the rule
  above takes L_C down again.) A period the controller decided instead of ALoMa (DILoS
  holds a class: ``impose``) still ends with a queue, and the next period is measured
  from it.
- **Backlog drain and dead time.** Shedding acts on arriving tuples only, and a tuple
  admitted now waits behind the work already queued, ``qL / L_C``. While over the target,
  ALoMa sheds within one period the queued work beyond what L_C can do in
  ``drain_target × D``: it admits ``L_C − (qL − drain_target · D · L_C) / T`` (at least
  0). The outputs of the next response time arrived before this drain and cannot show its
  effect, so while they are over the target ALoMa does not react to them with lines
  7–8 / 16–19 (that would shed the same excess twice); it keeps admitting what the backlog
  allows, up to L_C, and L_C keeps following the measured capacity.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import (
    DEFAULT_HEADROOM,
    MIN_HEADROOM,
    LearntHeadroomManager,
    ManagerParams,
    add_shed,
    remove_shed,
    shed_load_less,
    shed_load_more,
)
from spark_runner.core.managers.response_monitor import MonitorReading, ResponseTimeMonitor
from spark_runner.core.observation import Decision, LoadState, Observation
from spark_runner.core.params import Rule

RESPONSE_STATISTICS = ("max", "mean")
_EPS = 1e-9  # relative tolerance: an admitted load pinned at L_C must not count as above it
MAX_CAPACITY_FACTOR = 2.0  # a measured capacity moves L_C by at most this factor a period
_NEVER = 1 << 30  # periods since a drain that never happened


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


def measured_capacity(
    admitted_load: float, queued_before_s: float, queued_after_s: float, period_s: float
) -> float | None:
    """The work a class completed per second in a period it was saturated, s/s, else None.

    Completed work is admitted work minus the growth of the queued work (Eq. 4.1):
    ``S = L − (qL_after − qL_before) / T``. The class was saturated — busy for the whole
    period, so S is its capacity — when the work queued at the start covers everything it
    completed and some work is still queued at the end.
    """
    service = admitted_load - (queued_after_s - queued_before_s) / period_s
    if service > 0.0 and queued_after_s > 0.0 and queued_before_s >= service * period_s:
        return service
    return None


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
        drain_target: while over the target, shed the queued work beyond what L_C can do
            in ``drain_target × D``, in (0, 1] [0.8]. Below 1 because a tuple's response
            time is its wait in the queues plus its own way through the operators.
        recovery_below: while shedding with the response time under ``recovery_below × D``
            (above the engine's floor: ``rt − floor < recovery_below × (D − floor)``)
            and a queue that drains within a period, L_C is far too low: it grows by
            ``recovery_growth`` per period, in [0, 1) [0.25]; 0 turns this off.
        recovery_growth: that growth factor per period (> 1) [2].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        "initial_headroom": (Rule.positive(" s/s"),),
        "ut_factor": (Rule.greater(1.0),),
        "o_point_refresh_periods": (Rule.at_least(1),),
        "above_margin": (Rule.half_open(0.0, 1.0),),
        "below_margin": (Rule.half_open(0.0, 1.0),),
        "response_statistic": (Rule.one_of(RESPONSE_STATISTICS),),
        "drain_target": (Rule.closed(0.0, 1.0), Rule.positive()),
        "recovery_below": (Rule.half_open(0.0, 1.0),),
        "recovery_growth": (Rule.greater(1.0),),
    }

    initial_headroom: float = DEFAULT_HEADROOM
    ut_factor: float = 2.0
    o_point_refresh_periods: int = 100
    above_margin: float = 0.1
    below_margin: float = 0.1
    response_statistic: str = "max"
    drain_target: float = 0.8
    recovery_below: float = 0.25
    recovery_growth: float = 2.0


class AlomaManager(LearntHeadroomManager[AlomaParams], kind="aloma", label="ALoMa (adaptive)"):
    """ALoMa (Algorithm 1). See the module docstring for the exact reading."""

    def reset(self) -> None:
        self._headroom = self._params.initial_headroom  # L_C, the learnt capacity estimate
        self._shed = 0.0
        self._monitor = ResponseTimeMonitor(
            self._params.ut_factor, self._params.o_point_refresh_periods
        )
        self._k_less = 0  # "shed x % less" probes in the current shedding-more-than-needed run
        self._k_more = 0  # consecutive periods over the target
        self._periods = 0
        self._queued_s = 0.0  # queued load qL at the end of the last period, s
        self._since_drain = _NEVER  # periods since ALoMa last shed backlog

    def _on_impose(self, obs: Observation) -> None:
        # a held period passed too: the next step measures against the queue it left
        self._queued_s = obs.queued_load_s
        self._since_drain = min(self._since_drain + 1, _NEVER)

    def _on_reconfigure(self, old: ManagerParams, new: ManagerParams) -> None:
        assert isinstance(new, AlomaParams)
        self._monitor.ut_factor = new.ut_factor
        self._monitor.refresh_periods = new.o_point_refresh_periods

    def step(self, obs: Observation) -> Decision:
        """One run of Algorithm 1 on the period that just ended."""
        p = self._params
        self._periods += 1
        self._since_drain = min(self._since_drain + 1, _NEVER)
        shed = self._shed
        load = obs.load * (1.0 - shed)  # admitted load under the shed in force
        service, raised = self._served(obs, load)
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
        over = reading.state is LoadState.OT or reading.rising_over
        k_over = self._k_more + 1 if over else 0
        actions: list[str] = []
        capacity = self._measured(service, raised, over, actions)
        # outputs that arrived before the last drain cannot show its effect
        stale = over and rt > self._since_drain * obs.period_s
        capacity, shed, probe_less = self._ladder(
            load, capacity, reading, over=over, stale=stale, k_over=k_over, actions=actions
        )
        capacity, shed, probe_less = self._recover(
            obs, rt, capacity, shed, probe_less, over=over, actions=actions
        )
        capacity = max(capacity, MIN_HEADROOM)
        if over and obs.load > 0.0 and not obs.stale_first:
            shed = self._drain(obs, capacity, shed, stale, actions)

        self._k_more = k_over
        if over or not self._shed > 0.0:
            self._k_less = 0
        elif probe_less:
            self._k_less += 1
        self._headroom = capacity
        return self._finish(
            obs,
            shed,
            reading.state,
            action="+".join(actions) or "hold",
            reading=reading,
            service=raised,
        )

    def _served(self, obs: Observation, load: float) -> tuple[float | None, float | None]:
        """The work the class did in the period, (as its capacity when it was saturated,
        as a floor of it when saturated or keeping up; None otherwise)."""
        period = obs.period_s
        # work shed from the queue as stale left it without being served
        dropped_s = obs.stale_shed_count * obs.cost_per_tuple_s
        queued_after_s = obs.queued_load_s + dropped_s
        saturated = measured_capacity(load, self._queued_s, queued_after_s, period) is not None
        # a queue that was not empty and did not shrink: busy all period, as far as the
        # period's two ends tell (enough to raise L_C, not to cut it; see module)
        kept_up = 0.0 < self._queued_s <= queued_after_s
        grown_s = queued_after_s - self._queued_s
        # the work it did; saturated, the processor time it got is its capacity
        done = obs.busy_load if obs.busy_load is not None else load - grown_s / period
        self._queued_s = obs.queued_load_s
        return (done if saturated else None), (done if saturated or kept_up else None)

    def _measured(
        self, service: float | None, raised: float | None, over: bool, actions: list[str]
    ) -> float:
        """L_C after what the period measured."""
        capacity = self._headroom
        if service is not None and over and service < capacity:
            # saturated and late: the measured capacity is L_C, by at most a bounded step
            # (one slow period, a stall, is not the class's capacity)
            capacity = max(service, capacity / MAX_CAPACITY_FACTOR)
            actions.append("measured_capacity")
        elif raised is not None and raised > capacity:
            # saturated faster than L_C: the measured capacity is L_C, by at most a bounded
            # step (one fast period is not the class's capacity either)
            capacity = min(raised, capacity * MAX_CAPACITY_FACTOR)
            actions.append("increase_capacity_measured")
        return capacity

    def _ladder(
        self,
        load: float,
        capacity: float,
        reading: MonitorReading,
        *,
        over: bool,
        stale: bool,
        k_over: int,
        actions: list[str],
    ) -> tuple[float, float, bool]:
        """Algorithm 1's cases on the admitted load against L_C: (L_C, shed, whether the
        class probes shedding less)."""
        shed = self._shed
        shedding = shed > 0.0
        below = shedding and reading.significantly_below
        probe_less = False
        if stale:
            actions.append("wait_for_drain")
        elif load > capacity * (1.0 + _EPS):
            if reading.state is LoadState.NORMAL and not over:
                capacity = capacity_step(load, capacity)
                actions.append("increase_capacity")
                if below:  # completion: a pinned load never shows L > L_C on its own
                    probe_less = True
                    shed = remove_shed(shed, probe_percent(self._k_less + 1) / 100.0)
                    actions[-1] = "increase_capacity_shed_less"
            elif over:
                shed = shed_load_more(shed, load, load - capacity)
                actions.append("shed_excess")
            elif below:
                capacity = capacity_step(load, capacity)
                probe_less = True
                shed = remove_shed(shed, probe_percent(self._k_less + 1) / 100.0)
                actions.append("increase_capacity_shed_less")
        elif over:
            if reading.critically_above:
                capacity = capacity_step(load, capacity)
                shed = add_shed(shed, probe_percent(k_over) / 100.0)
                actions.append("decrease_capacity_shed_more")
        elif shedding:
            shed = shed_load_less(shed, load, capacity - load)
            actions.append("shed_gap_less")
            if below:
                by_probe = remove_shed(self._shed, probe_percent(self._k_less + 1) / 100.0)
                if by_probe < shed:
                    probe_less = True
                    shed = by_probe
                    actions[-1] = "probe_shed_less"
        return capacity, shed, probe_less

    def _recover(
        self,
        obs: Observation,
        rt: float,
        capacity: float,
        shed: float,
        probe_less: bool,
        *,
        over: bool,
        actions: list[str],
    ) -> tuple[float, float, bool]:
        """Far below the target while shedding, L_C is far too low (a stall or a burst
        measured as capacity): grow it geometrically while the queue keeps draining."""
        p = self._params
        drained = obs.queued_load_s <= capacity * obs.period_s and obs.load > 0.0
        floor = min(obs.floor_s or 0.0, p.delay_target_s)  # admission controls only rt above it
        far_below = rt - floor < p.recovery_below * (p.delay_target_s - floor)
        if self._shed > 0.0 and not over and drained and far_below:
            capacity = max(capacity, min(capacity * p.recovery_growth, obs.load))
            shed = min(shed, max(0.0, 1.0 - capacity / obs.load))
            probe_less = False
            actions.append("recover_capacity")
        return capacity, shed, probe_less

    def _drain(
        self, obs: Observation, capacity: float, shed: float, stale: bool, actions: list[str]
    ) -> float:
        """Late: a tuple admitted now waits behind qL, so shed the work beyond
        drain_target × D (where the engine sheds stale tuples first, it drains the
        backlog itself and this does not apply)."""
        excess = (
            obs.queued_load_s - self._params.drain_target * self._params.delay_target_s * capacity
        )
        if excess > 0.0 or stale:
            admit = max(0.0, capacity - max(excess, 0.0) / obs.period_s)
            by_backlog = max(0.0, 1.0 - admit / obs.load)
            if excess > 0.0 and by_backlog > shed:
                self._since_drain = 0
                actions.append("shed_backlog")
            shed = by_backlog if stale else max(shed, by_backlog)
        return shed

    def _finish(
        self,
        obs: Observation,
        shed: float,
        state: LoadState,
        *,
        action: str,
        reading: MonitorReading | None = None,
        service: float | None = None,
    ) -> Decision:
        o_point = self._monitor.o_point_s
        details = {
            "capacity": self._headroom,
            "usage": obs.load / self._headroom,
            "o_point_s": o_point if math.isfinite(o_point) else 0.0,
            "response_time_s": reading.response_time_s if reading else 0.0,
            "k_less": float(self._k_less),
            "k_more": float(self._k_more),
            "measured_capacity": service if service is not None else 0.0,
            "periods": float(self._periods),
        }
        return self._decide(obs, shed, state, action=action, details=details)

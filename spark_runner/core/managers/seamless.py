"""SEaMLeSS: queued-load delay model + feedback control + headroom auto-adjustment (001 ch. 4).

Each period (Eq. 4.1–4.3)::

    qL   = queued load now (Eq. 4.1, from the observation), s of work
    y    = qL / H                                  (Eq. 4.2), s
    u    = H × [b0 e + b1 e_prev] − a u_prev,  e = y − D   (Eq. 4.3)
    v    = u + H × T                               work admitted next period
    shed = (L × T − v) / (L × T) if positive       L: last period's incoming load

Headroom auto-adjustment (001 §4.2.2): over the last P periods *in which shedding was
applied*, D' is the mean measured response time (output-weighted); then ``H ← H × D/D'``.
Adjustments happen once per P such periods (non-overlapping windows, so one window's data
is used once). Our addition: one adjustment changes H by at most ``max_adjust_factor``
either way, so a window of atypically short response times (shedding just started) cannot
inflate H so far that SEaMLeSS stops shedding and never collects another window.

Limitation (001 §4.4): the delay model assumes a fair scheduler; under a priority
scheduler the low class's delay is underestimated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import (
    DEFAULT_HEADROOM,
    MIN_HEADROOM,
    LearntHeadroomManager,
    ManagerParams,
)
from spark_runner.core.managers.delay_controller import (
    DEFAULT_POLES,
    DelayController,
    gains_from_poles,
)
from spark_runner.core.observation import Decision, Observation
from spark_runner.core.params import Rule


@dataclass(frozen=True)
class SeamlessParams(ManagerParams):
    """SEaMLeSS parameters.

    Attributes:
        initial_headroom: starting H, s/s (> 0) [0.8].
        adjust_periods: P, shedding periods per headroom adjustment (>= 1) [30].
        max_adjust_factor: bound on one adjustment's ratio D/D' (> 1) [2].
        pole1, pole2: closed-loop poles of the Eq. 4.3 controller, in [0, 1) [0.5, 0.5].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        "initial_headroom": (Rule.positive(" s/s"),),
        "adjust_periods": (Rule.at_least(1),),
        "max_adjust_factor": (Rule.greater(1.0),),
        "pole1": (Rule.half_open(0.0, 1.0),),
        "pole2": (Rule.half_open(0.0, 1.0),),
    }

    initial_headroom: float = DEFAULT_HEADROOM
    adjust_periods: int = 30
    max_adjust_factor: float = 2.0
    pole1: float = DEFAULT_POLES[0]
    pole2: float = DEFAULT_POLES[1]


class SeamlessManager(LearntHeadroomManager[SeamlessParams], kind="seamless", label="SEaMLeSS"):
    """SEaMLeSS; see the module docstring."""

    def reset(self) -> None:
        p = self._params
        self._headroom = p.initial_headroom
        self._shed = 0.0
        self._controller = DelayController(gains_from_poles(p.pole1, p.pole2))
        self._window_rt_sum = 0.0  # Σ mean response time × outputs over shedding periods
        self._window_outputs = 0
        self._window_periods = 0
        self._last_d_prime = 0.0

    def _on_reconfigure(self, old: ManagerParams, new: ManagerParams) -> None:
        assert isinstance(new, SeamlessParams)
        self._controller.gains = gains_from_poles(new.pole1, new.pole2)

    def step(self, obs: Observation) -> Decision:
        p = self._params
        adjusted = self._collect_and_adjust(obs)
        ctl, state = self._controller.control(
            obs,
            p,
            queued_work_s=obs.queued_load_s,
            headroom=self._headroom,
            incoming_work_s=obs.load * obs.period_s,
        )
        details = {
            "headroom": self._headroom,
            "queued_load_s": obs.queued_load_s,
            "error_s": ctl.error_s,
            "u_s": ctl.u_s,
            "admit_s": ctl.admit_s,
            "window_periods": float(self._window_periods),
            "last_d_prime_s": self._last_d_prime,
        }
        return self._decide(
            obs,
            ctl.shed_fraction,
            state,
            action="adjust_headroom"
            if adjusted
            else ("shed" if ctl.shed_fraction > 0 else "admit_all"),
            estimated_delay_s=ctl.estimated_delay_s,
            details=details,
        )

    def _collect_and_adjust(self, obs: Observation) -> bool:
        """Add a shedding period's response time to the window; adjust H when it is full."""
        p = self._params
        if self._shed <= 0 or not obs.response_time.has_output:
            return False
        self._window_rt_sum += obs.response_time.mean_s * obs.response_time.count
        self._window_outputs += obs.response_time.count
        self._window_periods += 1
        if self._window_periods < p.adjust_periods:
            return False
        d_prime = self._window_rt_sum / self._window_outputs
        self._window_rt_sum, self._window_outputs, self._window_periods = 0.0, 0, 0
        self._last_d_prime = d_prime
        if d_prime <= 0:
            return False
        ratio = min(max(p.delay_target_s / d_prime, 1.0 / p.max_adjust_factor), p.max_adjust_factor)
        self._headroom = max(self._headroom * ratio, MIN_HEADROOM)
        return True

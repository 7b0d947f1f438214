"""The feedback controller of CTRL and SEaMLeSS (001 Eq. 4.3), with gains by pole placement.

Plant. Let ``qL_n`` be the queued load (seconds of work) at the end of period ``n`` and
``y_n = qL_n / H`` the delay a tuple arriving next would see (Eq. 4.2; Eq. 3.3 with the
virtual queue: ``qL = c × q``). If ``u_n`` seconds of work are admitted in period ``n+1``
beyond the ``H × T`` the system processes, then ``qL_{n+1} = qL_n + u_n`` and so::

    y_{n+1} = y_n + u_n / H            # an integrator: G(z) = 1 / (z − 1) from u/H to y

Controller (Eq. 4.3, with ``e_n = y_n − D``)::

    u_n = H × [b0 e_n + b1 e_{n−1}] − a u_{n−1}

i.e. ``C(z) = −(b0 z + b1) / (z + a)`` from the reference error ``D − y`` to ``u/H``. The
closed loop's characteristic polynomial is ``(z + a)(z − 1) − (b0 z + b1)``. We choose
``a = −1`` (integral action: the estimate y reaches D with no offset even when the true
processing rate differs from ``H × T`` by a constant) and place both closed-loop poles at
``p1``, ``p2``::

    z² − (p1 + p2) z + p1 p2   =>   a = −1,  b0 = p1 + p2 − 2,  b1 = 1 − p1 p2

**Chosen poles: p1 = p2 = 0.5** (``a = −1, b0 = −1, b1 = 0.75``): real, so no ringing;
the error halves every period (settles to 2 % in about 8 periods); with the admission
clamp below the response to a step overload rises to D without overshoot (see
tests/core/test_delay_controller.py). Poles nearer 0 react faster but amplify noise in
the measured queue; nearer 1 settle slowly.

Anti-windup: the admission ``v = u + H × T`` is clamped to what can actually be admitted
(``[incoming × (1 − max_shed), incoming]``), and the controller remembers the *applied*
``u``, so a long underload (``u`` ≫ 0) or a saturated shedder does not wind the integrator.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_runner.core.managers.base import ManagerParams, display_state
from spark_runner.core.observation import LoadState, Observation

DEFAULT_POLES = (0.5, 0.5)


@dataclass(frozen=True, slots=True)
class Gains:
    """Controller gains of Eq. 4.3 in the spec's sign convention (``e = y − D``)."""

    a: float
    b0: float
    b1: float


def gains_from_poles(p1: float, p2: float) -> Gains:
    """Gains placing the closed-loop poles at ``p1``, ``p2`` (with ``a = −1``, see module)."""
    return Gains(a=-1.0, b0=p1 + p2 - 2.0, b1=1.0 - p1 * p2)


@dataclass(frozen=True, slots=True)
class ControlStep:
    """One controller output.

    Attributes:
        estimated_delay_s: y, s.
        error_s: e = y − D, s.
        u_s: the controller's requested net queue change for next period, s of work.
        admit_s: work admitted next period after the clamp, s.
        shed_fraction: ``1 − admit / incoming`` (0 when nothing comes in).
    """

    estimated_delay_s: float
    error_s: float
    u_s: float
    admit_s: float
    shed_fraction: float


class DelayController:
    """Eq. 4.3 with memory of the last error and the last applied ``u``. Units: seconds."""

    def __init__(self, gains: Gains) -> None:
        self.gains = gains
        self.reset()

    def reset(self) -> None:
        self._e_prev = 0.0
        self._u_prev = 0.0
        self._started = False

    def step(
        self,
        *,
        queued_work_s: float,
        headroom: float,
        period_s: float,
        delay_target_s: float,
        incoming_work_s: float,
        max_shed: float,
    ) -> ControlStep:
        """Compute next period's admission from the queued work (qL) now.

        ``incoming_work_s`` is the work expected to arrive next period before shedding
        (the last period's, 001 §4.2.1: L^k is approximated by L^{k−1}).
        """
        g = self.gains
        y = queued_work_s / headroom
        e = y - delay_target_s
        e_prev = self._e_prev if self._started else e
        u = headroom * (g.b0 * e + g.b1 * e_prev) - g.a * self._u_prev
        capacity_work = headroom * period_s
        if incoming_work_s > 0:
            admit = min(max(u + capacity_work, incoming_work_s * (1.0 - max_shed)), incoming_work_s)
            shed = 1.0 - admit / incoming_work_s
        else:
            admit, shed = 0.0, 0.0
        self._e_prev = e
        self._u_prev = admit - capacity_work  # applied, not requested: anti-windup
        self._started = True
        return ControlStep(y, e, u, admit, max(0.0, shed))

    def control(
        self,
        obs: Observation,
        params: ManagerParams,
        *,
        queued_work_s: float,
        headroom: float,
        incoming_work_s: float,
    ) -> tuple[ControlStep, LoadState]:
        """:meth:`step` for a manager after the period ``obs``, under its delay target and
        shed cap, with the state to display: overloaded while it sheds or estimates a
        delay over the target."""
        ctl = self.step(
            queued_work_s=queued_work_s,
            headroom=headroom,
            period_s=obs.period_s,
            delay_target_s=params.delay_target_s,
            incoming_work_s=incoming_work_s,
            max_shed=params.max_shed,
        )
        overloaded = ctl.shed_fraction > 0 or ctl.error_s > 0
        return ctl, display_state(obs, params.delay_target_s, overloaded)

"""CTRL (Tu et al., VLDB 2006), the control-based baseline (001 §3.3.1, Eq. 3.3).

CTRL keeps a *virtual queue* of tuples, ``q ← max(0, q + arrived − shed − departed)``,
and estimates the delay of the tuples arriving next as ``y = (c / H) × q`` (Eq. 3.3), with
``c`` the average cost per tuple (s/tuple) and ``H`` a hand-set headroom. The same
controller as SEaMLeSS (Eq. 4.3, :mod:`delay_controller`; poles 0.5/0.5) then decides how
much work may enter next period; ``(u + H × T) / c`` tuples are admitted.

Departures are counted where CTRL counts them, at the outputs (f_out): ``departed`` is the
observation's output-tuple count. That is exact for a one-in-one-out plan and wrong as soon
as fan-out, joins or filters change the number of tuples: with shared operators one input
yields several outputs, the virtual queue stays empty and CTRL never sheds (001 Table 5) —
the known weakness the product reproduces on purpose. ``H`` is never adjusted: CTRL needs it
tuned by hand, and a capacity change makes it wrong (001 Fig. 16).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import (
    FixedHeadroomManager,
    FixedHeadroomParams,
    ManagerParams,
    display_state,
)
from spark_runner.core.managers.delay_controller import (
    DEFAULT_POLES,
    DelayController,
    gains_from_poles,
)
from spark_runner.core.observation import Decision, Observation
from spark_runner.core.params import Rule


@dataclass(frozen=True)
class CtrlParams(FixedHeadroomParams):
    """CTRL parameters.

    Attributes:
        headroom: the hand-set headroom H, s/s (> 0) [0.8].
        cost_per_tuple_s: c when the observation carries none, s/tuple (>= 0) [0: use
            the measured cost].
        pole1, pole2: closed-loop poles of the controller, in [0, 1) [0.5, 0.5].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        "cost_per_tuple_s": (Rule.non_negative(" s/tuple"),),
        "pole1": (Rule.half_open(0.0, 1.0),),
        "pole2": (Rule.half_open(0.0, 1.0),),
    }

    cost_per_tuple_s: float = 0.0
    pole1: float = DEFAULT_POLES[0]
    pole2: float = DEFAULT_POLES[1]


class CtrlManager(FixedHeadroomManager[CtrlParams], kind="ctrl", label="CTRL (feedback control)"):
    """CTRL; see the module docstring."""

    def reset(self) -> None:
        p = self._params
        self._shed = 0.0
        self._virtual_queue = 0.0
        self._cost = p.cost_per_tuple_s
        self._controller = DelayController(gains_from_poles(p.pole1, p.pole2))

    @property
    def virtual_queue(self) -> float:
        """Tuples in the virtual queue."""
        return self._virtual_queue

    def _on_reconfigure(self, old: ManagerParams, new: ManagerParams) -> None:
        assert isinstance(new, CtrlParams)
        self._controller.gains = gains_from_poles(new.pole1, new.pole2)
        if new.cost_per_tuple_s > 0:
            self._cost = new.cost_per_tuple_s

    def step(self, obs: Observation) -> Decision:
        p = self._params
        if obs.cost_per_tuple_s > 0:
            self._cost = obs.cost_per_tuple_s
        self._virtual_queue = max(
            0.0, self._virtual_queue + obs.arrived_count - obs.shed_count - obs.output_count
        )
        if self._cost <= 0:  # no cost known yet: the delay model says nothing
            state = display_state(obs, p.delay_target_s, False)
            return self._decide(obs, 0.0, state, action="no_cost", details=self._details(0.0))
        ctl, state = self._controller.control(
            obs,
            p,
            queued_work_s=self._cost * self._virtual_queue,
            headroom=p.headroom,
            incoming_work_s=self._cost * obs.arrived_count,
        )
        return self._decide(
            obs,
            ctl.shed_fraction,
            state,
            action="shed" if ctl.shed_fraction > 0 else "admit_all",
            estimated_delay_s=ctl.estimated_delay_s,
            details=self._details(ctl.u_s),
        )

    def _details(self, u_s: float) -> dict[str, float]:
        return {
            "virtual_queue": self._virtual_queue,
            "cost_per_tuple_s": self._cost,
            "headroom": self._params.headroom,
            "u_s": u_s,
        }

"""Aurora, the open-loop baseline (001 §3.3.1).

Shed ``max(0, L − H) / L`` with a hand-set headroom H (s/s). Not delay-target aware and very
sensitive to H (001 Table 1: H 0.94 → no violation, 41.9 % loss; H 0.99 → 4.6 s average
violation).
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_runner.core.managers.base import FixedHeadroomManager, FixedHeadroomParams
from spark_runner.core.observation import Decision, Observation


def aurora_shed_fraction(load: float, headroom: float) -> float:
    """Aurora's excess share ``max(0, L − H) / L`` (before the ``max_shed`` cap)."""
    if load <= 0:
        return 0.0
    return max(0.0, load - headroom) / load


@dataclass(frozen=True)
class AuroraParams(FixedHeadroomParams):
    """Aurora's parameters.

    Attributes:
        headroom: the fixed headroom H, s/s (> 0) [0.8].
    """


class AuroraManager(
    FixedHeadroomManager[AuroraParams], kind="aurora", label="Aurora (fixed headroom)"
):
    """Aurora: shed the excess over a fixed headroom."""

    def step(self, obs: Observation) -> Decision:
        p = self._params
        shed = aurora_shed_fraction(obs.load, p.headroom)
        details = {"headroom": p.headroom, "usage": obs.load / p.headroom}
        return self._open_loop(obs, shed, "shed_excess", details)

"""ESJ's linear shed-factor policy (spec §5), an alternative open-loop shed policy.

With utilisation ``τ = L / H`` (load over capacity): ``SF = 0`` for ``τ < τ2``, else
``SF = B + (1 − B)/(1 − τ2) × (τ − τ2)`` with base B in [0, 1], capped at ``max_shed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from spark_runner.core.managers.base import FixedHeadroomManager, FixedHeadroomParams
from spark_runner.core.observation import Decision, Observation
from spark_runner.core.params import Rule
from spark_runner.core.thresholds import TAUS, THRESHOLD_RULE, validate_thresholds


def linear_shed_factor(utilisation: float, tau2: float, base: float) -> float:
    """ESJ's linear shed factor (spec §5) before the ``max_shed`` cap."""
    if utilisation < tau2:
        return 0.0
    return base + (1.0 - base) / (1.0 - tau2) * (utilisation - tau2)


@dataclass(frozen=True)
class LinearParams(FixedHeadroomParams):
    """ESJ linear shed policy parameters.

    Attributes:
        headroom: capacity W the utilisation is measured against, s/s (> 0) [0.8].
        tau0..tau3: utilisation thresholds, ``0 < τ0 < τ1 < τ2 < τ3 <= 1``
            [0.2, 0.4, 0.8, 0.95]; only τ2 (start shedding) acts here.
        base: shed factor B at ``τ = τ2``, in [0, 1] [0].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        **{tau: (Rule.checked_elsewhere(THRESHOLD_RULE),) for tau in TAUS},
        "base": (Rule.closed(0.0, 1.0),),
    }

    tau0: float = 0.2
    tau1: float = 0.4
    tau2: float = 0.8
    tau3: float = 0.95
    base: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        validate_thresholds(self.tau0, self.tau1, self.tau2, self.tau3)


class LinearManager(
    FixedHeadroomManager[LinearParams], kind="linear", label="linear (threshold based)"
):
    """Shed a linear function of utilisation above τ2."""

    def step(self, obs: Observation) -> Decision:
        p = self._params
        utilisation = obs.load / p.headroom
        shed = linear_shed_factor(utilisation, p.tau2, p.base)
        details = {"utilisation": utilisation, "headroom": p.headroom}
        return self._open_loop(obs, shed, "shed", details)

"""Utilisation thresholds τ0..τ3 of a query class (spec §5).

τ0 release executors, τ1 the usage a resize aims at, τ2 start shedding, τ3 add
executors (an elastic job takes the lowest of its classes': :mod:`elastic`); they must
satisfy ``0 < τ0 < τ1 < τ2 < τ3 <= 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_runner.core.class_settings import default_of
from spark_runner.core.errors import ParameterError

THRESHOLD_RULE = "thresholds must satisfy 0 < tau0 < tau1 < tau2 < tau3 <= 1"
TAUS = ("tau0", "tau1", "tau2", "tau3")
"""The thresholds' field names, in order."""


@dataclass(frozen=True)
class Thresholds:
    """Ordered utilisation thresholds, each a fraction of capacity in (0, 1]."""

    tau0: float = default_of("tau0")
    tau1: float = default_of("tau1")
    tau2: float = default_of("tau2")
    tau3: float = default_of("tau3")

    def __post_init__(self) -> None:
        validate_thresholds(self.tau0, self.tau1, self.tau2, self.tau3)


def validate_thresholds(tau0: float, tau1: float, tau2: float, tau3: float) -> None:
    """Raise ``ParameterError`` naming the first threshold that breaks the ordering."""
    if not tau0 > 0:
        raise ParameterError("tau0", tau0, f"must be > 0 ({THRESHOLD_RULE})")
    if not tau1 > tau0:
        raise ParameterError("tau1", tau1, f"must be > tau0={tau0} ({THRESHOLD_RULE})")
    if not tau2 > tau1:
        raise ParameterError("tau2", tau2, f"must be > tau1={tau1} ({THRESHOLD_RULE})")
    if not tau3 > tau2:
        raise ParameterError("tau3", tau3, f"must be > tau2={tau2} ({THRESHOLD_RULE})")
    if not tau3 <= 1:
        raise ParameterError("tau3", tau3, f"must be <= 1 ({THRESHOLD_RULE})")


def validate_class_parameters(priority: float, delay_target_s: float) -> None:
    """Priority and delay target of a query class must both be positive."""
    if not priority > 0:
        raise ParameterError("priority", priority, "must be > 0 (larger means more important)")
    if not delay_target_s > 0:
        raise ParameterError("delay_target_s", delay_target_s, "must be > 0 seconds")

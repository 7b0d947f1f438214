"""The class level of the two-level CQC scheduler (001 §6.1.2): weighted round robin quotas.

Per control period T, class k gets ``T_k = P_k / Σ_i P_i × T`` (its original share
``q0_k = P_k / Σ P``). Inside a class an operator scheduler orders the work (any policy may
plug in); a class that runs out of work before its quota hands the rest of the period to
the next class (implicit sharing). DILoS later moves quota between classes
(:mod:`redistribution`); this module only holds the arithmetic of shares and seconds, and
the order in which classes are served (highest priority first, ties by name).
"""

from __future__ import annotations

from collections.abc import Mapping

from spark_runner.core.errors import ParameterError


def original_shares(priorities: Mapping[str, float], total: float = 1.0) -> dict[str, float]:
    """``P_k / Σ P × total`` for every class (WRR)."""
    if not priorities:
        raise ParameterError("classes", [], "at least one class is needed")
    for name, p in priorities.items():
        if not p > 0:
            raise ParameterError(f"{name}.priority", p, "must be > 0 (larger means more important)")
    weight = sum(priorities.values())
    return {name: p / weight * total for name, p in priorities.items()}


def priority_order(priorities: Mapping[str, float]) -> tuple[str, ...]:
    """The classes highest priority first; equal priorities by name."""
    return tuple(sorted(priorities, key=lambda n: (-priorities[n], n)))


def quota_seconds(quotas: Mapping[str, float], period_s: float) -> dict[str, float]:
    """Time quotas ``T_k = q_k × T`` in seconds for a period of ``period_s`` seconds."""
    if not period_s > 0:
        raise ParameterError("period_s", period_s, "must be > 0 seconds")
    return {name: q * period_s for name, q in quotas.items()}

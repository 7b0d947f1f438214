"""Plausible per-class metric samples with every field filled, for the dashboard
freshness benchmark, which plays a job to time the live view alone (no Spark: a sample's
time from leaving the job to its point on screen must not include a batch's).

The samples follow a simple model (a load surge on the lowest class, DILoS redistributing
capacity every ``REDISTRIBUTE_EVERY`` periods, shedding what exceeds the headroom), so
that every chart has something to redraw. Deterministic: the same ``period`` gives the
same samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

REDISTRIBUTE_EVERY = 10


@dataclass(frozen=True)
class SyntheticClass:
    name: str
    priority: float
    delay_target_s: float
    rate_per_s: float
    cost_s: float  # processing time per tuple
    base_share: float  # its share of the processor at the start
    manager: str = "aloma"


CLASSES: tuple[SyntheticClass, ...] = (
    SyntheticClass("fraud", 6, 1.5, 120, 0.0025, 0.40),
    SyntheticClass("payments", 4, 2.0, 160, 0.0020, 0.35),
    SyntheticClass("clicks", 1, 5.0, 400, 0.0005, 0.25),
)


def synthetic_period(
    period: int,
    t: float,
    classes: Sequence[SyntheticClass] = CLASSES,
    period_s: float = 1.0,
    state_offset: int = 0,
    load_factor: float = 1.0,
) -> list[dict[str, object]]:
    """One control period's samples (``seq = period``, ending at epoch ``t``);
    ``state_offset`` shifts the surge, ``load_factor`` scales every arrival rate."""
    samples: list[dict[str, object]] = []
    surge = 1.0 + 0.9 * max(0.0, math.sin(math.pi * ((period + state_offset) % 120) / 120))
    redistributed = period % REDISTRIBUTE_EVERY == REDISTRIBUTE_EVERY - 1
    for k, cls in enumerate(classes):
        wobble = 1.0 + 0.08 * math.sin(period * 0.7 + k)
        rate = cls.rate_per_s * load_factor * wobble * (surge if k == len(classes) - 1 else 1.0)
        load = rate * cls.cost_s
        # Higher classes get capacity back from the surging one at each redistribution.
        lent = 0.05 * (surge - 1.0) * (1 if k < len(classes) - 1 else -1)
        share = min(0.95, max(0.05, cls.base_share + lent))
        headroom = share * (1.0 + 0.05 * math.sin(period * 0.3 + k))
        usage = load / headroom
        shed = min(0.95, max(0.0, 1.0 - headroom / load)) if usage > 1 else 0.0
        oracle = max(0.0, shed - 0.03)
        admitted = int(rate * period_s * (1 - shed))
        # Shedding holds the admitted load near the headroom; what is left over (the
        # manager lagging behind the surge) shows as a response time above the target.
        pressure = max(0.0, usage - 1.0) * 0.35
        mean_s = cls.delay_target_s * (0.3 + 0.3 * min(usage, 1.0) + pressure) * wobble
        p95_s = mean_s * 1.5
        if p95_s > cls.delay_target_s * 1.1:
            state = "OT"
        elif shed > 0 and p95_s < cls.delay_target_s * 0.9:
            state = "UT"
        elif usage > 1:
            state = "overloaded"
        else:
            state = "normal"
        samples.append(
            {
                "class_name": cls.name,
                "seq": period,
                "t": t,
                "period_s": period_s,
                "arrived_count": int(rate * period_s),
                "output_count": int(admitted * 0.5),
                "arrival_rate": rate,
                "response_time_mean_s": mean_s,
                "response_time_max_s": mean_s * 1.8,
                "response_time_p50_s": mean_s * 0.9,
                "response_time_p95_s": p95_s,
                "response_time_p99_s": mean_s * 2.0,
                "violation_mean_s": max(0.0, mean_s - cls.delay_target_s) * 0.5,
                "violation_max_s": max(0.0, mean_s * 1.8 - cls.delay_target_s),
                "admitted_count": admitted,
                "shed_count": int(rate * period_s) - admitted,
                "waiting_count": int(10 * pressure),
                "load": load,
                "capacity_share": share,
                "headroom": headroom,
                "capacity_usage": usage,
                "shed_fraction": shed,
                "oracle_shed_fraction": oracle,
                "manager": cls.manager,
                "manager_state": state,
                "redistributed": redistributed,
                "config_version": 0,
            }
        )
    return samples

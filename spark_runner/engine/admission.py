"""The class scheduler and the shedder at the sources: how many waiting tuples a batch takes
(no Spark, no clock).

Each micro-batch has a work budget ``B`` (seconds of processing, from the cost model:
what fits in one control period after the batch's fixed overhead). Class k is entitled to
``q_k × B`` (its DILoS quota, 001 §6.1.2); a class whose waiting work is smaller leaves
the rest to the others, in proportion to their quotas (weighted round robin with implicit
sharing, by water-filling). A class with quota 0 only gets what every other class leaves.

Inside a class the allocation goes to its points (one per stream it reads) in proportion
to their waiting work, so all of its queues drain at the same pace. At a point, a batch
takes ``n`` waiting tuples (oldest first) and drops ``shed = floor(n × f + carry)`` of them
(``f`` the class's shed fraction; ``carry`` keeps the fractional remainder across batches,
so shed counts are exact over time); the others are processed. What is not taken waits.
Work per kept tuple is the point's load coefficient ``c_p`` (s/tuple).

``kept_positions(n, m)`` spreads the ``m`` kept tuples evenly over the ``n`` taken, so the
shedder drops uniformly, never a whole burst.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class PointDemand:
    """What one point has waiting and what it costs.

    Attributes:
        class_name: the class that reads (and sheds at) the point.
        waiting: tuples waiting in the log.
        shed_fraction: the class's shed fraction for this batch, in [0, 1).
        cost_s: work per kept tuple (load coefficient), s; 0 = unknown (take all).
        carry: fractional shed remainder from earlier batches, in [0, 1).
    """

    class_name: str
    waiting: int
    shed_fraction: float
    cost_s: float
    carry: float = 0.0


@dataclass(frozen=True, slots=True)
class PointAdmission:
    """What a batch takes at one point: ``taken = kept + shed``; ``carry`` goes on."""

    taken: int
    kept: int
    shed: int
    carry: float


def water_fill(
    budget: float, quotas: Mapping[str, float], demands: Mapping[str, float]
) -> dict[str, float]:
    """Split ``budget`` by ``quotas`` among classes, none above its demand.

    Classes whose demand is below their share keep only their demand; the rest is
    shared again among the others by quota, until the budget or the demand runs out.
    Classes with quota 0 share what is left after everyone else, equally.
    """
    alloc = {name: 0.0 for name in demands}
    remaining = max(budget, 0.0)
    open_ = {n for n, d in demands.items() if d > _EPS}
    for tier in (True, False):
        members = {n for n in open_ if (quotas.get(n, 0.0) > 0) == tier}
        while members and remaining > _EPS:
            weights = {n: quotas.get(n, 0.0) if tier else 1.0 for n in members}
            total = sum(weights.values())
            shares = {n: min(remaining, remaining * (w / total)) for n, w in weights.items()}
            satisfied = {n for n in members if demands[n] - alloc[n] <= shares[n] + _EPS}
            if not satisfied:
                for n in members:
                    alloc[n] += shares[n]
                remaining = 0.0
                break
            for n in satisfied:
                need = demands[n] - alloc[n]
                alloc[n] = demands[n]
                remaining -= need
            members -= satisfied
            remaining = max(remaining, 0.0)
    return alloc


def shed_split(taken: int, shed_fraction: float, carry: float) -> tuple[int, float]:
    """``(shed, new carry)`` for ``taken`` tuples at ``shed_fraction``."""
    if taken <= 0 or shed_fraction <= 0:
        return 0, carry
    exact = taken * shed_fraction + carry
    shed = min(taken, math.floor(exact + _EPS))
    return shed, max(0.0, exact - shed)


def admit(
    points: Sequence[PointDemand],
    quotas: Mapping[str, float],
    budget_s: float,
    *,
    admit_all: bool = False,
) -> list[PointAdmission]:
    """What the next batch takes at every point (see module docstring)."""
    if admit_all:
        return [
            PointAdmission(p.waiting, p.waiting, 0, p.carry)
            if p.shed_fraction <= 0
            else _take(p, p.waiting)
            for p in points
        ]
    point_work = [
        p.waiting * (1.0 - p.shed_fraction) * p.cost_s if p.cost_s > 0 else 0.0 for p in points
    ]
    demands: dict[str, float] = {}
    for p, work in zip(points, point_work, strict=True):
        demands[p.class_name] = demands.get(p.class_name, 0.0) + work
    alloc = water_fill(budget_s, quotas, demands)
    out: list[PointAdmission] = []
    for p, work in zip(points, point_work, strict=True):
        if p.waiting <= 0:
            out.append(PointAdmission(0, 0, 0, p.carry))
            continue
        class_demand = demands[p.class_name]
        if p.cost_s <= 0 or alloc[p.class_name] >= class_demand * (1 - 1e-9):
            out.append(_take(p, p.waiting))
            continue
        share = alloc[p.class_name] * work / class_demand if class_demand > 0 else 0.0
        kept_allowed = share / p.cost_s
        taken = min(p.waiting, math.floor(kept_allowed / (1.0 - p.shed_fraction) + 1e-9))
        out.append(_take(p, taken))
    return out


def _take(p: PointDemand, taken: int) -> PointAdmission:
    shed, carry = shed_split(taken, p.shed_fraction, p.carry)
    return PointAdmission(taken, taken - shed, shed, carry)


def kept_positions(taken: int, kept: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Positions (within the ``taken`` tuples) of kept tuples number ``start..stop-1``.

    The ``kept`` positions ``floor(j × taken / kept)`` are distinct and evenly spread.
    """
    if kept > taken or kept < 0:
        raise ValueError(f"kept ({kept}) must be within 0..taken ({taken})")
    stop = kept if stop is None else stop
    j = np.arange(start, stop, dtype=np.int64)
    if kept == taken:
        return j
    return (j * taken) // kept

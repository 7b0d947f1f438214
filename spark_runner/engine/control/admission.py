"""The class scheduler and the shedder at the sources: how many waiting tuples a batch takes
(no Spark, no clock).

Each micro-batch has a work budget ``B`` (seconds of processing, from the cost model:
what fits in one control period after the batch's fixed overhead). Class k is entitled to
``q_k × B`` (its DILoS quota, 001 §6.1.2); what the classes whose waiting work is smaller
leave goes to the others highest priority first (implicit sharing by priority, as the
simulator's scheduler shares a round's unused credit): a class that sheds is never
short of budget a lower class takes beyond its own entitlement. A class with quota 0 only
gets what every other class leaves.

Inside a class the allocation goes to its points (one per stream it reads) in proportion
to their waiting work, so all of its queues drain at the same pace. At a point, a batch
takes ``n`` waiting tuples (oldest first) and drops ``shed = floor(n × f + carry)`` of them
(``f`` the class's shed fraction; ``carry`` keeps the fractional remainder across batches,
so shed counts are exact over time); the others are processed. What is not taken waits.
Work per kept tuple is the point's load coefficient ``c_p`` (s/tuple) over the operators
its class owns.

A lower class that reads a higher class's shared segment works on the tuples the owner
admits, after its edge (:class:`EdgeDemand`). Spark cannot hold them there for a later
batch, so that work is the lower class's demand on the budget, paid from the lower
class's allocation like the work at its own points: where its allocation does not cover
it, the batch sheds more on the edge (``edge_keep``, the share of what passes the class's
shed fraction that is kept). The owner is never charged for a lower class's operators:
a cheap shared segment feeding an expensive lower branch does not shrink the owner's
admission (001 §3.2's priority rule for shared segments).

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
class EdgeDemand:
    """What a lower class does after a higher class's shared segment.

    Attributes:
        class_name: the lower class (it sheds on its edges).
        shed_fraction: its shed fraction for this batch, in [0, 1).
        cost_by_point: point index → its work per tuple kept at that point, before its
            shed fraction, s (the tuples that reach its edges times its branch's load
            coefficient).
    """

    class_name: str
    shed_fraction: float
    cost_by_point: Mapping[int, float]


@dataclass(frozen=True, slots=True)
class PointAdmission:
    """What a batch takes at one point: ``taken = kept + shed``; ``carry`` goes on."""

    taken: int
    kept: int
    shed: int
    carry: float


@dataclass(frozen=True)
class Admission:
    """What a batch takes at every point, and per edge-shedding class the share of its
    edge tuples it keeps after its shed fraction (1: all of them)."""

    points: list[PointAdmission]
    edge_keep: dict[str, float]


def water_fill(
    budget: float,
    quotas: Mapping[str, float],
    demands: Mapping[str, float],
    order: Sequence[str] = (),
) -> dict[str, float]:
    """Split ``budget`` by ``quotas`` among classes, none above its demand.

    Each class first gets its quota's share of the budget (quotas normalised to sum 1),
    up to its demand; what is left goes to the classes still short, in ``order`` (highest
    priority first; classes it does not name after, in the quotas' order), classes with
    quota 0 last.
    """
    total_quota = sum(max(quotas.get(n, 0.0), 0.0) for n in demands)
    remaining = max(budget, 0.0)
    alloc = {
        n: min(max(d, 0.0), remaining * max(quotas.get(n, 0.0), 0.0) / total_quota)
        if total_quota > 0
        else 0.0
        for n, d in demands.items()
    }
    remaining = max(0.0, remaining - sum(alloc.values()))
    named = [n for n in order if n in demands]
    ranked = named + [n for n in demands if n not in named]
    ranked.sort(key=lambda n: quotas.get(n, 0.0) <= 0)  # stable: quota 0 last
    for n in ranked:
        if remaining <= _EPS:
            break
        more = min(remaining, max(0.0, demands[n] - alloc[n]))
        alloc[n] += more
        remaining -= more
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
    edges: Sequence[EdgeDemand] = (),
    order: Sequence[str] = (),
) -> Admission:
    """What the next batch takes at every point and keeps on every edge (see module
    docstring); ``order``: the classes, highest priority first."""
    if admit_all:
        return Admission(
            [
                PointAdmission(p.waiting, p.waiting, 0, p.carry)
                if p.shed_fraction <= 0
                else _take(p, p.waiting)
                for p in points
            ],
            {e.class_name: 1.0 for e in edges},
        )
    point_work = [
        p.waiting * (1.0 - p.shed_fraction) * p.cost_s if p.cost_s > 0 else 0.0 for p in points
    ]
    # what the lower classes would do if every owner took all it has waiting
    edge_work = [
        (1.0 - e.shed_fraction)
        * sum(
            points[i].waiting * (1.0 - points[i].shed_fraction) * c
            for i, c in e.cost_by_point.items()
        )
        for e in edges
    ]
    demands: dict[str, float] = {}
    for p, work in zip(points, point_work, strict=True):
        demands[p.class_name] = demands.get(p.class_name, 0.0) + work
    for e, work in zip(edges, edge_work, strict=True):
        demands[e.class_name] = demands.get(e.class_name, 0.0) + work
    alloc = water_fill(budget_s, quotas, demands, order)
    taken: list[PointAdmission] = []
    for p, work in zip(points, point_work, strict=True):
        if p.waiting <= 0:
            taken.append(PointAdmission(0, 0, 0, p.carry))
            continue
        class_demand = demands[p.class_name]
        if p.cost_s <= 0 or alloc[p.class_name] >= class_demand * (1 - 1e-9):
            taken.append(_take(p, p.waiting))
            continue
        share = alloc[p.class_name] * work / class_demand if class_demand > 0 else 0.0
        kept_allowed = share / p.cost_s
        count = min(p.waiting, math.floor(kept_allowed / (1.0 - p.shed_fraction) + 1e-9))
        taken.append(_take(p, count))
    keep: dict[str, float] = {}
    for e, work in zip(edges, edge_work, strict=True):
        class_demand = demands[e.class_name]
        allowed = alloc[e.class_name] * work / class_demand if class_demand > 0 else 0.0
        # the edge work of the tuples the owners did take
        actual = (1.0 - e.shed_fraction) * sum(
            taken[i].kept * c for i, c in e.cost_by_point.items()
        )
        keep[e.class_name] = 1.0 if actual <= allowed else max(0.0, allowed / actual)
    return Admission(taken, keep)


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

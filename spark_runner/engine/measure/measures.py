"""What a batch measured inside Spark, read from its observed metrics (no Spark).

The dataflow (:mod:`dataflow`) puts one ``observe`` on every *use* of an operator's
tuples — each edge to a downstream operator, and the query output — so a batch's counts
come back with its progress event, computed in the executors, and no tuple travels to the
driver:

- ``n``: tuples that took the use (after the edge's shedding, if a lower class sheds
  there); ``n_in`` on a second observe before that shedding.
- arrival statistics (``count``, ``sum``, ``min``, ``max`` and quantiles, seconds after
  the run's origin) on the uses whose tuples are *answered* in this batch — see below.

**Response time.** A result answers the input tuples that produced it, and the response
time of an answer is the batch's commit instant minus the input's arrival instant (a
tuple that waited in the log counts its wait):

- a stateless query's output tuple answers its one input;
- a window join's match answers the later of its two tuples (the one whose arrival made
  the match; the earlier one was already answered by the batch it arrived in);
- a window aggregate's update (update output mode: emitted by the batch its inputs
  arrive in) answers every input of the batch that went into it — the simulator's
  incremental aggregate, one result per input tuple — so its statistics are taken on the
  operator's input.

Quantiles from several uses of one class are merged as weighted points; count, mean, min
and max stay exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

QUANTILE_LEVELS: tuple[float, ...] = tuple(round(0.01 + i / 50, 3) for i in range(50))
"""Levels of the arrival quantiles each answering use reports (midpoints of 2 % bins)."""


@dataclass(frozen=True, slots=True)
class Use:
    """One use of a node's tuples, as the dataflow observes it.

    Attributes:
        name: the ``observe`` name (``n``, and ``n_in`` on ``name + "_in"`` when
            ``shed_class`` sheds on the edge).
        node: the node whose tuples are used.
        child: the downstream node, or ``None`` for the query output.
        side: ``0`` left, ``1`` right (a join's input).
        shed_class: the class that sheds on the edge, or -1.
        answers: the class whose answers the use measures, or ``None``.
    """

    name: str
    node: int
    child: int | None
    side: int = 0
    shed_class: int = -1
    answers: str | None = None
    reads: bool = False
    """The use scans a point: ``read_name`` sums its rows' read time (``read_s``)."""

    @property
    def shed_name(self) -> str:
        return f"{self.name}_in"

    @property
    def read_name(self) -> str:
        return f"{self.name}_read"


@dataclass(frozen=True)
class ArrivalSummary:
    """Arrival instants of the tuples one use answered in a batch (s after the origin)."""

    count: int
    sum_s: float
    min_s: float
    max_s: float
    quantiles_s: tuple[float, ...]
    """At :data:`QUANTILE_LEVELS` (empty when Spark reported none)."""

    @classmethod
    def of(cls, arrivals_s: np.ndarray) -> ArrivalSummary | None:
        """The summary Spark's ``observe`` computes, of the arrival instants given."""
        if not len(arrivals_s):
            return None
        return cls(
            count=len(arrivals_s),
            sum_s=float(arrivals_s.sum()),
            min_s=float(arrivals_s.min()),
            max_s=float(arrivals_s.max()),
            quantiles_s=tuple(float(q) for q in np.quantile(arrivals_s, QUANTILE_LEVELS)),
        )

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ArrivalSummary | None:
        count = int(row.get("n") or 0)
        if count == 0:
            return None
        quantiles = row.get("q") or ()
        return cls(
            count=count,
            sum_s=float(row["sum"]),
            min_s=float(row["min"]),
            max_s=float(row["max"]),
            quantiles_s=tuple(float(q) for q in quantiles),
        )


@dataclass
class ResponseSample:
    """Response times of one class's answers: exact count, sum and max; weighted points
    for the quantiles and the violations."""

    count: int = 0
    sum_s: float = 0.0
    max_s: float = 0.0
    values_s: list[np.ndarray] = field(default_factory=list)
    weights: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def exact(cls, response_s: np.ndarray) -> ResponseSample:
        """Every response time as its own point (weight 1)."""
        sample = cls()
        if len(response_s):
            sample.count = len(response_s)
            sample.sum_s = float(response_s.sum())
            sample.max_s = float(response_s.max())
            sample.values_s.append(np.asarray(response_s, dtype=np.float64))
            sample.weights.append(np.ones(len(response_s)))
        return sample

    def add_answers(self, summary: ArrivalSummary, commit_s: float) -> None:
        """Answers committed at ``commit_s`` (s after the origin) to arrivals ``summary``."""
        self.count += summary.count
        self.sum_s += max(0.0, summary.count * commit_s - summary.sum_s)
        self.max_s = max(self.max_s, commit_s - summary.min_s)
        points = np.asarray(summary.quantiles_s, dtype=np.float64)
        if not len(points):
            points = np.array([summary.sum_s / summary.count])
        weights = np.full(len(points), summary.count / len(points), dtype=np.float64)
        self.values_s.append(np.maximum(commit_s - points, 0.0))
        self.weights.append(weights)

    def extend(self, other: ResponseSample) -> None:
        self.count += other.count
        self.sum_s += other.sum_s
        self.max_s = max(self.max_s, other.max_s)
        self.values_s.extend(other.values_s)
        self.weights.extend(other.weights)

    def points(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.values_s:
            return np.empty(0), np.empty(0)
        return np.concatenate(self.values_s), np.concatenate(self.weights)

    @property
    def mean_s(self) -> float | None:
        return self.sum_s / self.count if self.count else None

    def quantile_s(self, fraction: float) -> float | None:
        values, weights = self.points()
        if not self.count or not len(values) or weights.sum() <= 0:
            return None
        order = np.argsort(values)
        cumulative = np.cumsum(weights[order])
        at = int(np.searchsorted(cumulative, fraction * cumulative[-1], side="left"))
        return float(min(values[order][min(at, len(values) - 1)], self.max_s))

    def violation_mean_s(self, target_s: float) -> float | None:
        values, weights = self.points()
        if not self.count or weights.sum() <= 0:
            return None
        return float((np.maximum(values - target_s, 0.0) * weights).sum() / weights.sum())


@dataclass
class NodeCounts:
    """Per node (indexed like ``NetworkPlan.nodes``) in one batch."""

    reached: np.ndarray
    passed: np.ndarray
    shed: np.ndarray
    """Tuples shed on the edges into the node (by its owner class)."""

    def selectivity(self) -> dict[int, float]:
        return {
            int(i): float(self.passed[i] / self.reached[i])
            for i in np.flatnonzero(self.reached > 0)
        }


@dataclass
class BatchMeasures:
    """What one batch did: exact counts per node, and each class's answers (arrival
    instants in seconds after ``origin_s``, epoch s)."""

    counts: NodeCounts
    answers: dict[str, list[ArrivalSummary]]
    origin_s: float
    read_s: dict[int, float] = field(default_factory=dict)
    """Seconds the sources took to produce the rows of the uses that scan a point, by the
    node they feed."""


def read_measures(
    uses: Sequence[Use],
    kept: Mapping[int, int],
    nodes: int,
    observed: Mapping[str, Mapping[str, Any]],
    origin_s: float,
) -> BatchMeasures:
    """Counts and answers of a batch from its observed metrics.

    ``kept``: the tuples every point node admitted (from the offsets, exact);
    ``origin_s``: the instant the dataflow measures arrivals from. A node
    *reached* what its incoming uses took (a point node: what its point kept) and
    *passed* what its output use took, or (without one) its first use before any
    shedding on it.
    """
    reached = np.zeros(nodes, dtype=np.int64)
    passed = np.zeros(nodes, dtype=np.int64)
    shed = np.zeros(nodes, dtype=np.int64)
    answers: dict[str, list[ArrivalSummary]] = {}
    first: dict[int, Use] = {}

    def count(name: str) -> int:
        return int((observed.get(name) or {}).get("n") or 0)

    read_s: dict[int, float] = {}
    for use in uses:
        if use.reads and use.child is not None:
            seconds = float((observed.get(use.read_name) or {}).get("s") or 0.0)
            read_s[use.child] = read_s.get(use.child, 0.0) + seconds
        n = count(use.name)
        taken = count(use.shed_name) if use.shed_class >= 0 else n
        if use.child is not None:
            reached[use.child] += n
            shed[use.child] += taken - n
        if use.child is None or use.node not in first:
            first[use.node] = use
        if use.answers is not None:
            summary = ArrivalSummary.from_row(observed.get(use.name) or {})
            if summary is not None:
                answers.setdefault(use.answers, []).append(summary)
    for node, point_kept in kept.items():
        reached[node] = point_kept
    for node, use in first.items():
        passed[node] = count(use.shed_name) if use.shed_class >= 0 else count(use.name)
    counts = NodeCounts(reached=reached, passed=passed, shed=shed)
    return BatchMeasures(counts, answers, origin_s, read_s)

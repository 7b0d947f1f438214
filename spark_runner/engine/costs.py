"""The batch budget and the operator costs, from measured batch times (no Spark, no clock).

Spark fuses a batch's operators into one job, so no operator's own time can be read. What
is measured is the batch: its *cycle* ``C`` (time inside ``foreachBatch`` — collect,
window operators, sink — plus the time outside it: offset log, planning, commit, from the
query progress) and the exact number of tuples every operator took in. Each operator has
a prior *weight* ``w`` (s/tuple): ``ROW_WEIGHT_S`` per tuple for every operator, plus the
calibrated CPU cost of a map, plus the driver's work per tuple for window operators; a
batch's weighted work is ``W = Σ_o n_o × w_o``.

**Budget** (:class:`BatchBudget`): the class scheduler may admit ``B`` weight-seconds per
batch. After a batch that used its budget (or overran), ``B`` moves toward the value that
makes the cycle take ``utilization × T``::

    B ← B × clamp(utilization × T / C, 1/max_step, max_step) ** gain

With ``C = o + αW`` the fixed point ``C = utilization × T`` is stable (the slope of the
map there is ``1 − gain × (1 − o / (utilization × T)) < 1``), whatever the true ``o`` and
``α``: no model of the machine is needed, and another process taking a core shows as a
longer cycle and a smaller budget within a few batches.

**Costs**: the budget is one period of processing capacity, so an operator's cost is its
weight in *capacity seconds*, ``w × T / B``: the share of the engine's processing capacity
one tuple takes. The whole capacity is then 1 s/s — the thesis's convention, under which a
class's initial headroom of ``0.8 × its share`` is right — and the class loads of the core's
load model rise when the machine slows down (the budget shrinks), as measured costs do in
the thesis.

Why not fit wall seconds per weight second from ``P = o + αW``: under overload admission
fills every batch to the same budget, so batches cannot tell ``o`` from ``α``; an
estimate ``(P − o) / W`` absorbs ``(o_true − o) / W``, which grows as admission shrinks ``W``
— and a larger ``α`` shrinks ``W`` further (seen: α ran away to 17 and starved every class).
And a class whose load is underestimated relative to the capacity its manager assumes is
judged to have capacity to spare, which DILoS then lends away from it.
"""

from __future__ import annotations

import math

ROW_WEIGHT_S = 1e-6
"""Prior weight of one tuple through one operator (JVM projection + transfer), s."""
DRIVER_ROW_WEIGHT_S = 3e-6
"""Prior weight of one tuple into or out of a window operator (finished on the driver), s."""


class BatchBudget:
    """Weighted work one batch may take (see module docstring).

    Args:
        period_s: the control period = trigger interval T, s.
        utilization: share of T a batch cycle should take, (0, 1].
        initial_s: starting budget, weight-seconds.
        gain: exponent of each correction, (0, 1].
        max_step: largest factor of one correction (> 1).
        fill: a batch that used this share of its budget was limited by it.
        min_s: the budget never goes below this, weight-seconds.
        floor_fraction: nor below this share of the largest budget it had: when the
            engine's fixed cost per batch alone exceeds the target (a loaded machine),
            batches run late but keep doing work instead of shrinking to nothing.
    """

    def __init__(
        self,
        period_s: float,
        utilization: float = 0.9,
        initial_s: float = 0.1,
        gain: float = 0.5,
        max_step: float = 1.5,
        fill: float = 0.85,
        min_s: float = 1e-4,
        floor_fraction: float = 0.2,
    ) -> None:
        if not 0 < utilization <= 1:
            raise ValueError(f"utilization is {utilization}; it must be within (0, 1]")
        if not period_s > 0:
            raise ValueError(f"period_s is {period_s}; it must be > 0")
        self.period_s = period_s
        self.utilization = utilization
        self.budget_s = max(initial_s, min_s)
        self._gain = gain
        self._max_step = max_step
        self._fill = fill
        self._min_s = min_s
        self._floor_fraction = floor_fraction
        self._max_s = self.budget_s
        self.updates = 0

    @property
    def target_s(self) -> float:
        """The cycle a batch should take, s."""
        return self.utilization * self.period_s

    def update(self, work_s: float, cycle_s: float) -> float:
        """A batch with weighted work ``work_s`` took ``cycle_s``; returns the new budget."""
        if not (math.isfinite(work_s) and math.isfinite(cycle_s)) or cycle_s <= 0:
            return self.budget_s
        limited = work_s >= self._fill * self.budget_s
        overran = cycle_s > self.target_s
        if not (limited or overran):
            return self.budget_s
        ratio = min(max(self.target_s / cycle_s, 1 / self._max_step), self._max_step)
        base = self.budget_s if limited else max(work_s, self._min_s)
        floor = max(self._min_s, self._floor_fraction * self._max_s)
        self.budget_s = max(floor, base * ratio**self._gain)
        self._max_s = max(self._max_s, self.budget_s)
        self.updates += 1
        return self.budget_s


class Ewma:
    """Exponentially weighted mean (``weight`` on the newest sample)."""

    def __init__(self, initial: float, weight: float = 0.2) -> None:
        self.value = initial
        self.weight = weight

    def update(self, sample: float) -> float:
        if math.isfinite(sample):
            self.value += self.weight * (sample - self.value)
        return self.value

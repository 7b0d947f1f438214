"""The batch budget and the operator costs, from measured batch times (no Spark, no clock).

Spark fuses a batch's operators into one job, so no operator's own time can be read. What
is measured is the batch: its *cycle* ``C`` (the query progress's ``triggerExecution``:
offset log, planning, the operators, the sink, the commit) and the exact number of tuples
every operator took in (its ``observe`` counts), and, from Spark's status store, the
executor time of every query *branch* (:mod:`task_times`). Each operator has a declared
*weight* ``w`` (s/tuple of CPU): ``ROW_WEIGHT_S`` per tuple for every operator, plus the
declared CPU cost of a map, plus the state-store work per tuple of a window operator;
:class:`BranchScales` multiplies it by what its branch measured over what it declared,
and a batch's weighted work is ``W = Σ_o n_o × w_o × scale_o``. The cycle is modelled as

    C = o + α × W        α = 1 / parallelism (the work spreads over the task slots)

(a branch's executor CPU that does not grow with its tuples is no operator's cost: it is
in ``o``; :class:`BranchScales`).

**Budget** (:class:`BatchBudget`): after every batch the fixed time ``o`` moves toward the
median of ``C − αW`` over the last few batches (one slow batch moves nothing: a single
GC pause must not make every class's load jump and the top class shed), and the next
batch may take
``B = (utilization × T − o) / α`` weight-seconds. Every batch teaches ``o``, full or not,
so the budget does not depend on the demand. Another process taking cores slows the fixed
time and the work alike: when the last two batches both ran a factor ``s`` slower than
``o + αW`` (the *slowdown*, ≥ 1), the next batch may take ``(uT − s·o) / (s·α)``, and the
floor and the pace use the fixed time at that speed, ``s·o``. A factor the utilization's
margin covers (``s ≤ 1 / u``: the batch still ends within its period) is noise and counts
as 1: with a fixed time of half the target cycle, as the benchmark's joins measure, 1.1
cut the budget by a fifth and raised every class's load by a quarter for a period, at
constant rates, in a quarter of its periods; DILoS moved quota on it. So the budget fits a
slower machine after two batches, while ``o`` takes the change in over the median's
window (and ``s`` returns to 1 as it does); before, the cycles overran the target for
those batches and every class was late, the top class included. When the other process
leaves, two batches well below their model (``s`` < ``FASTER``) bring the fixed time in
force, and with it the floor, the pace and the budget, back the same way (the work keeps
its modelled cost: fast batches that carried little work say little about it). If the
true scale is ``α'`` rather than ``α``, saturated batches still converge to the right budget
``(uT − o) / α'`` (the error moves into ``o``; the smoothed iteration is stable for
``α' < 5 α``). ``o`` never exceeds the median of the recent cycles themselves: after a
slow start (the first batches' JIT compilation) the smoothing would otherwise keep it
above whole cycles for many batches and starve every class; the end of a warm-up takes
the recent median as it is, then the median of the batches since, until a window of them
has run (:meth:`BatchBudget.settle`).

**Costs**: the budget is one period of processing capacity, so an operator's cost is its
weight in *capacity seconds*, ``w × T / B``: the share of the engine's processing capacity
one tuple takes. The whole capacity is then 1 s/s — the thesis's convention, under which a
class's initial headroom of ``0.8 × its share`` is right — and the class loads of the core's
load model rise when the machine slows down (the budget shrinks), as measured costs do in
the thesis.

Two designs that failed here, for the record: fitting ``o`` and ``α`` jointly (least
squares, or ``α = (C − o) / W``): under overload every batch carries the same work, the
fit cannot tell ``o`` from ``α``, and ``α`` absorbed ``(o_true − o) / W``, which grows as
admission shrinks ``W`` (it ran away to 17 and starved every class); and correcting the
budget only from batches that used it: when the managers shed, batches are not full and an
early underestimate (start-up noise) stayed for 80 s, during which DILoS over-shed.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping, Sequence

ROW_WEIGHT_S = 1e-6
"""Prior weight of one tuple through one operator (JVM projection + transfer), s."""
STATEFUL_ROW_WEIGHT_S = 3e-6
"""Prior weight of one tuple into or out of a window operator (shuffle, state store), s."""
FASTER = 0.8
"""Batches must run below this share of their model's time to count as a faster machine
(noise of a few tens of percent around the model is no change of speed)."""


class BatchBudget:
    """Weighted work one batch may take (see module docstring).

    Args:
        period_s: the time T between two batches' starts (the pace), s; the runner sets
            it before every decision.
        utilization: share of T a batch cycle should take, (0, 1].
        alpha: wall seconds per weight second (1 / parallelism).
        fixed_s: prior of the fixed time o of a batch cycle, s (until a batch is measured).
        window: o follows the median of the last ``window`` batches' fixed times: one slow
            batch (a GC pause, a scheduling hiccup) moves nothing, a machine that stays
            slower moves it after ``window // 2 + 1`` batches.
        weight: weight of each new median in ``o``, (0, 1] (the smoothing keeps the
            iteration stable when the true scale is up to about 5 × ``alpha``).
        floor_fraction: the budget never goes below this share of ``utilization × T / α``
            (when the fixed time alone exceeds the target on a loaded machine, batches run
            late but keep doing work).
    """

    def __init__(
        self,
        period_s: float,
        utilization: float,
        alpha: float = 0.5,
        fixed_s: float = 0.3,
        window: int = 5,
        weight: float = 0.3,
        floor_fraction: float = 0.1,
    ) -> None:
        if not 0 < utilization <= 1:
            raise ValueError(f"utilization is {utilization}; it must be within (0, 1]")
        if not period_s > 0:
            raise ValueError(f"period_s is {period_s}; it must be > 0")
        if not alpha > 0:
            raise ValueError(f"alpha is {alpha}; it must be > 0")
        if window < 1:
            raise ValueError(f"window is {window}; it must be >= 1")
        self.period_s = period_s
        self.utilization = utilization
        self.alpha = alpha
        self.fixed_s = fixed_s
        self._recent: deque[float] = deque(maxlen=window)
        self._cycles: deque[float] = deque(maxlen=window)
        self._weight = weight
        self._floor_fraction = floor_fraction
        self._ratios: deque[float] = deque(maxlen=2)
        self._settling = False  # since a warm-up's end, until a window of batches has run
        # how long the last batch ran beyond its model o + αW, s: a stall (the machine
        # taken by another process, a Python worker starting) that gave no capacity
        self.overrun_s = 0.0
        self._offered: deque[float] = deque(maxlen=window)  # cycle shares, see offer()
        self._offered_by: deque[dict[str, float]] = deque(maxlen=window)  # the same by class

    @property
    def target_s(self) -> float:
        """The cycle a batch should take, s."""
        return self.utilization * self.period_s

    @property
    def budget_s(self) -> float:
        """Weighted work the next batch may take, weight-seconds."""
        floor = self._floor_fraction * self.target_s / self.alpha
        return max(floor, (self.target_s - self.fixed_now_s) / (self.alpha * self.slowdown))

    @property
    def speed(self) -> float:
        """The last two batches' cycles over their model ``o + αW`` where both ran slower
        than the utilization's margin covers (the smaller ratio, above ``1 /
        utilization``) or both ran below ``FASTER`` of it (the larger, < 1); else 1: one
        slow or fast batch moves nothing, and batches a little slower than their model
        still end within the period (see the module docstring)."""
        if len(self._ratios) < 2:
            return 1.0
        low, high = min(self._ratios), max(self._ratios)
        if low > 1.0 / self.utilization:
            return low
        return high if high < FASTER else 1.0

    @property
    def slowdown(self) -> float:
        """How much slower than the model the last two batches both ran (≥ 1)."""
        return max(1.0, self.speed)

    @property
    def stall(self) -> float:
        """How much slower than its model ``o + αW`` the last batch alone ran (≥ 1): a
        stall (a new executor loading its state stores, a GC pause) shows here a batch
        before :attr:`slowdown` can tell a slower machine from it; the budget ignores it."""
        return max(1.0, self._ratios[-1]) if self._ratios else 1.0

    @property
    def fixed_now_s(self) -> float:
        """The fixed time at the speed the machine runs now, ``o × speed``, s."""
        return self.fixed_s * self.speed

    def update(self, work_s: float, cycle_s: float) -> float:
        """A batch with weighted work ``work_s`` took ``cycle_s``; returns the new budget."""
        if math.isfinite(work_s) and math.isfinite(cycle_s) and cycle_s > 0 and work_s >= 0:
            modelled = self.fixed_s + self.alpha * work_s
            self._ratios.append(cycle_s / modelled)
            self.overrun_s = max(0.0, cycle_s - modelled)
            self._recent.append(max(0.0, cycle_s - self.alpha * work_s))
            self._cycles.append(cycle_s)
            median = statistics.median(self._recent)
            if self._settling:  # the batches since a warm-up: their median as it is
                self.fixed_s = median
                self._settling = len(self._recent) < (self._recent.maxlen or 1)
            else:
                self.fixed_s += self._weight * (median - self.fixed_s)
            # a part of the cycle: an estimate above the recent cycles is a slow start's
            # residue (the smoothing lags), not a fixed time
            self.fixed_s = min(self.fixed_s, statistics.median(self._cycles))
        return self.budget_s

    def offer(
        self, work_s: float, window_s: float, by_class: Mapping[str, float] | None = None
    ) -> None:
        """The classes offered ``work_s`` weighted work (what a batch would take with every
        tuple admitted) over ``window_s`` of arrivals; ``by_class``: each class's part,
        where the batch measured it."""
        if window_s > 0 and math.isfinite(work_s) and work_s >= 0:
            scale = self.alpha / (self.utilization * window_s)
            self._offered.append(scale * work_s)
            self._offered_by.append({k: scale * w for k, w in (by_class or {}).items()})

    @property
    def offered_share(self) -> float | None:
        """The share of a batch cycle (``u × T``, whatever the pace ``T``) the offered work
        needs at the speed the machine runs now: the most of the last ``window`` batches'
        (a burst counts); None until a batch is measured."""
        return max(self._offered) * self.slowdown if self._offered else None

    def offered_shares(self) -> dict[str, float]:
        """:attr:`offered_share` by class: each class's most of the last ``window``
        batches that measured it (none: absent)."""
        most: dict[str, float] = {}
        for shares in self._offered_by:
            for name, share in shares.items():
                most[name] = max(most.get(name, 0.0), share)
        return {name: share * self.slowdown for name, share in most.items()}

    def rescale(self, alpha: float) -> None:
        """Batches now run on another number of task slots (``alpha`` = 1 / slots): the
        ratios measured at the old scale go; the fixed time stays, and so do the recent
        batches' fixed times (``C − αW`` at the scale each ran on), so one slow batch on
        a new executor moves nothing. (Cleared, the first batch after a resize was the
        whole median: on Spark the second batch on a new executor, which loaded its state
        stores, ran 10.4 s against 1.7 s, the fixed time went 1.2 → 2.0 s, the floor past
        the top class's 6 s target, and the top class shed 89 stale tuples that the next
        1.6 s batch would have answered in time.)"""
        if not alpha > 0:
            raise ValueError(f"alpha is {alpha}; it must be > 0")
        self.alpha = alpha
        self._ratios.clear()
        self._offered.clear()
        self._offered_by.clear()

    def settle(self) -> None:
        """The end of a warm-up: the first batches' JIT compilation and worker starts are
        no fixed time to keep. Take the recent batches' median fixed time as it is; then,
        until a window of batches has run since, the median of those batches alone (at
        30 % a batch toward it, a warm-up's slow batches held the fixed time, and every
        class's load with it, up to 1.5× too high for ten batches: 80 s at 8 s periods)."""
        if self._recent:
            self.fixed_s = statistics.median(self._recent)
        self._recent.clear()
        self._cycles.clear()
        self._ratios.clear()
        self._offered.clear()
        self._offered_by.clear()
        self._settling = True


class BranchScales:
    """Measured over declared cost, per query branch (see :mod:`task_times`).

    Each batch, Spark's task CPU times give the executor seconds ``T_b`` every branch
    ``b`` (a query's output and the operators above it) took, and the operators' counts
    times their prior weights give the work ``W_i`` the model assigned to each node. Both
    are smoothed (exponentially, weight ``weight`` on the newest batch); a branch's scale
    is ``T̄_b / Σ W̄_i``: what one weight-second of its operators really costs. Batches
    where no operator of a branch took ``min_tuples`` teach it nothing (a few tuples
    cannot tell a per-tuple cost from the task's start). Scales stay within
    [``low``, ``high``] and are 1 until measured.

    Branches are given highest priority first. A node several branches compute (a shared
    segment runs once per reader, at the same cost in each) takes the scale of the first
    branch that measured it, its owner's; a later branch's other nodes take what remains
    of its time over their work. So an expensive lower branch behind a cheap shared
    segment weighs on the lower class's operators, not on the owner's segment (which
    would make the owner pay for the lower class: priority inverted).

    A branch's time also holds CPU that does not grow with its tuples (its tasks' start, a
    state store's load and commit per partition): ``T_b = F_b + scale_b × W_b``. Counted
    per tuple, ``F_b`` made a branch's cost grow as its rate fell (at a twentieth of the
    rate a window query's load stayed at its full-rate value), and shedding cannot remove
    it. So each branch also keeps exponentially weighted statistics of its batches'
    ``(W_b, T_b)`` and, while the modelled work varies enough to tell a slope from an
    intercept (coefficient of variation at least ``min_spread``: a rate step, a shedding
    change), moves ``F_b`` toward the regression's intercept, within [0, ``max_fixed``
    × ``T̄_b``]; under a steady load it holds what it learnt. A batch's time enters the
    regression within a factor ``outlier`` of what the branch's model expects for it: one
    slow batch (a GC pause, a new executor's first tasks) with a little more work than
    most makes the intercept negative and sets ``F_b`` to 0. ``F_b`` is executor CPU per
    batch: it is not in the operators' costs, so the batch budget's fixed time (cycle
    minus modelled work) takes it in, as it should: it costs every batch, whatever is
    shed.
    """

    def __init__(
        self,
        members: Sequence[Sequence[int]],
        outputs: Sequence[int],
        weight: float = 0.2,
        min_tuples: int = 20,
        low: float = 0.2,
        high: float = 1000.0,
        spread_weight: float = 0.1,
        min_spread: float = 0.3,
        max_fixed: float = 0.95,
        outlier: float = 2.0,
    ) -> None:
        """``members[b]``: the node indices of branch ``b`` (the nodes its output needs),
        ``outputs[b]`` its output node; highest priority first. ``spread_weight`` is the
        weight of the newest batch in the regression's statistics (a longer memory than
        ``weight``: a rate step stays in them for some ten batches)."""
        if not 0 < weight <= 1:
            raise ValueError(f"weight is {weight}; it must be within (0, 1]")
        if not 0 < spread_weight <= 1:
            raise ValueError(f"spread_weight is {spread_weight}; it must be within (0, 1]")
        if not 0 <= max_fixed < 1:
            raise ValueError(f"max_fixed is {max_fixed}; it must be within [0, 1)")
        if outlier <= 1:
            raise ValueError(f"outlier is {outlier}; it must be above 1")
        self.outputs = tuple(outputs)
        self._members = [list(m) for m in members]
        self._weight = weight
        self._min_tuples = min_tuples
        self._low, self._high = low, high
        self.measured_s = [0.0] * len(self.outputs)
        self._node_work = [[0.0] * len(m) for m in self._members]
        self.fixed_s = [0.0] * len(self.outputs)
        """Per branch, its CPU per batch that does not grow with its tuples, s."""
        self._fits = [_Regression(spread_weight) for _ in self.outputs]
        self._min_spread = min_spread
        self._max_fixed = max_fixed
        self._outlier = outlier

    @property
    def modelled_s(self) -> list[float]:
        """Per branch, its smoothed modelled work, weight-seconds."""
        return [sum(w) for w in self._node_work]

    def update(
        self,
        node_work_s: Sequence[float],
        node_tuples: Sequence[int],
        measured_s: Mapping[int, float],
    ) -> None:
        """One batch: the modelled work of every node (prior weights × counts), the tuples
        each took, and the executor seconds measured per output node (outputs not
        measured learn nothing)."""
        for b, output in enumerate(self.outputs):
            members = self._members[b]
            if output not in measured_s or max(node_tuples[i] for i in members) < self._min_tuples:
                continue
            work_s = sum(node_work_s[i] for i in members)
            if work_s <= 0:
                continue
            smoothed = self._node_work[b]
            learnt = sum(smoothed) > 0
            expected_s = self.fixed_s[b] + self.branch_scale(b) * work_s if learnt else None
            w = self._weight if learnt else 1.0
            self.measured_s[b] += w * (measured_s[output] - self.measured_s[b])
            for k, i in enumerate(members):
                smoothed[k] += w * (node_work_s[i] - smoothed[k])
            self._learn_fixed(b, work_s, measured_s[output], expected_s)

    def _learn_fixed(
        self, b: int, work_s: float, measured_s: float, expected_s: float | None
    ) -> None:
        """One batch of branch ``b`` in its regression; ``F_b`` moves toward the intercept
        when the work varied enough to tell it (see the class docstring). A time more than
        ``outlier`` times off what the branch's model expected enters the fit at that
        bound."""
        if expected_s is not None and expected_s > 0:
            low, high = expected_s / self._outlier, expected_s * self._outlier
            measured_s = min(max(measured_s, low), high)
        fit = self._fits[b]
        fit.add(work_s, measured_s)
        intercept = fit.intercept(self._min_spread)
        if intercept is not None:
            self.fixed_s[b] += self._weight * (intercept - self.fixed_s[b])
        self.fixed_s[b] = min(max(self.fixed_s[b], 0.0), self._max_fixed * self.measured_s[b])

    def _clamp(self, scale: float) -> float:
        return min(self._high, max(self._low, scale))

    def branch_scale(self, b: int) -> float:
        """Branch ``b``'s measured time less its fixed CPU over its modelled work (1 until
        measured)."""
        work = sum(self._node_work[b])
        return self._clamp(self._per_tuple_s(b) / work) if work > 0 else 1.0

    def _per_tuple_s(self, b: int) -> float:
        """Branch ``b``'s smoothed time less its fixed CPU: what grows with its tuples."""
        return self.measured_s[b] - self.fixed_s[b]

    def node_scales(self, n_nodes: int) -> list[float]:
        """The scale of every node (see the class docstring)."""
        scale: list[float | None] = [None] * n_nodes
        for b, members in enumerate(self._members):
            work = self._node_work[b]
            if sum(work) <= 0:
                continue
            known = sum(
                s * w for i, w in zip(members, work, strict=True) if (s := scale[i]) is not None
            )
            rest = [(i, w) for i, w in zip(members, work, strict=True) if scale[i] is None]
            rest_work = sum(w for _, w in rest)
            if not rest:
                continue
            own = self._clamp((self._per_tuple_s(b) - known) / rest_work) if rest_work > 0 else 1.0
            for i, _ in rest:
                scale[i] = own
        return [1.0 if s is None else s for s in scale]


class _Regression:
    """Exponentially weighted least squares of ``y`` on ``x`` (weight ``weight`` on the
    newest point)."""

    def __init__(self, weight: float) -> None:
        self._weight = weight
        self._n = 0
        self._x = self._y = self._xx = self._xy = 0.0

    def add(self, x: float, y: float) -> None:
        w = self._weight if self._n else 1.0
        self._n += 1
        dx, dy = x - self._x, y - self._y
        self._x += w * dx
        self._y += w * dy
        # West's weighted update: the (co)variances about the new means
        self._xx = (1 - w) * (self._xx + w * dx * dx)
        self._xy = (1 - w) * (self._xy + w * dx * dy)

    def intercept(self, min_spread: float) -> float | None:
        """The fitted line's value at ``x = 0``, or None while the points cannot tell it:
        fewer than three, ``x``'s coefficient of variation below ``min_spread``, or a
        slope that is not positive (more work never costs less)."""
        if self._n < 3 or self._x <= 0 or math.sqrt(self._xx) < min_spread * self._x:
            return None
        slope = self._xy / self._xx
        return self._y - slope * self._x if slope > 0 else None

"""How often a batch starts: the pace, set by the tightest target of the loaded classes
(no Spark, no clock).

Every class of a run shares one streaming query, so every class's tuples in a batch commit
at the same instant. A tuple of a class that is admitted in full waits at most one *pace*
``P`` in the log (it may arrive just after a batch took its offsets) and one batch cycle
``C`` in Spark; the batch budget keeps ``C ≤ u × P`` (``u`` the target utilisation). So its
response time is at most ``(1 + u) × P``, and the pace that keeps it within a share
``κ`` of its target ``D`` is

    P = κ × D / (1 + u)

The pace follows the tightest target among the classes that have tuples (arrived in the
last period or waiting): a higher class with a tight target gets short batches, and the
classes with longer targets absorb what short batches cost (their tuples wait in the log,
and their managers shed when the wait nears their target). This is how latency follows
priority in one query: a class the scheduler admits in full answers within
``(1 + u) × P``; a class it defers waits longer.

Bounds: never longer than the configured control period; never below ``MIN_PACE_S``;
never so short that a batch's fixed time ``o`` leaves too little of its cycle for work,
even when the configured period is shorter (the control period adapts to the cycle the
engine can achieve: below that, short batches would spend the machine on overhead and
starve every class). *Too little* is the work the classes offer (:func:`work_share`):
``WORK_MARGIN`` times the share of a cycle their tuples need fully admitted, at least
``LEAST_WORK_SHARE`` and at most ``MIN_WORK_SHARE``. Light classes thus get batches
nearly back to back, as plain Spark runs them, instead of waiting out a pace whose cycle
would stand a quarter idle (trades workload: fixed time 0.8 s of a 0.85 s batch, a pace
of 1.16 s where 0.96 s fits the work); under load the bound is a quarter of the cycle.

An *infeasible* target is one below the class's *mean floor* (:func:`mean_floor_s`): the
mean response time its tuples get fully admitted at the least pace with no other class's
work in the batch. It does not set the pace while another loaded class's target can be
met: its class is served at the pace the feasible classes need (its manager holds it,
see ``DilosController``), so one class's setting does not shrink every other class's
batches. A feasible target whose pace would be below the least pace is served at the
pace its *mean* needs (:func:`mean_pace_s`: half a pace's wait in the log and a batch
cycle of ``u × P``), down to the least pace that leaves the work of that class and the
classes above it (``CUT_MARGIN`` times what they offer, within the work share's bounds):
the target of the class that sets the pace comes before the work the classes below
would do in longer batches; they shed more instead. Only when no loaded target can be
met does the pace sit at the bound.

The sources hold a batch until its pace has passed (:mod:`source`); Spark asks again every
``TICK_S``, so the pace changes from one batch to the next with no restart.
"""

from __future__ import annotations

from collections.abc import Iterable

TICK_S = 0.05
"""How often Spark asks the sources whether a batch is due, s: its polling delay after a
trigger without data (the trigger itself runs batches back to back)."""
TARGET_SHARE = 0.8
"""κ: the share of the tightest target a fully admitted tuple's response may take."""
MIN_WORK_SHARE = 0.25
"""The share of a batch cycle (``u × P``) the least pace leaves for work after the fixed
time when the classes' offered work needs that much or more."""
LEAST_WORK_SHARE = 0.1
"""The share it leaves however little work is offered (the budget's own least share)."""
WORK_MARGIN = 1.5
"""How much more than the offered work's share of a cycle the least pace leaves for work
(arrival bursts, costs measured low)."""
CUT_MARGIN = 2.5
"""How much more than their offered work's share of a cycle a pace cut for a target
leaves the class that sets it and the classes above it: ``WORK_MARGIN`` over the 60 %
of a batch's budget a top class's quota holds by default (the class scheduler splits
the budget by quota, and the classes below fill theirs)."""
MIN_PACE_S = 0.1
"""The shortest pace, s."""
MEAN_SHARE = 0.85
"""The share of the tightest feasible target a fully admitted tuple's *mean* response may
take where the work share's bound would lengthen the pace past it (:func:`mean_pace_s`):
the margin covers the spread of a uniform wait in the log around its mean."""


def pace_s(
    targets_s: Iterable[float],
    period_s: float,
    fixed_s: float,
    utilization: float,
    offered_share: float = MIN_WORK_SHARE,
    needs: Iterable[float] | None = None,
) -> float:
    """The time between two batches' starts, s.

    Args:
        targets_s: the delay targets of the classes that have tuples (empty: none has).
        period_s: the configured control period, the longest pace.
        fixed_s: the batch cycle's fixed time ``o`` measured so far, s.
        utilization: ``u``, the share of a pace a batch cycle may take, (0, 1].
        offered_share: the share of a batch cycle the classes' tuples need fully admitted
            (:func:`work_share`); unmeasured, the most the least pace leaves.
        needs: per target, the share of a batch cycle its class's tuples and those of the
            classes above it need fully admitted (unmeasured: none); a pace cut for the
            target leaves them room (:func:`work_share`).
    """
    least = least_pace_s(fixed_s, utilization, offered_share)
    if not (targets := list(targets_s)):
        return max(least, period_s)
    floor = mean_floor_s(fixed_s, utilization)
    need_of = list(needs) if needs is not None else [0.0] * len(targets)
    feasible = [(t, -n) for t, n in zip(targets, need_of, strict=True) if t >= floor]
    if not feasible:
        return least
    tightest, minus_need = min(feasible)  # of equal targets, the one that needs the most
    pace = max(least, min(period_s, TARGET_SHARE * tightest / (1.0 + utilization)))
    # the target before the work: a pace the work share's bound lengthened past what the
    # tightest feasible class's mean allows is cut back to that, as far as the least pace
    # that leaves that class and the classes above it their work (the classes below get
    # shorter batches)
    cut_share = min(MIN_WORK_SHARE, max(LEAST_WORK_SHARE, CUT_MARGIN * -minus_need))
    cut_least = _leaving(fixed_s, utilization, cut_share)
    return min(pace, max(cut_least, mean_pace_s(tightest, utilization)))


def mean_pace_s(target_s: float, utilization: float) -> float:
    """The longest pace at which a fully admitted class answers within ``MEAN_SHARE`` of
    ``target_s`` on average, s: its tuples wait half a pace in the log on average and a
    batch cycle of ``u × P`` (the classes below fill the budget), so
    ``(1/2 + u) × P = MEAN_SHARE × D``."""
    return MEAN_SHARE * target_s / (0.5 + utilization)


def least_pace_s(fixed_s: float, utilization: float, offered_share: float) -> float:
    """The shortest pace, s: the fixed time ``o`` leaves :func:`work_share` of a batch
    cycle (``u × P``) for work, and never below ``MIN_PACE_S``."""
    return _leaving(fixed_s, utilization, work_share(offered_share))


def _leaving(fixed_s: float, utilization: float, share: float) -> float:
    """The shortest pace whose cycle (``u × P``) leaves ``share`` of it for work after the
    fixed time ``o``, never below ``MIN_PACE_S``, s."""
    return max(MIN_PACE_S, fixed_s / (utilization * (1.0 - share)))


def work_share(offered_share: float) -> float:
    """The share of a batch cycle the least pace leaves for work when the classes' tuples,
    fully admitted, need ``offered_share`` of it: ``WORK_MARGIN`` times that, within
    [``LEAST_WORK_SHARE``, ``MIN_WORK_SHARE``]."""
    return min(MIN_WORK_SHARE, max(LEAST_WORK_SHARE, WORK_MARGIN * offered_share))


def mean_floor_s(fixed_s: float, utilization: float) -> float:
    """The least *mean* response time a fully admitted class gets, s: its tuples arrive
    through a pace at the least pace and wait half of it on average for the batch that
    takes them, which runs at least its fixed time ``o``: ``P_least / 2 + o``. Other
    classes' work is not in it (shedding them would take it out of the batch: the least
    pace for no offered work), so a target below it is one that no admission can meet on
    average, the statistic the promise is on: the class is infeasible. :func:`floor_s`
    is the longest answer's."""
    return least_pace_s(fixed_s, utilization, 0.0) / 2.0 + fixed_s


def floor_s(pace: float, fixed_s: float, utilization: float) -> float:
    """The least response time the engine serves at pace ``pace``, s: a tuple may arrive
    just after a batch took its offsets, waits one pace for the next one, and that batch
    runs its fixed time ``o`` and the work the classes below fill its budget with: at the
    least pace the work share ``MIN_WORK_SHARE`` of its cycle, so ``o / (1 −
    MIN_WORK_SHARE)``, and at a pace a target cut below that (:func:`mean_pace_s`) the
    cycle ``u × P`` the budget keeps. The stale rule measures a queued tuple's remaining
    way by it; feasibility is judged on the mean (:func:`mean_floor_s`)."""
    batch = min(fixed_s / (1.0 - MIN_WORK_SHARE), max(fixed_s, utilization * pace))
    return max(pace, fixed_s) + batch


def bare_floor_s(pace: float, fixed_s: float) -> float:
    """The least response time any admission could give at pace ``pace``, s: one pace
    and a batch that runs its fixed time ``o`` only, every class shed or kept waiting
    (the oracle's floor: it judges the controller by what no admission could beat)."""
    return max(pace, fixed_s) + fixed_s

"""The cluster coordinator's policy: the executors of one cluster divided among its jobs by
global priority (ARMaDILoS, 001 §7.1).

Each job keeps its own DILoS inside the executors it may hold; the coordinator decides
only how many that is, the job's *allocation*: the ceiling its elastic controller grows
to (:mod:`elastic`), and what it must release when the coordinator lowers it.

**The priority allocation** (:func:`priority_allocation`). Every job first gets its
``min_executors``. Then two passes over the priority levels of all the jobs' classes,
highest first. At each level every job asks for the executors that carry its classes of
that priority and above at a usage of their capacity (``⌈Σ L_k / (c × u)⌉``, ``L_k`` a
class's offered load in processor seconds per second, ``c`` what one executor serves),
up to its ``max_executors``: the first pass at ``need_usage`` (what the classes need),
the second, with what is left, at the lower ``target_usage`` (headroom). While the
cluster can give a level's asks, every job gets them; the first level it cannot is split
in proportion to the asks (largest remainder), and lower levels get nothing. So a higher
class anywhere is served before a lower class anywhere, and the headroom of a higher one
is never bought with a lower one's need; a job given less than its classes ask sheds its
lowest classes first (its DILoS). Executors left after both passes go, as room to grow,
to the jobs in the order of their highest class, up to their maxima; a higher job's need
takes them back.

**Hysteresis** (:class:`Coordinator`). The allocation in force changes only when a job is
*short*: the allocation asks it more executors and the load of the classes it would
serve uses its executors now at ``short_usage`` or more, for ``hold_s`` in a row, and at
least ``min_interval_s`` after the last such change. Sized at ``need_usage`` or below
(under ``short_usage``), the same load finds no job short again: a constant load causes
one reallocation at most (a load must grow by ``short_usage / need_usage`` to make a job
short again), and the interval bounds how often a moving one can. A change of the set of
jobs (one started or ended) is applied at once.

Pure: no Spark import, time is passed in (simulated or wall-clock seconds).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from spark_runner.core.elastic import MAX_EXECUTORS, MAX_HOLD_S
from spark_runner.core.errors import ParameterError
from spark_runner.core.params import Rule, check_rules

LOAD_WINDOW_S = 10.0
"""A job reports each class's load as its median over the periods that ended this
recently: one period's load on Spark moves by a fifth and more from the next, and a slow
batch (a new executor's JVM starting) can read ten times the load for a period or two."""


@dataclass(frozen=True)
class ClassLoad:
    """One class of a job as its report gives it: priority (larger is more important) and
    offered load, processor seconds per second before shedding."""

    name: str
    priority: float
    load: float


@dataclass(frozen=True)
class JobReport:
    """One job's report to the coordinator.

    Attributes:
        job: the job's name (unique in the cluster).
        classes: its classes' priorities and loads.
        min_executors, max_executors: the fewest and most executors it may hold.
        executor_capacity: what one of its executors serves, processor s/s (its cores).
        serving: the executors serving it now (None: not reported). Its own elastic
            policy may hold fewer than its allocation, and one more takes a start-up.
    """

    job: str
    classes: tuple[ClassLoad, ...]
    min_executors: int = 1
    max_executors: int = MAX_EXECUTORS
    executor_capacity: float = 1.0
    serving: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.min_executors <= self.max_executors:
            raise ParameterError(
                f"{self.job}.min_executors",
                self.min_executors,
                f"must be within [1, max_executors={self.max_executors}]",
            )
        if not self.executor_capacity > 0:
            raise ParameterError(
                f"{self.job}.executor_capacity", self.executor_capacity, "must be > 0"
            )

    def top_priority(self) -> float:
        return max((c.priority for c in self.classes), default=-math.inf)

    def load_from(self, priority: float) -> float:
        """The load of its classes of ``priority`` and above."""
        return sum(max(c.load, 0.0) for c in self.classes if c.priority >= priority)


def executor_loads(loads: Mapping[str, float], usage: float, executors: int) -> dict[str, float]:
    """Each class's load in executors (what it takes of one executor a second) from what an
    elastic job measured over a period: its classes' loads ``L_k`` in its own unit, its
    usage ``u = ΣL / L_C`` of the ``executors`` serving it: ``L_k / ΣL × u × executors``.
    A Spark job reckons loads in its pool's capacity seconds (they halve when the pool
    doubles), so only their shares and ``u`` carry over; in the simulator, where an
    executor serves one processor second a second, this is ``L_k`` itself."""
    total = sum(max(v, 0.0) for v in loads.values())
    if not total > 0 or not usage > 0 or executors <= 0:
        return dict.fromkeys(loads, 0.0)
    return {name: max(v, 0.0) / total * usage * executors for name, v in loads.items()}


@dataclass(frozen=True)
class CoordinatorParams:
    """The coordinator's settings.

    Attributes:
        need_usage: the capacity usage at which the classes' needs are given, in priority
            order across the cluster (≤ 1) [0.95].
        target_usage: then, with what is left, the usage a job's allocation is sized
            for, again in priority order (the headroom; ≤ ``need_usage``) [0.8].
        short_usage: a job asked more executors is short once the classes it would serve
            use its allocation at this or more (> ``need_usage``, ≤ 1) [1.0].
        hold_s: how long a job must stay short before the allocation changes, s [10].
        min_interval_s: the least time between two changes a shortage made, s [30].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        "target_usage": (Rule.closed(0.0, 1.0), Rule.positive()),
        "need_usage": (
            Rule.closed(0.0, 1.0),
            Rule.checked_elsewhere("must be >= target_usage"),
        ),
        "short_usage": (
            Rule.closed(0.0, 1.0),
            Rule.checked_elsewhere("must be > need_usage"),
        ),
        "hold_s": (Rule.non_negative(" seconds"), Rule.closed(0, MAX_HOLD_S)),
        "min_interval_s": (Rule.non_negative(" seconds"), Rule.closed(0, MAX_HOLD_S)),
    }

    need_usage: float = 0.95
    target_usage: float = 0.8
    short_usage: float = 1.0
    hold_s: float = 10.0
    min_interval_s: float = 30.0

    def __post_init__(self) -> None:
        check_rules(self)
        if not self.need_usage >= self.target_usage:
            raise ParameterError(
                "need_usage", self.need_usage, f"must be >= target_usage={self.target_usage}"
            )
        if not self.short_usage > self.need_usage:
            raise ParameterError(
                "short_usage", self.short_usage, f"must be > need_usage={self.need_usage}"
            )


@dataclass(frozen=True)
class Allocation:
    """The executors each job may hold, and the load of the classes each is sized to
    serve (processor s/s: its classes of the levels that were given executors)."""

    executors: Mapping[str, int]
    served_load: Mapping[str, float]


def priority_allocation(
    jobs: Sequence[JobReport], executors: int, params: CoordinatorParams | None = None
) -> Allocation:
    """The cluster's ``executors`` divided among ``jobs`` by global priority (module)."""
    p = params or CoordinatorParams()
    names = [j.job for j in jobs]
    if len(set(names)) != len(names):
        raise ParameterError("jobs", names, "must have distinct names")
    floor = sum(j.min_executors for j in jobs)
    if floor > executors:
        raise ParameterError(
            "executors", executors, f"must hold every job's min_executors ({floor})"
        )
    given = {j.job: j.min_executors for j in jobs}
    served = dict.fromkeys(given, 0.0)
    left = _fill(jobs, given, executors - floor, p.need_usage, served)
    left = _fill(jobs, given, left, p.target_usage)
    for j in sorted(jobs, key=lambda j: -j.top_priority()):
        extra = min(left, j.max_executors - given[j.job])
        given[j.job] += extra
        left -= extra
    return Allocation(MappingProxyType(given), MappingProxyType(served))


def _fill(
    jobs: Sequence[JobReport],
    given: dict[str, int],
    left: int,
    usage: float,
    served: dict[str, float] | None = None,
) -> int:
    """Add to ``given`` what each priority level asks at ``usage``, highest first, out of
    ``left`` executors; the first level they cannot cover is split in proportion and the
    lower ones get nothing. ``served``: each job's load of the levels reached. Returns
    the executors left."""
    for level in sorted({c.priority for j in jobs for c in j.classes}, reverse=True):
        if left <= 0:
            break
        asks = {j.job: max(0, _ask(j, level, usage) - given[j.job]) for j in jobs}
        if served is not None:
            served.update({j.job: j.load_from(level) for j in jobs if j.load_from(level) > 0})
        grant = asks if sum(asks.values()) <= left else _split(asks, left)
        for name, extra in grant.items():
            given[name] += extra
        left -= sum(grant.values())
        if grant != asks:
            break
    return left


def _ask(job: JobReport, level: float, usage: float) -> int:
    """The executors ``job`` needs to carry its classes of ``level`` and above at
    ``usage`` of their capacity, within its bounds."""
    wanted = math.ceil(job.load_from(level) / (job.executor_capacity * usage) - 1e-9)
    return min(max(wanted, job.min_executors), job.max_executors)


def _split(asks: Mapping[str, int], available: int) -> dict[str, int]:
    """``available`` executors in proportion to ``asks`` (largest remainder; ties to the
    first asker)."""
    total = sum(asks.values())
    shares = {n: available * a / total for n, a in asks.items()}
    out = {n: math.floor(s) for n, s in shares.items()}
    by_remainder = sorted(asks, key=lambda n: -(shares[n] - out[n]))
    for name in by_remainder[: available - sum(out.values())]:
        out[name] += 1
    return out


@dataclass(frozen=True)
class Reallocation:
    """One change of the allocation in force, with what triggered it.

    Attributes:
        at_s: when it was made, s.
        trigger: the short job (``None``: the set of jobs changed).
        usage: the trigger's usage of its allocation before, by the classes it serves.
        held_s: how long it had been short, s.
        before, after: each job's allocation (a job new to the cluster is absent from
            ``before``, one gone from ``after``).
    """

    at_s: float
    trigger: str | None
    usage: float
    held_s: float
    before: Mapping[str, int]
    after: Mapping[str, int]

    def moved(self) -> int:
        """Executors taken from some jobs and given to others."""
        return sum(max(0, self.before.get(n, 0) - a) for n, a in self.after.items())


@dataclass
class Coordinator:
    """The priority allocation over time, with its hysteresis (see module).

    Its state is its fields, so a service can keep it between rounds (in a table):
    ``allocation`` in force, when a shortage last changed it (``last_change_s``) and
    since when a job has been short (``short_since_s``; None: none is)."""

    params: CoordinatorParams = field(default_factory=CoordinatorParams)
    allocation: dict[str, int] = field(default_factory=dict)
    last_change_s: float = -math.inf
    short_since_s: float | None = None

    def step(self, now_s: float, jobs: Sequence[JobReport], executors: int) -> Reallocation | None:
        """One round: the jobs' reports and the cluster's executors. Returns the change
        made, if any; ``allocation`` is the one in force after it."""
        p = self.params
        ideal = priority_allocation(jobs, executors, p)
        if set(ideal.executors) != set(self.allocation):
            return self._apply(now_s, ideal, None, 0.0, 0.0)
        short = self._shortest(jobs, ideal)
        if short is None:
            self.short_since_s = None
            return None
        since = self.short_since_s = now_s if self.short_since_s is None else self.short_since_s
        if now_s - since < p.hold_s or now_s - self.last_change_s < p.min_interval_s:
            return None
        name, usage = short
        return self._apply(now_s, ideal, name, usage, now_s - since)

    def _shortest(self, jobs: Sequence[JobReport], ideal: Allocation) -> tuple[str, float] | None:
        """The short job with the highest usage, and that usage (``None``: none is)."""
        usages = {
            j.job: ideal.served_load[j.job] / (self.allocation[j.job] * j.executor_capacity)
            for j in jobs
            if ideal.executors[j.job] > self.allocation[j.job]
        }
        short = [(n, u) for n, u in usages.items() if u >= self.params.short_usage]
        return max(short, key=lambda s: s[1]) if short else None

    def _apply(
        self, now_s: float, ideal: Allocation, trigger: str | None, usage: float, held_s: float
    ) -> Reallocation:
        before = MappingProxyType(dict(self.allocation))
        self.allocation = dict(ideal.executors)
        if trigger is not None:  # a job starting or ending does not hold the next change
            self.last_change_s = now_s
        self.short_since_s = None
        return Reallocation(now_s, trigger, usage, held_s, before, ideal.executors)

"""Elastic capacity: when to add or release executors, and how many (spec §5).

The job's utilisation is DILoS's capacity usage ``u = L / L_C``: the load offered to
the job (before shedding) over the capacity its executors give. ESJ's thresholds (seed
000) read it: at or above τ3 for ``hold_out_s`` the job scales out, at or below τ0 for
the longer ``hold_in_s`` it scales in, and in both cases to the size that brings u back
to τ1 (StreamCloud's load-aware provisioning, seed 002 §V: ``n_new = ⌈n × u / τ1⌉``),
in one step rather than one executor at a time. Sizes stay between the initial size M
and the job's maximum, and a scale-out takes no more than the cluster has free.

Hysteresis: the hold restarts after every action and while a requested size is not yet
serving (u measured on the old capacity says nothing about the new one), and one-step
sizing lands u near τ1, between τ0 and τ3, so a constant load causes no further action.

Shedding covers only what scaling cannot: while capacity is being added (a scale-out
requested or its hold running, the pool below its maximum, and for ``warmup_s`` after
the new executors serve) the job sheds what its managers shed together but no more than
the load above τ2 of its capacity (:meth:`ScalingPolicy.shed_bound`), lowest classes
first (:func:`bounded_shed`); at the maximum size, warm, the load managers and DILoS
decide as without elasticity. ESJ's initial size M (:func:`sized_at_start`) starts the
pool where the expected load sits at τ1.

Pure: no Spark import, time is passed in (simulated or wall-clock seconds).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, TypeVar

from spark_runner.core.errors import ParameterError
from spark_runner.core.params import Rule, check_rules
from spark_runner.core.thresholds import TAUS, THRESHOLD_RULE, Thresholds, validate_thresholds

ScalingRule = Literal["scale_out", "scale_in"]
SIZINGS = ("load_aware", "one_at_a_time")
STARTS = ("min_executors", "expected_load")
MAX_EXECUTORS = 10_000
"""No pool holds more executors than this."""
MAX_HOLD_S = 3_600.0
"""Hold times and the start-up timeout are at most an hour, s."""


@dataclass(frozen=True)
class ScalingParams:
    """A job's elasticity settings.

    Attributes:
        tau0..tau3: utilisation thresholds, ``0 < τ0 < τ1 < τ2 < τ3 <= 1``: scale in at or
            below τ0, size to τ1, shed above τ2 while capacity is added, scale out at or
            above τ3; a job takes the lowest of its classes' (:func:`job_thresholds`)
            [0.2, 0.4, 0.8, 0.95].
        hold_out_s: how long u must stay at or above τ3 before a scale-out, s (> 0) [10].
        hold_in_s: how long u must stay at or below τ0 before a scale-in, s (at least
            ``hold_out_s``) [30].
        min_executors: the initial size M; the job never scales in below it (>= 1) [1].
        max_executors: the most executors the job may hold (>= ``min_executors``) [1].
        executor_cores: cores of one executor (>= 1) [1].
        sizing: ``load_aware`` (to τ1 in one step) or ``one_at_a_time`` (±1 per
            action, for comparison) [load_aware].
        startup_timeout_s: a size asked for and not serving after this long is given up
            (the cluster could not start the executors): the pool keeps what serves, s
            (> 0) [120].
        warmup_s: for this long after a scale-out's executors serve, capacity still
            counts as being added (their first batches are slow while their JVM and
            Python workers start), s (>= 0) [15].
        start: ``min_executors`` (the pool starts at ``min_executors``) or
            ``expected_load`` (at ESJ's ``M = ⌈expected load / (capacity per executor ×
            τ1)⌉`` from the scenario's declared rates and costs at its start, at least
            ``min_executors``: :func:`sized_at_start`); it never scales in below its
            start [min_executors].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        **{tau: (Rule.checked_elsewhere(THRESHOLD_RULE),) for tau in TAUS},
        "hold_out_s": (Rule.positive(" seconds"), Rule.closed(0, MAX_HOLD_S)),
        "hold_in_s": (
            Rule.positive(" seconds"),
            Rule.closed(0, MAX_HOLD_S),
            Rule.checked_elsewhere("must be >= hold_out_s"),
        ),
        "min_executors": (Rule.at_least(1), Rule.closed(1, MAX_EXECUTORS)),
        "max_executors": (
            Rule.at_least(1),
            Rule.closed(1, MAX_EXECUTORS),
            Rule.checked_elsewhere("must be >= min_executors"),
        ),
        "executor_cores": (Rule.at_least(1), Rule.closed(1, 1_024)),
        "sizing": (Rule.one_of(SIZINGS),),
        "startup_timeout_s": (Rule.positive(" seconds"), Rule.closed(0, MAX_HOLD_S)),
        "warmup_s": (Rule.non_negative(" seconds"), Rule.closed(0, MAX_HOLD_S)),
        "start": (Rule.one_of(STARTS),),
    }

    tau0: float = 0.2
    tau1: float = 0.4
    tau2: float = 0.8
    tau3: float = 0.95
    hold_out_s: float = 10.0
    hold_in_s: float = 30.0
    min_executors: int = 1
    max_executors: int = 1
    executor_cores: int = 1
    sizing: str = "load_aware"
    startup_timeout_s: float = 120.0
    warmup_s: float = 15.0
    start: str = "min_executors"

    def __post_init__(self) -> None:
        validate_thresholds(self.tau0, self.tau1, self.tau2, self.tau3)
        check_rules(self)
        if self.hold_in_s < self.hold_out_s:
            raise ParameterError(
                "hold_in_s", self.hold_in_s, f"must be >= hold_out_s={self.hold_out_s}"
            )
        if self.max_executors < self.min_executors:
            raise ParameterError(
                "max_executors",
                self.max_executors,
                f"must be >= min_executors={self.min_executors}",
            )


def job_thresholds(per_class: Iterable[Thresholds]) -> dict[str, float]:
    """The job's thresholds from its classes': each the lowest of theirs, so the job adds
    executors as soon as its usage passes any class's τ3, sizes for the most demanding
    τ1, and releases only below every class's τ0. (The lowest of ordered thresholds are
    ordered: ``min τ1`` is some class's τ1, above that class's τ0.)"""
    chosen = list(per_class)
    if not chosen:
        return {}
    return {tau: min(getattr(t, tau) for t in chosen) for tau in TAUS}


def initial_size(expected_load: float, capacity_per_executor: float, params: ScalingParams) -> int:
    """ESJ's initial size ``M = ⌈expected load / (capacity per executor × τ1)⌉``, within
    [1, ``max_executors``]. ``expected_load`` is processor time per second the job's
    declared rates (or its last run) ask; ``capacity_per_executor`` what one executor
    serves per second (both s/s)."""
    if not capacity_per_executor > 0:
        raise ParameterError("capacity_per_executor", capacity_per_executor, "must be > 0")
    wanted = math.ceil(max(expected_load, 0.0) / (capacity_per_executor * params.tau1))
    return min(max(wanted, 1), params.max_executors)


def sized_at_start(params: ScalingParams, expected_load: float) -> ScalingParams:
    """The settings a run starts with: with ``start: expected_load``, ``min_executors``
    becomes ESJ's M for ``expected_load`` (processor seconds per second; an executor
    serves ``executor_cores`` of them), never less than the one declared."""
    if params.start != "expected_load":
        return params
    m = initial_size(expected_load, float(params.executor_cores), params)
    return dataclasses.replace(params, min_executors=max(params.min_executors, m))


@dataclass(frozen=True)
class ScalingAction:
    """One decision to change the pool's size, with what triggered it.

    Attributes:
        at_s: when it was taken, s.
        rule: ``scale_out`` (u at or above τ3) or ``scale_in`` (u at or below τ0).
        utilization: u when it was taken; ``threshold`` the τ it crossed.
        held_s: how long u had stayed past the threshold, s.
        executors_before, executors_after: the pool's size before and the size asked.
    """

    at_s: float
    rule: ScalingRule
    utilization: float
    threshold: float
    held_s: float
    executors_before: int
    executors_after: int


class ScalingPolicy:
    """The thresholds' rules over time for one job (see module)."""

    def __init__(self, params: ScalingParams, executors: int) -> None:
        self.params = params
        self.target = executors
        self._above_since: float | None = None
        self._below_since: float | None = None
        self._asked_at: float | None = None
        self._warm_at = -math.inf  # when the executors of the last scale-out are warm
        self._grew = False  # the size asked is a scale-out's
        self._expected_u = math.inf  # the usage the last scale-out sized for

    def _size(self, executors: int, utilization: float) -> int:
        """The size that brings u to τ1 (or one step toward it)."""
        if self.params.sizing == "one_at_a_time":
            return executors + (1 if utilization >= self.params.tau3 else -1)
        return math.ceil(executors * utilization / self.params.tau1)

    def step(
        self, now_s: float, utilization: float, executors: int, free_executors: int
    ) -> ScalingAction | None:
        """One period's look at u with ``executors`` serving and ``free_executors`` more
        the cluster could start now. Returns the action to take, if any."""
        p = self.params
        if executors != self.target:  # a change is under way: u still reads the old pool
            self._above_since = self._below_since = None
            asked = self._asked_at if self._asked_at is not None else now_s
            if now_s - asked < p.startup_timeout_s:
                return None
            self.target = executors  # the cluster could not: keep what serves
        elif self._asked_at is not None and self._grew:
            self._warm_at = now_s + p.warmup_s  # the new executors serve from now
        self._asked_at = None
        self._above_since = _since(self._above_since, now_s, utilization >= p.tau3)
        self._below_since = _since(self._below_since, now_s, utilization <= p.tau0)
        if self._above_since is not None and now_s - self._above_since >= p.hold_out_s:
            most = min(p.max_executors, executors + max(free_executors, 0))
            size = min(most, max(executors + 1, self._size(executors, utilization)))
            return self._act(now_s, "scale_out", utilization, p.tau3, executors, size)
        if self._below_since is not None and now_s - self._below_since >= p.hold_in_s:
            size = max(p.min_executors, min(executors - 1, self._size(executors, utilization)))
            return self._act(now_s, "scale_in", utilization, p.tau0, executors, size)
        return None

    def _act(
        self,
        now_s: float,
        rule: ScalingRule,
        utilization: float,
        threshold: float,
        executors: int,
        size: int,
    ) -> ScalingAction | None:
        if size == executors:  # at a bound: nothing to do, keep watching
            return None
        since = self._above_since if rule == "scale_out" else self._below_since
        held = now_s - (since if since is not None else now_s)
        self.target = size
        self._asked_at = now_s
        self._grew = rule == "scale_out"
        self._expected_u = utilization * executors / size
        self._above_since = self._below_since = None
        return ScalingAction(now_s, rule, utilization, threshold, held, executors, size)

    def adding(self, now_s: float, executors: int, free_executors: int) -> bool:
        """Capacity is being added or can still be: a scale-out is under way or its
        executors are warming up, or its hold is running and the pool can still grow."""
        if self.target > executors or now_s < self._warm_at:
            return True
        can_grow = executors < self.params.max_executors and free_executors > 0
        return self._above_since is not None and can_grow

    def shed_bound(
        self, now_s: float, utilization: float, executors: int, free_executors: int
    ) -> float | None:
        """The most the job sheds while capacity is being added: the load above τ2 of its
        capacity, ``1 − τ2 / u`` (0 below τ2). ``None`` when scaling covers nothing (at
        the maximum size, or no scale-out coming): the managers decide alone. While new
        executors warm up, u is at most what the scale-out sized for (its slow first
        batches overstate the load on the pool that is coming)."""
        if not self.adding(now_s, executors, free_executors):
            return None
        if executors >= self.target and now_s < self._warm_at:
            utilization = min(utilization, self._expected_u)
        if utilization <= self.params.tau2:
            return 0.0
        return 1.0 - self.params.tau2 / utilization


def _since(started: float | None, now_s: float, holds: bool) -> float | None:
    """When a condition began to hold (``None`` while it does not)."""
    if not holds:
        return None
    return now_s if started is None else started


def job_usage(loads: Mapping[str, float], capacity: float) -> float:
    """The job's capacity usage ``u = Σ L_k / L_C``: the load offered to its classes
    (before shedding) over the capacity its pool gives, both processor seconds per
    second (0 without load; ``inf`` with load and no capacity)."""
    load = sum(max(v, 0.0) for v in loads.values())
    if load <= 0.0:
        return 0.0
    return load / capacity if capacity > 0.0 else math.inf


def bounded_shed(
    shed: Mapping[str, float],
    loads: Mapping[str, float],
    bound: float,
    order: Sequence[str],
) -> dict[str, float]:
    """The classes' shed fractions while capacity is being added: the work the managers
    shed together, at most ``bound`` of the job's load, taken from the lowest classes of
    ``order`` (highest priority first) up, each up to all of its load, so priority decides
    who sheds and the higher classes are spared."""
    load = {n: max(loads.get(n, 0.0), 0.0) for n in shed}
    work = min(sum(shed[n] * load[n] for n in shed), max(bound, 0.0) * sum(load.values()))
    out = dict.fromkeys(shed, 0.0)
    for name in [n for n in reversed(order) if n in out]:
        if work <= 0.0:
            break
        if load[name] <= 0.0:
            continue
        taken = min(load[name], work)
        out[name] = taken / load[name]
        work -= taken
    return out


_Rule = TypeVar("_Rule")


def spared_queues(
    managed: Mapping[str, float],
    applied: Mapping[str, float],
    stale: Mapping[str, _Rule | None],
) -> dict[str, _Rule | None]:
    """The classes' stale rules while capacity is being added: a class the bound spares
    (its manager sheds, it sheds nothing: the lower classes took its shedding) keeps its
    queue as well, which the capacity coming serves late rather than loses; the other
    classes' rules stand. (A machine slowed by the new executor's start raises the floor,
    and the top class's queued tuples read as stale while the lower classes shed.)"""
    return {
        n: None if applied.get(n, 0.0) <= 0.0 < managed.get(n, 0.0) else rule
        for n, rule in stale.items()
    }

"""What a load manager sees of one control period, and what it answers.

Units: times in seconds, loads in seconds of processing per second of wall time (s/s),
rates in tuples per second, costs in seconds per tuple. A period's observation describes
the period that just ended; the decision applies to the next one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from spark_runner.core.errors import ParameterError


class LoadState(StrEnum):
    """Load state of a class as a manager sees it (001 §5.2.1).

    ``UT`` and ``OT`` come from a response-time monitor (ALoMa). Managers without one
    report ``OT`` when the period's worst response time exceeded the delay target,
    ``OVERLOADED`` when they shed or their load exceeds their capacity, else ``NORMAL``.
    """

    NORMAL = "normal"
    UT = "UT"
    OT = "OT"
    OVERLOADED = "overloaded"
    INFEASIBLE = "infeasible"


@dataclass(frozen=True, slots=True)
class ResponseTimeStats:
    """Response times of the output tuples produced in one period (001 Def. 3).

    ``count`` is the number of output tuples; when it is 0 the period produced no output
    and ``mean_s``/``max_s`` carry no information. Invariant: ``0 <= mean_s <= max_s``.
    """

    mean_s: float = 0.0
    max_s: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ParameterError("response_time.count", self.count, "must be >= 0")
        if self.count == 0:
            return
        for name, value in (
            ("response_time.mean_s", self.mean_s),
            ("response_time.max_s", self.max_s),
        ):
            if not (math.isfinite(value) and value >= 0):
                raise ParameterError(name, value, "must be a finite number >= 0 seconds")
        if self.mean_s > self.max_s * (1 + 1e-9) + 1e-12:
            raise ParameterError("response_time.mean_s", self.mean_s, "must be <= max_s")

    @property
    def has_output(self) -> bool:
        return self.count > 0


NO_OUTPUT = ResponseTimeStats()


@dataclass(frozen=True, slots=True)
class Observation:
    """Statistics of one class over the control period that just ended.

    Attributes:
        period_s: length T of the period, s (> 0).
        load: incoming load L of the class before shedding (Eq. 3.1), s/s.
        arrival_rate_per_s: tuples/s that arrived at the class's shedding points,
            before shedding.
        response_time: response times of the outputs produced in the period.
        queue_length: tuples waiting in the class's operator queues at the period's end.
        queued_load_s: queued load qL (Eq. 4.1), seconds of work waiting at the end.
        arrived_count: tuples that arrived in the period (before shedding).
        processed_count: input tuples whose processing completed in the period.
        shed_count: tuples the shedder dropped in the period.
        cost_per_tuple_s: average processing cost per arriving tuple c, s/tuple
            (the load coefficient averaged over the class's inputs).
        transient: the load model saw an operator cost far above its running average.
        idle_load: processor time nobody used in the period, s/s (idle time / T); the
            same for every class; 0 where the engine does not measure it.
        busy_load: processor time the class's operators took in the period, s/s (busy
            time / T); ``None`` where the engine does not measure it.
        floor_s: the response time the engine gives this class with almost nothing
            admitted (a lone tuple's way through its operators, waits included), s;
            ``None`` where the engine does not measure it. A delay target below it
            cannot be met by any shedding where ``mean_floor_s`` is not given.
        mean_floor_s: the least mean response time the engine gives this class's tuples
            fully admitted, with no other class's work in their batches, s; ``None``
            where the engine does not measure it (``floor_s`` stands for it). A delay
            target below it cannot be met on average by any admission (the class is
            *infeasible*): the promise is on the mean.
        stale_first: the engine sheds this class's stale tuples first (those it can no
            longer deliver within its target, DILoS's ``StaleRule``), so its queue holds
            only work that can still make it.
        stale_shed_count: of ``shed_count``, the queued tuples shed as stale.
        slowdown: how much slower than the engine's model of the machine its last
            batches ran (≥ 1): above 1 while the engine's batch budget catches up with a
            machine that turned slower (another process took cores); 1 where the
            engine does not measure it.
        stall: how much slower than that model the engine's last batch alone ran (≥ 1):
            a batch that stalled (a new executor loading its state stores, a GC pause)
            shows here before ``slowdown`` can tell a slower machine from one slow
            batch; 1 where the engine does not measure it.
    """

    period_s: float
    load: float
    arrival_rate_per_s: float = 0.0
    response_time: ResponseTimeStats = NO_OUTPUT
    queue_length: float = 0.0
    queued_load_s: float = 0.0
    arrived_count: int = 0
    processed_count: int = 0
    shed_count: int = 0
    cost_per_tuple_s: float = 0.0
    transient: bool = False
    idle_load: float = 0.0
    busy_load: float | None = None
    floor_s: float | None = None
    mean_floor_s: float | None = None
    stale_first: bool = False
    stale_shed_count: int = 0
    slowdown: float = 1.0
    stall: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.period_s) and self.period_s > 0):
            raise ParameterError("period_s", self.period_s, "must be > 0 seconds")
        for name in (
            "load",
            "arrival_rate_per_s",
            "queue_length",
            "queued_load_s",
            "cost_per_tuple_s",
            "idle_load",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ParameterError(name, value, "must be a finite number >= 0")
        if self.busy_load is not None and not (
            math.isfinite(self.busy_load) and self.busy_load >= 0
        ):
            raise ParameterError("busy_load", self.busy_load, "must be a finite number >= 0")
        for name in ("floor_s", "mean_floor_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ParameterError(name, value, "must be a finite number >= 0 seconds")
        for name in ("slowdown", "stall"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 1.0):
                raise ParameterError(name, value, "must be a finite number >= 1")
        for name in ("arrived_count", "processed_count", "shed_count", "stale_shed_count"):
            if getattr(self, name) < 0:
                raise ParameterError(name, getattr(self, name), "must be >= 0")

    @property
    def output_count(self) -> int:
        """Output tuples produced in the period."""
        return self.response_time.count

    @property
    def feasibility_floor_s(self) -> float | None:
        """The floor a delay target is judged feasible by: the mean floor where the
        engine measures it, else ``floor_s``."""
        return self.mean_floor_s if self.mean_floor_s is not None else self.floor_s


@dataclass(frozen=True, slots=True)
class Decision:
    """A manager's answer for the next period, plus its internals for display.

    Attributes:
        kind: the manager kind that decided ("aloma", "ctrl", ...).
        shed_fraction: share of the class's arriving tuples to drop next period, in
            ``[0, max_shed]``, applied uniformly at the class's shedding points.
        state: detected load state.
        headroom: the manager's capacity estimate L_C (= headroom H), s/s; ``None`` for a
            manager that has none.
        load: the incoming load L it acted on, s/s.
        admitted_load: ``load × (1 − shed_fraction)``, s/s.
        estimated_delay_s: the delay-model estimate y (CTRL, SEaMLeSS), else ``None``.
        details: manager-specific numbers for the dashboard (counters, controller terms).
        action: short name of what the manager did this period (e.g. "shed_excess").
    """

    kind: str
    shed_fraction: float
    state: LoadState
    headroom: float | None
    load: float
    admitted_load: float
    estimated_delay_s: float | None = None
    details: Mapping[str, float] = field(default_factory=dict)
    action: str = "hold"

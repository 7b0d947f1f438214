"""The oracle's loss: the least a class could have shed and still met its delay target.

One definition, used by the simulator and the Spark runner alike. Each control period
the engine reports, per class, the work offered (its load L before shedding × T), the
processor time the class could have had (its busy time plus the idle time), the floor
(the least response time any tuple gets; 0 where it is not measured) and how long the
engine was not running at the period's start (the first period of a run whose streams
flowed before it started: no capacity then). The oracle knows every period in advance
and serves the offered work as a fluid, oldest first: work that arrived in a period
(taken at its middle, or, in a period longer than the time a tuple may wait, in slices
no longer than that, each at its middle) must be served within the delay target less
the floor; whatever is still waiting at its deadline had to be shed (so tuples already
past their target when the engine started are shed by the oracle too). Oldest first with
one common relative deadline is optimal for a fluid server (any admitted set must fit
each interval's capacity, and serving in deadline order keeps the most), so what this
sheds is the least any admission could have shed.

Periods in which the class is infeasible (floor at or above its target) are not judged:
no admission meets the target there, so their offered work is neither counted nor shed
(the capacity still serves what waits). A class late in a period in which it was feasible
and whose work did not fit in time has a non-zero oracle; a class whose work always fit
has 0 (its late periods were the controller's doing, not the load's).

The loss is a share of the work *judged*: the offered work served in full or whose
deadline has passed. What still waits at the end of a run (the last ``D − floor``
seconds of a class in overload) is neither served nor shed yet; counted as offered, it
lowered the oracle's loss by the share of the run those seconds are (on Spark, a class
shedding three quarters of its load read 64 % instead of 72 % over 20 periods).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from spark_runner.core.params import require_positive

_TINY_S = 1e-12  # less work than this is rounding
_MAX_SLICES = 100  # a period's work is taken in at most this many slices


@dataclass
class OracleMeter:
    """The oracle's loss of one class over a run (see module).

    Attributes:
        delay_target_s: the class's delay target D, s (> 0).
        offered_s: work offered in the periods judged, s.
        shed_s: work the oracle had to shed, s.
        judged_s: of ``offered_s``, the work whose fate is decided (served in full, or its
            deadline passed), s.
    """

    delay_target_s: float
    offered_s: float = 0.0
    shed_s: float = 0.0
    judged_s: float = 0.0
    _now: float = 0.0
    _waiting: deque[list[float]] = field(default_factory=deque)  # [deadline, left, offered]

    def __post_init__(self) -> None:
        require_positive("delay_target_s", self.delay_target_s, " seconds")

    @property
    def loss_fraction(self) -> float:
        """Share of the work judged the oracle had to shed (0 without such work)."""
        return min(self.shed_s / self.judged_s, 1.0) if self.judged_s > _TINY_S else 0.0

    def period(
        self,
        period_s: float,
        offered_s: float,
        capacity_s: float,
        floor_s: float = 0.0,
        down_s: float = 0.0,
    ) -> float:
        """Account one period: ``offered_s`` of work arrived (evenly over the period), the
        class could have had ``capacity_s`` of processor time (at an even rate over the
        period after its first ``down_s`` seconds, in which the engine did not run).
        Returns the work (s) the oracle had to shed in it: what still waited at its
        deadline."""
        require_positive("period_s", period_s, " seconds")
        start, end = self._now, self._now + period_s
        slack = self.delay_target_s - max(floor_s, 0.0)
        if offered_s > 0.0 and slack > 0.0:
            self.offered_s += offered_s
            slices = min(math.ceil(period_s / slack), _MAX_SLICES)
            width, work = period_s / slices, offered_s / slices
            for k in range(slices):
                self._waiting.append([start + (k + 0.5) * width + slack, work, work])
        up = start + min(max(down_s, 0.0), period_s)  # capacity from here to the end
        capacity = max(capacity_s, 0.0)

        def available(at: float) -> float:
            """Processor time the class could have had from the period's start to ``at``."""
            if at >= end:
                return capacity
            return capacity * (at - up) / (end - up) if at > up else 0.0

        shed = used = 0.0
        waiting: deque[list[float]] = deque()
        for deadline, work, offered in self._waiting:  # oldest first, until its deadline
            served = min(work, max(0.0, available(min(end, deadline)) - used))
            used += served
            left = work - served
            if left > _TINY_S and deadline > end:
                waiting.append([deadline, left, offered])
                continue
            self.judged_s += offered  # served in full, or shed what was left at its deadline
            if left > _TINY_S:
                shed += left
        self._waiting = waiting
        self._now = end
        self.shed_s += shed
        return shed

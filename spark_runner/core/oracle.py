"""The oracle's loss: the least a class could have shed and still met its delay target.

One definition, used by the simulator and the Spark runner alike. Each control period
the engine reports, per class, the work offered (its load L before shedding × T), the
processor time the class could have had (its busy time plus the idle time) and the floor
(the least response time any tuple gets; 0 where it is not measured). The oracle knows
every period in advance and serves the offered work as a fluid, oldest first: work that
arrived in a period (taken at its middle) must be served within the delay target less the
floor; whatever is still waiting at its deadline had to be shed. Oldest first with one
common relative deadline is optimal for a fluid server (any admitted set must fit each
interval's capacity, and serving in deadline order keeps the most), so what this sheds is
the least any admission could have shed.

Periods in which the class is infeasible (floor at or above its target) are not judged:
no admission meets the target there, so their offered work is neither counted nor shed
(the capacity still serves what waits). A class late in a period in which it was feasible
and whose work did not fit in time has a non-zero oracle; a class whose work always fit
has 0 (its late periods were the controller's doing, not the load's).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from spark_runner.core.params import require_positive

_TINY_S = 1e-12  # less work than this is rounding


@dataclass
class OracleMeter:
    """The oracle's loss of one class over a run (see module).

    Attributes:
        delay_target_s: the class's delay target D, s (> 0).
        offered_s: work offered in the periods judged, s.
        shed_s: work the oracle had to shed, s.
    """

    delay_target_s: float
    offered_s: float = 0.0
    shed_s: float = 0.0
    _now: float = 0.0
    _waiting: deque[list[float]] = field(default_factory=deque)  # [deadline, work]

    def __post_init__(self) -> None:
        require_positive("delay_target_s", self.delay_target_s, " seconds")

    @property
    def loss_fraction(self) -> float:
        """Share of the offered work the oracle had to shed (0 without offered work)."""
        return min(self.shed_s / self.offered_s, 1.0) if self.offered_s > 0 else 0.0

    def period(
        self, period_s: float, offered_s: float, capacity_s: float, floor_s: float = 0.0
    ) -> float:
        """Account one period: ``offered_s`` of work arrived, the class could have had
        ``capacity_s`` of processor time (at an even rate over the period). Returns the
        work (s) the oracle had to shed in it: what still waited at its deadline."""
        require_positive("period_s", period_s, " seconds")
        start, end = self._now, self._now + period_s
        slack = self.delay_target_s - max(floor_s, 0.0)
        if offered_s > 0.0 and slack > 0.0:
            self.offered_s += offered_s
            self._waiting.append([start + period_s / 2 + slack, offered_s])
        rate = max(capacity_s, 0.0) / period_s
        t, shed = start, 0.0
        waiting: deque[list[float]] = deque()
        for deadline, work in self._waiting:  # oldest first, served until its deadline
            until = min(end, deadline)
            served = min(work, rate * (until - t)) if rate > 0.0 and until > t else 0.0
            t += served / rate if served > 0.0 else 0.0
            left = work - served
            if left <= _TINY_S:
                continue
            if deadline <= end:
                shed += left
            else:
                waiting.append([deadline, left])
        self._waiting = waiting
        self._now = end
        self.shed_s += shed
        return shed

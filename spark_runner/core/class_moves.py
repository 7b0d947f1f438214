"""When the coordinator moves a class between jobs (ARMaDILoS with migration, 001 §7.1-7.2).

Executors move first (:mod:`coordinator`): a job short of capacity is given executors
taken from jobs whose classes are lower. A class moves only when that cannot help: a job
is *overloaded* — its classes use its allocation at ``short_usage`` or more — and the
priority allocation gives it nothing more (the cluster's executors are all given to
classes as high or higher, or the job is at its ``max_executors``). Its DILoS would then
shed its lowest classes; instead, its lowest class that another job holds ready (in
standby: running its queries, computing none of its event time) moves there, if that
job has room for it: its own classes and the moved one at ``need_usage`` or less of the
executors serving it now (where it reports them, else of its allocation). Not of those
it may come to hold: the class switches within seconds, an executor starts in tens of
them, and the class would shed meanwhile. Of several such jobs, the one left least used
takes it.

Lowest first, because that is the class the origin would shed, and because moving it
costs the higher classes nothing: until the switch the origin computes it as before.
The caller spaces the moves (the product: none while a hand-off runs, none within
``min_interval_s`` of the last, and loads that are medians over 10 s). Pure: no Spark
import, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from spark_runner.core.coordinator import CoordinatorParams, JobReport, priority_allocation


@dataclass(frozen=True)
class ClassMove:
    """A class to move, and why: the origin's usage of its allocation now, the target's
    once it serves the class too."""

    class_name: str
    origin: str
    target: str
    origin_usage: float
    target_usage: float


def choose_move(
    jobs: Sequence[JobReport],
    executors: int,
    allocation: Mapping[str, int],
    standby: Mapping[str, frozenset[str]],
    params: CoordinatorParams | None = None,
) -> ClassMove | None:
    """The move to make now, if any (see module). ``allocation``: the executors each job
    may hold now; ``standby``: per job, the classes it holds ready to take."""
    p = params or CoordinatorParams()
    ideal = priority_allocation(jobs, executors, p).executors
    placed = [j for j in jobs if allocation.get(j.job, 0) > 0]

    def usage(job: JobReport) -> float:
        return job.load_from(-math.inf) / (allocation[job.job] * job.executor_capacity)

    def usage_with(job: JobReport, load: float) -> float:
        """``job``'s usage with ``load`` more, of the executors serving it now."""
        room = allocation[job.job] if job.serving is None else min(job.serving, allocation[job.job])
        return (job.load_from(-math.inf) + load) / (max(room, 1) * job.executor_capacity)

    overloaded = [
        j for j in placed if usage(j) >= p.short_usage and ideal.get(j.job, 0) <= allocation[j.job]
    ]
    for origin in sorted(overloaded, key=lambda j: -usage(j)):
        for moving in sorted(origin.classes, key=lambda c: c.priority):
            if not moving.load > 0:
                continue
            room = [
                (usage_with(t, moving.load), t.job)
                for t in placed
                if t.job != origin.job and moving.name in standby.get(t.job, frozenset())
            ]
            fits = [r for r in room if r[0] <= p.need_usage + 1e-9]
            if fits:
                after, target = min(fits)
                return ClassMove(moving.name, origin.job, target, usage(origin), after)
    return None

"""Did a run keep the QoS promise? Judged from a simulation's per-period series.

The promises (issue 12), each with the tolerance a per-period measurement needs:

- **priority order**: while a feasible class sheds (arriving tuples, or queued ones
  stale first), no lower class uses more than its own original share of the processor
  (under ``strict``, none is served at all), beyond one operator turn (a turn is not
  preempted) and a scheduler round's granularity: ``USAGE_TOLERANCE`` of the period's
  processor time, or one round where the classes had less than a round's worth of
  tolerance (stalls, background load). Processor time a lower class took while no class
  above it wanted it (``unwanted_busy_s``: nothing waiting there, nothing turned away at
  the last arrivals) was taken from nobody and does not count, nor does the time the
  scheduler gave it back (``repaid_busy_s``) while another class repaid a turn that overran
  its slot: that turn, never preempted, had delayed every class alike, often in the period
  before. The verdict also reports the same measure over the periods in which the class
  shed arriving tuples (``priority_excess_on_arrival``);
- **top class**: the highest class loses at most ``TOP_LOSS_LIMIT`` of its tuples (shed on
  arrival or stale first) over the periods in which it is feasible and its load fitted
  its share in the period and in the periods one delay target before it (stale first drops
  tuples that arrived up to a target earlier). Its load fits when its arrivals' load does
  and the work it carries queued at the period's end (queue length × cost per tuple, a
  backlog an overload left) is at most a period of its share;
- **no idle while shedding**: no two periods in a row in which a class shed and the
  processor was idle more than ``IDLE_TOLERANCE`` of each. One is allowed: a controller
  learns a period was idle at its end, so it can hand that time over in the next period
  only (a drained backlog, a lull in a higher class);
- **recovery**: no feasible class is late (its largest response time over its target)
  for more than ``RECOVERY_PERIODS`` periods in a row while its shedding had room left
  (below the manager's ``max_shed``);
- **feasibility**: every infeasible class is flagged (state ``infeasible``) and no
  feasible class is.

Usage is a class's busy time over the processor time the classes had in the period (all
their busy time plus idle time). Whether a class shed in a period is read from the tuples
it shed in it (``shed_count``, of which ``stale_shed_count`` stale first); the room left
to shed (recovery) from the shed fraction in force, which a sample reports at its end for
the next period (period p is judged with that of sample p − 1). The first
``WARMUP_PERIODS`` are not judged (managers start from their initial estimates).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spark_runner.scenario.models import Engine
from spark_runner.sim.workloads import MAX_SHED, Workload

WARMUP_PERIODS = 8
SHED_EPS = 0.01
USAGE_TOLERANCE = 0.05
TOP_LOSS_LIMIT = 0.005
IDLE_TOLERANCE = 0.05
RECOVERY_PERIODS = 10
INFEASIBLE_STATE = "infeasible"
PROMISES = ("priority_order", "top_class", "no_idle_while_shedding", "recovery", "feasibility")


@dataclass(frozen=True)
class Verdict:
    """How far a run was from each promise (0 or less: kept) and what was measured."""

    priority_excess: float  # largest usage of a lower class over its share while a higher shed
    priority_excess_on_arrival: float  # the same, where the higher class shed arrivals
    top_loss: float | None  # the top class's loss where its promise applies (None: nowhere)
    idle_while_shedding: float  # largest idle part of two periods in a row in which a class shed
    longest_late_run: int  # periods in a row a feasible class was late with room to shed
    misflagged: tuple[str, ...]  # classes flagged wrongly, either way

    @property
    def kept(self) -> dict[str, bool]:
        return {
            "priority_order": self.priority_excess <= USAGE_TOLERANCE,
            "top_class": self.top_loss is None or self.top_loss <= TOP_LOSS_LIMIT,
            "no_idle_while_shedding": self.idle_while_shedding <= IDLE_TOLERANCE,
            "recovery": self.longest_late_run <= RECOVERY_PERIODS,
            "feasibility": not self.misflagged,
        }

    @property
    def all_kept(self) -> bool:
        return all(self.kept.values())


def judge(workload: Workload, series: Sequence[Mapping[str, Any]], policy: str) -> Verdict:
    """The verdict on one run of ``workload`` (its ``series``, see
    :mod:`spark_runner.sim.results`) under DILoS ``policy`` (or any other mode)."""
    period_s = float(workload.doc["control"]["period_s"])
    names = sorted(workload.priorities, key=lambda n: -workload.priorities[n])
    top = names[0]
    feasible = [n for n in names if n not in workload.infeasible]
    targets = {c["name"]: float(c["delay_target_s"]) for c in workload.doc["classes"]}
    round_s = float(
        workload.doc.get("engine", {}).get(
            "scheduler_round_s", Engine.model_fields["scheduler_round_s"].default
        )
    )
    priority_excess = on_arrival = -1.0
    top_shed = top_arrived = 0.0
    # stale first drops tuples up to a target after they arrived: the top class's loss in
    # a period counts where its load fitted its share over that long before it too
    top_window = math.ceil(targets[top] / period_s)
    fit_run = 0
    idle_while_shedding = 0.0
    idle_before = 0.0  # the previous period's idle part, if a class shed in it
    late_run = dict.fromkeys(feasible, 0)
    longest = 0
    flagged: set[str] = set()
    for p in range(max(1, WARMUP_PERIODS), len(series)):
        sample, before = series[p], series[p - 1]
        classes, shed_in_force = sample["classes"], before["classes"]
        # the processor time the classes had: their busy time plus idle time (a background
        # job's share sampled at the period's end misses one that started inside it)
        free = max(
            1e-9, float(sample["idle_s"]) + sum(float(c["busy_s"]) for c in classes.values())
        )
        shed = {n: float(shed_in_force[n]["shed_fraction"]) for n in names}
        # what each class shed in the period (its admission and stale first), of arrivals
        arrived = {n: float(classes[n]["arrival_rate_per_s"]) * period_s for n in names}
        dropped = {n: float(classes[n]["shed_count"]) for n in names}
        sheds = {n: dropped[n] > SHED_EPS * arrived[n] for n in names}
        sheds_arrivals = {
            n: dropped[n] - float(classes[n]["stale_shed_count"]) > SHED_EPS * arrived[n]
            for n in names
        }
        flagged |= {n for n in names if classes[n]["state"] == INFEASIBLE_STATE}
        # a scheduler round's granularity where the tolerance is less than a round
        slack = max(0.0, round_s - USAGE_TOLERANCE * free)
        for i, high in enumerate(names):
            if high in workload.infeasible or not sheds[high]:
                continue
            for low in names[i + 1 :]:
                allowed = 0.0 if policy == "strict" else workload.original_share(low)
                # what it took while no class above it wanted the processor (nothing
                # waiting, nothing turned away) was taken from nobody; what the scheduler
                # gave it back while another class repaid a turn that overran its slot it
                # had lost to that turn; a turn the class started is not preempted: one is
                # beyond any share
                wanted = (
                    float(classes[low]["busy_s"])
                    - float(classes[low]["unwanted_busy_s"])
                    - float(classes[low]["repaid_busy_s"])
                )
                busy = max(0.0, wanted - float(classes[low]["longest_turn_s"]) - slack)
                priority_excess = max(priority_excess, busy / free - allowed)
                if sheds_arrivals[high]:
                    on_arrival = max(on_arrival, busy / free - allowed)
        # its load fits its share when what arrives does and what it carries queued (a
        # backlog an overload left) is at most a period of its share
        top_load = float(classes[top]["load"])
        rate = float(classes[top]["arrival_rate_per_s"])
        queued_s = float(classes[top]["queue_length"]) * top_load / rate if rate > 0 else 0.0
        share_s = workload.original_share(top) * free
        fits = top_load * period_s <= share_s and queued_s <= share_s
        fit_run = fit_run + 1 if fits else 0
        if top in feasible and fit_run > top_window:
            top_arrived += arrived[top]
            top_shed += dropped[top]
        idle = float(sample["idle_s"]) / period_s if any(sheds.values()) else 0.0
        idle_while_shedding = max(idle_while_shedding, min(idle, idle_before))
        idle_before = idle
        for n in feasible:
            rt = classes[n]["max_response_time_s"]
            late = rt is not None and rt > targets[n]
            late_run[n] = late_run[n] + 1 if late and shed[n] < MAX_SHED - SHED_EPS else 0
            longest = max(longest, late_run[n])
    misflagged = tuple(sorted(flagged.symmetric_difference(workload.infeasible)))
    return Verdict(
        priority_excess=priority_excess,
        priority_excess_on_arrival=on_arrival,
        top_loss=top_shed / top_arrived if top_arrived > 0 else None,
        idle_while_shedding=idle_while_shedding,
        longest_late_run=longest,
        misflagged=misflagged,
    )

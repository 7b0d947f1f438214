"""Arrivals and shedding at the classes' shedding points.

Tuples reaching a class's shedding point are admitted up to the rate the class's shed
fraction keeps of the point's arrival rate in the period the fraction was decided on (a
token bucket holding ``ADMIT_DEPTH_S`` of that rate, at least one tuple). The tuples over
that rate are dropped before they cost anything or, for a class that sheds stale first
(DILoS's ``StaleRule``), deferred: the scheduler serves the freshest of them when the
class has nothing admitted to do, they join its queue in arrival order once it sheds
nothing, and they are dropped once stale.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence

from spark_runner.core.dilos import StaleRule
from spark_runner.scenario.arrivals import RateSchedule
from spark_runner.sim.state import PeriodCounters, RunAccounts, Work
from spark_runner.sim.topology import Topology

ADMIT_DEPTH_S = 0.25  # a shedding point's bucket holds this many seconds of its admit rate
PATIENCE = 0.5  # a class wants lent quota back once tuples waited this share of their limit


class Admission:
    """Each class's admission at its shedding points and its stale-first rule."""

    def __init__(
        self,
        topo: Topology,
        work: Work,
        counters: PeriodCounters,
        accounts: RunAccounts,
        *,
        tick_s: float,
        span_s: float,
    ) -> None:
        self.topo, self.work, self.counters, self.accounts = topo, work, counters, accounts
        self.tick_s, self.span_s = tick_s, span_s
        n, k = len(topo.op_ids), len(topo.names)
        self.admit_rate = [-1.0] * n  # < 0: admit all
        self.tokens = [0.0] * n
        self.depth = [0.0] * n
        self.filled = [0.0] * n
        self.keep = [1.0] * k
        self.stale: list[StaleRule | None] = [None] * k
        self.patience = [PATIENCE * d for d in topo.targets]
        """How long a class's queued tuples wait before it wants lent quota back, s."""
        self.patience_n = [math.inf] * k
        """How many queued tuples make a class want lent quota back."""
        self.turned_away = [-1.0] * k
        """Until when a class that turned arriving tuples away wants the processor."""

    def admit(self, j: int, n: int, now: float) -> int:
        """How many of ``n`` tuples reaching shedding point ``j`` at ``now`` it admits."""
        tok = min(self.tokens[j] + self.admit_rate[j] * (now - self.filled[j]), self.depth[j])
        self.filled[j] = now
        kept = n if n <= tok else int(tok)
        self.tokens[j] = tok - kept
        return kept

    def defer(self, j: int, k: int, n: int, first: float, last: float) -> None:
        """``n`` tuples over shedding point ``j``'s admit rate: deferred if class ``k``
        sheds stale first, dropped otherwise."""
        if self.stale[k] is None:
            self.counters.shed[k] += n
            lost_out = self.accounts.lost_out
            for kk, f in self.topo.dout_items[j]:
                lost_out[kk] += n * f
            self.turned_away[k] = last + self.tick_s
            return
        q = self.work.deferred[j]
        if q and last - q[-1][1] <= self.span_s and first >= q[-1][1]:
            tail = q[-1]
            tail[0] += n
            tail[2] = max(tail[2], last)
        else:
            q.append([n, first, last])
        self.work.dn[j] += n
        self.work.kdn[k] += n

    def undefer(self, j: int, k: int, take: int) -> None:
        """Move the ``take`` freshest tuples deferred at shedding point ``j`` (of class
        ``k``) to its queue."""
        work = self.work
        q = work.deferred[j]
        moved: deque[list[float]] = deque()
        need = take
        while need:
            c, first, last = q[-1]
            if c <= need:
                moved.appendleft(q.pop())
                need -= int(c)
            else:
                split = first + (last - first) * (c - need) / c
                q[-1] = [c - need, first, split]
                moved.appendleft([need, split, last])
                need = 0
        work.queues[j].extend(moved)
        work.qn[j] += take
        work.kq[k] += take
        work.dn[j] -= take
        work.kdn[k] -= take

    def shed_stale(self, now: float) -> None:
        """Stale first (``ControlResult.stale``): drop, oldest first, the tuples that
        waited at a class's shedding points (queued or deferred) past its rule's age,
        and the oldest of queues longer than its rule's limit (each queue its
        proportional part). A class without a rule drops what it deferred. The drops that
        had waited the class's delay target are counted apart (``counters.expired``)."""
        work, counters = self.work, self.counters
        qn, kq, dn, kdn = work.qn, work.kq, work.dn, work.kdn
        queues, deferred = work.queues, work.deferred
        lost_out, dout_items = self.accounts.lost_out, self.topo.dout_items
        for k, points in enumerate(self.topo.shed_points):
            rule = self.stale[k]
            queued = sum(qn[j] for j in points) if rule is not None else 0
            if not queued and not kdn[k]:
                continue
            over = 0.0
            if rule is not None and rule.max_queued is not None:
                over = queued - rule.max_queued
            limit = now - rule.after_s if rule is not None else math.inf
            expired_before = now - self.topo.targets[k]
            for j in points:
                dropped = expired = 0
                if qn[j]:
                    excess = int(over * qn[j] / queued) if over > 0 else 0
                    old = arrived_before(queues[j], expired_before)
                    d = drop_oldest(queues[j], limit, excess)
                    qn[j] -= d
                    kq[k] -= d
                    dropped, expired = d, min(d, old)
                if dn[j]:
                    old = arrived_before(deferred[j], expired_before)
                    d = drop_oldest(deferred[j], limit, 0)
                    dn[j] -= d
                    kdn[k] -= d
                    dropped, expired = dropped + d, expired + min(d, old)
                if dropped:
                    counters.shed[k] += dropped
                    counters.stale[k] += dropped
                    counters.expired[k] += expired
                    for kk, f in dout_items[j]:
                        lost_out[kk] += dropped * f

    def plan(
        self, shed: Mapping[str, float], rules: Mapping[str, StaleRule | None], dt: float, at: float
    ) -> None:
        """The control step decided: each class keeps ``1 − shed`` of its shedding points'
        last-period arrival rate, and sheds stale first under its rule (if any); a class
        that sheds nothing admits what it deferred (:meth:`_readmit`)."""
        for k, name in enumerate(self.topo.names):
            keep = self.keep[k] = 1.0 - shed[name]
            rule = self.stale[k] = rules.get(name)
            self.patience[k] = PATIENCE * (
                rule.after_s if rule is not None else self.topo.targets[k]
            )
            most = rule.max_queued if rule is not None else None
            self.patience_n[k] = PATIENCE * most if most is not None else math.inf
            for j in self.topo.shed_points[k]:
                if keep >= 1.0:
                    self.admit_rate[j] = -1.0
                    self._readmit(j, k)
                    continue
                rate = keep * self.counters.point[j] / dt
                # at least one whole tuple: a trickle admits a tuple now and then
                full = max(rate * ADMIT_DEPTH_S, 1.0)
                if self.admit_rate[j] < 0.0:
                    self.tokens[j] = full
                    self.filled[j] = at
                self.admit_rate[j] = rate
                self.depth[j] = full

    def _readmit(self, j: int, k: int) -> None:
        """Class ``k`` sheds nothing now: the tuples it deferred at shedding point ``j``
        join its queue there in arrival order, as waiting tuples are taken from the log
        oldest first on Spark (left deferred, the freshest-first service let the oldest
        go stale behind a queue the class then drained within its target)."""
        work = self.work
        n = work.dn[j]
        if not n:
            return
        queue = work.queues[j]
        merged = sorted([*queue, *work.deferred[j]], key=lambda run: run[1])
        queue.clear()
        queue.extend(merged)
        work.deferred[j].clear()
        work.qn[j] += n
        work.kq[k] += n
        work.dn[j] = 0
        work.kdn[k] -= n


def arrived_before(q: deque[list[float]], limit: float) -> int:
    """How many of ``q``'s tuples arrived before ``limit`` (oldest first; a run's tuples
    spread evenly over its arrival span)."""
    n = 0
    for c, first, last in q:
        if last < limit:
            n += int(c)
            continue
        n += _part_before(c, first, last, limit)
        break
    return n


def _part_before(c: float, first: float, last: float, limit: float) -> int:
    """Of a run of ``c`` tuples that arrived from ``first`` to ``last`` (spread evenly;
    ``last`` at or after ``limit``), how many arrived before ``limit``."""
    return int(c * (limit - first) / (last - first)) if first < limit else 0


def drop_oldest(q: deque[list[float]], limit: float, excess: int) -> int:
    """Drop from ``q`` the tuples that arrived before ``limit`` and at least the ``excess``
    oldest; how many were dropped."""
    dropped = 0
    while q:
        run = q[0]
        c, first, last = run
        if last < limit or c <= excess - dropped:
            q.popleft()
            dropped += int(c)
            continue
        d = max(_part_before(c, first, last, limit), excess - dropped)
        if d > 0:
            run[0] = c - d
            run[1] = first + (last - first) * d / c
            dropped += d
        break
    return dropped


class Arrivals:
    """The streams' tuples, delivered to their source nodes every arrival tick. A class
    with a range (``ranges``, by class index: ``[from_s, until_s)``) takes only the
    tuples delivered within it: its share of a hand-off between jobs (a class held in
    standby has an empty one); the others are not its arrivals."""

    def __init__(
        self,
        topo: Topology,
        schedules: Mapping[str, RateSchedule],
        admission: Admission,
    ) -> None:
        self.topo, self.admission = topo, admission
        self.streams: Sequence[tuple[RateSchedule, list[int]]] = [
            (schedules[s], nodes) for s, nodes in topo.stream_nodes.items()
        ]
        self.injected = [0] * len(self.streams)
        self.last_s = 0.0
        """When tuples were last delivered."""
        self.ranges: dict[int, tuple[float, float]] = {}

    def inject(self, now: float) -> None:
        """Deliver the tuples that arrived since the last delivery (spread evenly over
        that time) to their source nodes, through their shedding points' admission."""
        adm, work, counters = self.admission, self.admission.work, self.admission.counters
        owner, dout_items, offered_out = (
            self.topo.owner,
            self.topo.dout_items,
            adm.accounts.offered_out,
        )
        queues, qn, kq, admit_rate = work.queues, work.qn, work.kq, adm.admit_rate
        a, span = self.last_s, adm.span_s
        for s, (sched, nodes) in enumerate(self.streams):
            c = int(sched.count_before(now))
            n = c - self.injected[s]
            if n <= 0:
                continue
            self.injected[s] = c
            for j in nodes:
                k = owner[j]
                if k in self.ranges and not self.ranges[k][0] <= now < self.ranges[k][1]:
                    continue
                counters.src[j] += n
                counters.arrived[k] += n
                for kk, f in dout_items[j]:
                    offered_out[kk] += n * f
                counters.point[j] += n
                if admit_rate[j] >= 0.0:
                    kept = adm.admit(j, n, now)
                    if n > kept:
                        adm.defer(j, k, n - kept, a, now)
                else:
                    kept = n
                if not kept:
                    continue
                q = queues[j]
                if q and now - q[-1][1] <= span and a >= q[-1][1]:
                    q[-1][0] += kept
                    q[-1][2] = now
                else:
                    q.append([kept, a, now])
                qn[j] += kept
                kq[k] += kept
        self.last_s = now

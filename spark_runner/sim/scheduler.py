"""The class scheduler: weighted round robin with deficits and sharing by priority.

Each round (``scheduler_round_s``) class k is credited ``quota_k × round``; a class runs
operator turns (a sweep of its operators in topological order, resuming where it
stopped) until its credit is spent or it has no work. The credit classes out of work
leave in a round goes to the classes that have work, highest priority first (implicit
sharing by priority); a turn that overruns it is paid back from later rounds' spare, as
a deficit. A turn, once started, is not preempted.

A class's quota beyond its own share (``ControlPlane.own_shares``) is lent by the
classes above it: a turn paid from it starts only while no class above needs the
processor (:meth:`Scheduler.needs`), and one paid from spare credit only while none has
work at all. A turn that overruns the class's own share is its own deficit; the other
classes' parts of it are owed to them and given back by shorter rounds
(``repaid_busy_s``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Protocol

from spark_runner.control.plane import ControlPlane
from spark_runner.core.class_scheduler import priority_order
from spark_runner.sim.admission import Admission
from spark_runner.sim.clock import Clock
from spark_runner.sim.turns import Turn


class Housekeeping(Protocol):
    """What the scheduler hands time to between turns (arrivals, control steps, the
    background schedule): ``next_s`` is when it is next due; calling it returns the
    time after it (a stall takes time)."""

    next_s: float

    def __call__(self, t: float) -> float: ...

    def wake_at(self) -> float: ...


class Scheduler:
    """The processor's time among the classes (see the module docstring)."""

    def __init__(
        self,
        control: ControlPlane,
        admission: Admission,
        turn: Turn,
        clock: Clock,
        *,
        round_s: float,
        batch: int,
        end_s: float,
    ) -> None:
        self.control, self.admission, self.turn, self.clock = control, admission, turn, clock
        self.topo, self.work = admission.topo, admission.work
        self.round_s, self.batch, self.end_s = round_s, batch, end_s
        n = len(self.topo.names)
        quotas = control.initial_quotas()
        self.quota_s = [quotas[name] * round_s for name in self.topo.names]
        self.order: list[int] = []
        self.above: list[list[int]] = []
        self.own_s = [0.0] * n
        self.eager = False
        self.rank()
        self.credit = [0.0] * n  # deficits of turns that overran the class's own share
        self.lent_credit = [0.0] * n  # ... and its lent quota
        self.spare = 0.0  # credit left by classes out of work, for the others by priority
        self.cursor = [0] * n
        self.owed = [0.0] * n
        """What each class lost to turns of other classes that overran their slots, not
        given back yet."""
        self.turns = 0
        self.t = 0.0  # where ``run`` stopped (it resumes there)

    def rank(self) -> None:
        """The classes by priority and each class's own share of a round, from the control
        plane (where a live change applies)."""
        names = self.topo.names
        kidx = {n: k for k, n in enumerate(names)}
        prio = self.control.priorities()
        own = self.control.own_shares()
        self.order[:] = [kidx[n] for n in priority_order(prio)]
        self.above[:] = [self.order[: self.order.index(k)] for k in range(len(names))]
        self.own_s[:] = [own[n] * self.round_s for n in names]
        # no class holds a share of its own (strict priority): any work of a class takes
        # the processor back from the classes below it
        self.eager = not any(self.own_s)

    def set_quotas(self, quotas: Mapping[str, float]) -> None:
        """New quotas from a control step; the ranking may have changed with them."""
        self.quota_s[:] = [quotas[n] * self.round_s for n in self.topo.names]
        self.rank()

    def needs(self, h: int, t: float) -> bool:
        """Does class ``h`` need the processor back from the classes below it: it has
        tuples deferred, a full batch queued at a shedding point, or queued tuples
        halfway (``PATIENCE``) to what its stale rule lets them wait or lets queue? A
        class with a few young tuples lets them batch up while a lower class runs on
        quota it lent (the batching DILoS's redistribution exploits), except under
        strict priority (``eager``), where any work takes the processor back."""
        work = self.work
        if work.kdn[h]:
            return True
        if not work.kq[h]:
            return False
        if self.eager:
            return True
        limit = t - self.admission.patience[h]
        qn, queues, batch = work.qn, work.queues, self.batch
        queued = 0
        for j in self.topo.shed_points[h]:
            if qn[j] >= batch or (queues[j] and queues[j][0][1] < limit):
                return True
            queued += qn[j]
        return queued > self.admission.patience_n[h]

    def run(self, house: Housekeeping, until: float = math.inf) -> float:
        """Rounds until the run's end (idle time skipped to the next housekeeping), or
        until ``until`` with the housekeeping due by then done; a next call resumes."""
        t = self.t
        while t < self.end_s and t < until:
            if t >= house.next_s:
                t = house(t)
            t, worked, held = self._round(t, house)
            if not held:
                self.spare = min(self.spare, 0.0)  # spare nobody had work for is not kept
            if not worked and t < self.end_s and not self._skip_rounds():
                target_t = max(t, house.wake_at())
                gap = target_t - t
                self.admission.counters.idle += gap
                self.admission.accounts.idle_s += gap
                t = house(target_t)
        if t < self.end_s and t >= house.next_s:  # what the next round would do first
            t = house(t)
        self.t = t
        return t

    def _round(self, t: float, house: Housekeeping) -> tuple[float, bool, bool]:
        """One round: each class on its quota, then the spare by priority; (time after
        it, whether any turn ran, whether spare was kept for a class above)."""
        order, credit, lent_credit = self.order, self.credit, self.lent_credit
        quota_s, own_s = self.quota_s, self.own_s
        n = len(order)
        worked = held = False
        short = self._short()
        for slot in range(2 * n):  # slot ≥ n: the spare pass
            in_quota = slot < n
            k = order[slot] if in_quota else order[slot - n]
            if in_quota:
                q_k = quota_s[k]
                own = credit[k] + (q_k if q_k < own_s[k] else own_s[k])
                lent = lent_credit[k] + (q_k - own_s[k] if q_k > own_s[k] else 0.0)
                if own <= 0.0 and lent <= 0.0:
                    credit[k] = own
                    lent_credit[k] = lent
                    continue
            else:
                if self.spare <= 0.0:
                    break
                own, lent = 0.0, self.spare
            t, own, lent, did, kept = self._serve(k, in_quota, own, lent, short, t, house)
            worked = worked or did
            if kept is not None:
                held = kept
            if in_quota:
                self.spare += (own if own > 0.0 else 0.0) + (lent if lent > 0.0 else 0.0)
                credit[k] = own if own < 0.0 else 0.0
                lent_credit[k] = lent if lent < 0.0 else 0.0
            else:
                self.spare = lent
            if t >= self.end_s:
                break
        return t, worked, held

    def _short(self) -> float:
        """The share of this round that classes repaying a deficit skip: a turn that
        overran its class's slot delayed every other class alike; the shorter round gives
        each its part back, in proportion to its quota (``repaid_busy_s``)."""
        short = 0.0
        for k in range(len(self.quota_s)):
            q_k = self.quota_s[k]
            if self.credit[k] + min(q_k, self.own_s[k]) <= 0.0 and (
                self.lent_credit[k] + max(q_k - self.own_s[k], 0.0) <= 0.0
            ):
                short += q_k
        return short / self.round_s

    def _serve(
        self,
        k: int,
        in_quota: bool,
        own: float,
        lent: float,
        short: float,
        t: float,
        house: Housekeeping,
    ) -> tuple[float, float, float, bool, bool | None]:
        """Class ``k``'s turns on ``own`` share and ``lent`` (or spare) credit; (time,
        own and lent credit left, whether a turn ran, whether it stopped for a class
        above: on spare credit that keeps the spare for it)."""
        work, adm = self.work, self.admission
        kq, kdn = work.kq, work.kdn
        above, owed, turned_away = self.above[k], self.owed, adm.turned_away
        p_free, p_repaid, p_turn_max = adm.counters.free, adm.counters.repaid, adm.counters.turn_max
        end, turn, clock = self.end_s, self.turn, self.clock
        cur = self.cursor[k]
        turns, held = 0, None
        # only housekeeping changes when it is next due, the processor's speed and (in
        # its control step) the classes above
        due, speed = house.next_s, clock.speed
        while own > 0.0 or lent > 0.0:
            if t >= due:
                if t >= end:
                    break
                t = house(t)
                due, speed, above = house.next_s, clock.speed, self.above[k]
            # beyond its own share, a turn starts only while no class above needs the
            # processor (on spare credit: while none has work at all)
            if own <= 0.0 and above and self._wanted_above(above, in_quota, t):
                held = not in_quota
                break
            i, cur = self._next_node(k, cur)
            if i < 0:
                owed[k] = 0.0  # a class out of work is owed nothing
                break
            done, elapsed, measured = turn(i, k, t, speed)
            for h in above:
                if kq[h] or kdn[h] or turned_away[h] > t:
                    if short and owed[k] > 0.0 and in_quota:
                        back = min(owed[k], measured * short)
                        p_repaid[k] += back
                        owed[k] -= back
                    break
            else:
                p_free[k] += measured
            if measured > p_turn_max[k]:  # noqa: PLR1730 - hot loop, no call
                p_turn_max[k] = measured
            t = done
            # a turn is paid from the class's own share first; one that overruns it is
            # the class's own deficit
            if own > 0.0:
                own -= elapsed
                over = -own
            else:
                lent -= elapsed
                over = -lent
            if over > 0.0 and in_quota:
                self._owe(k, min(over, elapsed) / self.round_s)
            turns += 1
        self.cursor[k] = cur
        self.turns += turns
        return t, own, lent, turns > 0, held

    def _next_node(self, k: int, cur: int) -> tuple[int, int]:
        """The node of class ``k`` whose turn is next, and the round-robin cursor after
        it: from ``cur`` on, the first of its nodes with tuples queued, else its shedding
        point with the most tuples deferred (-1: the class has no work). A turn at a
        shedding point fills its batch with deferred tuples only when the class has no
        admitted work (filled on every turn, deferred tuples would take the turns its
        shedding frees, and its admitted work would queue behind them); once it sheds
        nothing they join its queue (:meth:`Admission.plan`)."""
        work, batch = self.work, self.batch
        qn, dn = work.qn, work.dn
        nodes = self.topo.owned[k]
        m = len(nodes)
        i = -1
        for step in range(m):
            pos = cur + step
            if pos >= m:
                pos -= m
            if qn[nodes[pos]]:
                i = nodes[pos]
                cur = pos + 1 if pos + 1 < m else 0
                break
        if i < 0:
            if not work.kdn[k]:
                return -1, cur
            i = max(self.topo.shed_points[k], key=dn.__getitem__)
        if dn[i] and qn[i] < batch and not work.kq[k]:
            self.admission.undefer(i, k, min(batch - qn[i], dn[i]))
        return i, cur

    def _wanted_above(self, above: list[int], in_quota: bool, t: float) -> bool:
        """Does a class above want the processor back: on lent quota, one that
        :meth:`needs` it; on spare credit, one with any work."""
        if in_quota:
            needs = self.needs
            for h in above:  # noqa: SIM110 - hot loop, no generator
                if needs(h, t):
                    return True
            return False
        kq, kdn = self.work.kq, self.work.kdn
        for h in above:  # noqa: SIM110 - hot loop, no generator
            if kq[h] or kdn[h]:
                return True
        return False

    def _owe(self, k: int, rounds: float) -> None:
        """Class ``k``'s turn overran its slot by ``rounds``: every other class lost its
        part of that time."""
        for j in range(len(self.owed)):
            if j != k:
                self.owed[j] += rounds * self.quota_s[j]

    def _skip_rounds(self) -> bool:
        """Nothing ran in a round: if classes have work, every one is in deficit; skip the
        rounds it would take for one to run again, on its own share, its lent quota, or
        the spare the classes without work leave (a class with no quota runs only when
        the others have nothing to do: the scheduler stays work-conserving). False when
        no class has work (the processor idles)."""
        work, quota_s, own_s = self.work, self.quota_s, self.own_s
        pending = [k for k in range(len(quota_s)) if work.kq[k] or work.kdn[k]]
        if not pending:
            return False
        idle_quota = sum(quota_s[k] for k in range(len(quota_s)) if k not in pending)
        parts = [(min(q, own), max(q - own, 0.0)) for q, own in zip(quota_s, own_s, strict=True)]
        waits = [
            math.floor(-c / q) + 1
            for k in pending
            for c, q in ((self.credit[k], parts[k][0]), (self.lent_credit[k], parts[k][1]))
            if q > 0.0
        ]
        if idle_quota > 0.0:
            waits.append(math.floor(-self.spare / idle_quota) + 1)
        if not waits:  # no quota anywhere: a round for the classes by priority
            self.spare = self.round_s
            return True
        skip = max(min(waits) - 1, 0)
        for k in pending:
            self.credit[k] = min(self.credit[k] + skip * parts[k][0], 0.0)
            self.lent_credit[k] = min(self.lent_credit[k] + skip * parts[k][1], 0.0)
        self.spare += skip * idle_quota
        return True

"""A discrete-event simulator of a single-processor stream engine with batch processing.

What is modelled, and why (001 §2.1, §5.2.1, §6.1.2, §6.2.2):

- **Operators** with a cost per input tuple and a selectivity; each has an input queue.
  Tuples are whole; a selectivity below 1 keeps tuples by error diffusion (exactly
  ``selectivity`` of them in the long run, no randomness needed).
- **Batch processing**: an operator's turn takes up to ``batch_size`` queued tuples and
  costs ``batch_overhead_s + n × cost``. Bigger batches cost less per tuple, and a lightly
  loaded operator visited often runs small, expensive batches — the effect DILoS exploits.
- **One processor** running operators in scheduler order. The class scheduler is weighted
  round robin with deficits: each round (``scheduler_round_s``) class k is credited
  ``quota_k × round``; a class runs operator turns (a sweep in topological order, resuming
  where it stopped) until its credit is spent or it has no work. The credit classes out of
  work leave in a round goes to the classes that have work, highest priority first
  (implicit sharing by priority). A turn, once started, is not preempted. Quotas come from
  the control plane (priority shares, or DILoS's redistribution). A class's quota beyond
  its own share (``ControlPlane.own_shares``) is lent by the classes above it: a turn paid
  from it, or from spare credit, starts only while no class above needs the processor
  (see ``needs``); a turn that overruns the class's own share is its own deficit.
- **Unmeasured work**: a per-turn ``dispatch_overhead_s`` and a ``hidden_overhead_fraction``
  of every turn's work take processor time that no operator's measured cost includes, so
  the true headroom is below 1 as in the thesis.
- **Shedding at class sources**: tuples reaching a class's shedding point (its source
  operators, or its first operator after a higher class's shared segment) are admitted up
  to the rate the class's shed fraction keeps of the point's arrival rate in the period
  the fraction was decided on (a token bucket holding ``ADMIT_DEPTH_S`` of that rate, at
  least one tuple): a class sheds only while its tuples arrive faster than the rate its
  manager planned for, not in a lull. The tuples over that rate are dropped before they
  cost anything, or, for a class that sheds stale first (DILoS's ``StaleRule``), deferred:
  it serves the freshest of them when it has nothing admitted to do or room in a batch,
  and drops them once stale. The queued and deferred tuples there that the class can no
  longer deliver within its target are dropped first (stale first, at every arrival tick).
- **Background load**: a share of the processor taken on a schedule; operator turns take
  longer in wall time. Measured costs stay CPU time unless ``background_cost_visible``.
- **Processor stalls** (optional): Poisson interruptions of exponential length that nobody
  measures (interrupts, other processes; 001 §5.2.1).
- **Response time** of an output tuple = completion time of the turn that produced it −
  arrival time of the input tuple it came from. Queued tuples are tracked as runs
  ``[count, first arrival, last arrival]`` with arrivals spread evenly inside a run.

Every control period the engine builds one :class:`Observation` per class from what it
measured (costs and selectivities per operator, arrivals at shedding points, queue lengths,
outputs' response times), feeds the core's :class:`LoadModel`, asks the control plane for
shed fractions and quotas, and records a sample.

The engine reads no clock and uses randomness only from ``random.Random(seed)`` (per-turn
cost jitter, Pareto arrivals), so a scenario and a seed give the same results every time.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_runner.contract.actions import ControlAction
from spark_runner.control.actions import ActionLog, Managed
from spark_runner.control.elastic import PoolControl, scaling_summary
from spark_runner.control.period import ClassPeriod, PeriodLoop, class_sample, rounded
from spark_runner.control.plane import ControlPlane, make_control_plane
from spark_runner.core.class_scheduler import priority_order
from spark_runner.core.dilos import StaleRule
from spark_runner.core.elastic import sized_at_start, spared_queues
from spark_runner.core.load_model import LoadModel
from spark_runner.core.oracle import MachineOracle
from spark_runner.scenario.arrivals import RateSchedule, build_schedule
from spark_runner.scenario.models import Scenario
from spark_runner.sim.network import Network, build_network, declare_statistics, expected_load

ADMIT_DEPTH_S = 0.25  # a shedding point's bucket holds this many seconds of its admit rate
PATIENCE = 0.5  # a class wants lent quota back once tuples waited this share of their limit
HIST_BINS_PER_DECADE = 20
HIST_MIN_EXP = -6  # 1 µs
HIST_BINS = HIST_BINS_PER_DECADE * 11  # up to 1e5 s
MAX_BACKGROUND_SHARE = 0.99


@dataclass
class ClassTotals:
    """Run-long accumulators of one class (see :mod:`spark_runner.sim.results`)."""

    outputs: int = 0
    response_sum_s: float = 0.0
    response_max_s: float = 0.0
    violation_sum_s: float = 0.0
    violation_max_s: float = 0.0
    arrived: int = 0
    shed: int = 0
    offered_outputs: float = 0.0
    lost_outputs: float = 0.0
    oracle_loss: float = 0.0  # OracleMeter.loss_fraction (spark_runner.core.oracle)
    histogram: list[float] = field(default_factory=lambda: [0.0] * HIST_BINS)
    timed_outputs: int | None = None
    """Of ``outputs``, those whose response times are in the sums and the histogram
    (None: all; the Spark engine leaves out a warm-up batch's, which time Spark's start)."""

    @property
    def timed(self) -> int:
        """The outputs the response-time sums are over."""
        return self.outputs if self.timed_outputs is None else self.timed_outputs


@dataclass
class SimOutput:
    """Everything a run produced; :func:`spark_runner.sim.results.build_results` shapes it."""

    scenario: Scenario
    network: Network
    class_order: tuple[str, ...]
    totals: dict[str, ClassTotals]
    series: list[dict[str, Any]]
    redistributions: list[dict[str, Any]]
    backlog: dict[str, int]
    backlog_age_s: dict[str, float]
    idle_s: float
    end_s: float
    turns: int
    actions: Sequence[ControlAction] = ()
    scaling: dict[str, Any] | None = None
    oracle: MachineOracle | None = None
    """The run's oracle (the totals' ``oracle_loss`` is its loss under the policy)."""


def background_schedule(scenario: Scenario) -> RateSchedule:
    """The processor share taken by background jobs over time (piecewise constant)."""
    duration = scenario.duration_s
    edges: list[tuple[float, float]] = []  # (time, +share/-share)
    for job in scenario.background:
        end = min(job.end_s if job.end_s is not None else duration, duration)
        if job.on_s is None or job.off_s is None:
            edges += [(job.start_s, job.share), (end, -job.share)]
            continue
        t = job.start_s
        while t < end:
            edges += [(t, job.share), (min(t + job.on_s, end), -job.share)]
            t += job.on_s + job.off_s
    edges.sort()
    starts, shares = [0.0], [0.0]
    level = 0.0
    for t, delta in edges:
        level += delta
        value = min(max(level, 0.0), MAX_BACKGROUND_SHARE)
        if t == starts[-1]:
            shares[-1] = value
        else:
            starts.append(t)
            shares.append(value)
    return RateSchedule(tuple(starts), tuple(shares))


class Simulation:
    """One run of a scenario. ``run()`` once; the result is deterministic given the seed."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.network = build_network(scenario)
        self.load_model = LoadModel(self.network.graph, self.network.priorities)
        # the declared costs are the model's prior, as the Spark engine pushes its cost
        # model's before any batch: a class the scheduler never served would otherwise
        # read no load, and its manager neither shed nor bounded its queue
        declare_statistics(self.load_model, self.network)
        self.control: ControlPlane = make_control_plane(scenario, self.load_model)
        self.rng = random.Random(scenario.seed)
        self.schedules = {
            s.name: build_schedule(
                s.arrival,
                scenario.duration_s,
                random.Random(f"{scenario.seed}:stream:{s.name}"),
                scenario.control.period_s,
            )
            for s in scenario.streams
        }
        self.background = background_schedule(scenario)

    def run(self) -> SimOutput:
        sc = self.scenario
        eng = sc.engine
        net = self.network
        graph = net.graph
        plan = self.load_model.plan
        names = list(net.class_order)
        kidx = {n: k for k, n in enumerate(names)}
        K = len(names)
        N = len(net.nodes)
        targets = [sc.query_class(n).delay_target_s for n in names]

        # --- static per-node data ------------------------------------------------------
        owner = [kidx[plan.owner[i]] for i in range(N)]
        cost = [n.cost_s for n in net.nodes]
        sel = [n.selectivity for n in net.nodes]
        sink = [kidx[n.output[0]] if n.output else -1 for n in net.nodes]
        # children with the class that sheds on the edge (-1: same owner, no shedding)
        children: list[list[tuple[int, int]]] = [
            [(j, owner[j] if owner[j] != owner[i] else -1) for j in graph.children[i]]
            for i in range(N)
        ]
        # expected outputs per class of one tuple entering node i (no shedding)
        dout: list[dict[int, float]] = [{} for _ in range(N)]
        for i in reversed(graph.order):
            acc: dict[int, float] = {}
            if sink[i] >= 0:
                acc[sink[i]] = sel[i]
            for j, _ in children[i]:
                for k, f in dout[j].items():
                    acc[k] = acc.get(k, 0.0) + sel[i] * f
            dout[i] = acc
        dout_items = [list(d.items()) for d in dout]
        owned = [[i for i in graph.order if owner[i] == k] for k in range(K)]
        shed_points = [[i for i in plan.shedding_points.get(n, ())] for n in names]
        op_ids = list(graph.ids)
        # streams → source nodes
        stream_nodes: dict[str, list[int]] = {}
        for i, node in enumerate(net.nodes):
            if node.stream is not None:
                stream_nodes.setdefault(node.stream, []).append(i)
        streams = [(self.schedules[s], nodes) for s, nodes in stream_nodes.items()]
        injected = [0] * len(streams)

        # --- dynamic state --------------------------------------------------------------
        queues: list[deque[list[float]]] = [deque() for _ in range(N)]
        qn = [0] * N
        carry = [0.0] * N  # selectivity error diffusion
        # admission at shedding points: a token bucket per point whose rate is the share
        # the shed fraction keeps of the point's last-period arrival rate (< 0: admit all)
        admit_rate = [-1.0] * N
        tokens = [0.0] * N
        depth = [0.0] * N
        filled = [0.0] * N
        p_point = [0] * N  # arrivals at each shedding point in the period
        keep = [1.0] * K
        stale: list[StaleRule | None] = [None] * K  # see shed_stale
        patience = [PATIENCE * d for d in targets]  # see needs
        patience_n = [math.inf] * K
        # deferred tuples: over its admit rate, a class that sheds stale first defers
        # tuples instead of dropping them; they wait (runs like a queue's) until the class
        # has nothing admitted to do or room in a batch, and are dropped only once stale
        deferred: list[deque[list[float]]] = [deque() for _ in range(N)]
        dn = [0] * N
        kdn = [0] * K
        kq = [0] * K  # tuples queued in each class's operators
        # until when a class that turned arriving tuples away wants the processor
        turned_away = [-1.0] * K
        quotas = self.control.initial_quotas()
        round_s = eng.scheduler_round_s
        quota_s = [quotas[n] * round_s for n in names]
        # the classes by priority and each class's own share of a round (beyond it, its
        # quota is lent by the classes above it: ControlPlane.own_shares), from the
        # control plane, where a live change applies
        order: list[int] = []
        above: list[list[int]] = []
        own_s: list[float] = []
        eager = False

        def rank_classes() -> None:
            prio = self.control.priorities()
            own = self.control.own_shares()
            order[:] = [kidx[n] for n in priority_order(prio)]
            above[:] = [order[: order.index(k)] for k in range(K)]
            own_s[:] = [own[n] * round_s for n in names]
            nonlocal eager
            # no class holds a share of its own (strict priority): any work of a class
            # takes the processor back from the classes below it
            eager = not any(own_s)

        rank_classes()
        # deficits of turns that overran a class's own share and its lent quota
        credit = [0.0] * K
        lent_credit = [0.0] * K
        spare = 0.0  # credit left by classes out of work, for the others by priority
        cursor = [0] * K

        # per period (reset at each control step)
        p_busy = [0.0] * N
        p_in = [0] * N
        p_out = [0] * N
        p_src = [0] * N  # arrivals into source nodes
        p_arrived = [0] * K
        p_shed = [0] * K
        p_stale = [0] * K
        p_cnt = [0] * K
        p_rt_sum = [0.0] * K
        p_rt_max = [0.0] * K
        p_cls_busy = [0.0] * K
        p_free = [0.0] * K  # busy time taken while no class above wanted the processor
        p_repaid = [0.0] * K  # busy time given back while other classes repaid a deficit
        # what each class lost to turns of other classes that overran their slots, not
        # given back yet (shorter rounds give it back; see repaid_busy_s)
        owed = [0.0] * K
        p_turn_max = [0.0] * K  # the longest single operator turn (turns are not preempted)
        p_idle = 0.0

        totals = [ClassTotals() for _ in range(K)]
        hist = [t.histogram for t in totals]
        loop = PeriodLoop(self.control, self.load_model, dict(zip(names, targets, strict=True)))
        offered_out = [0.0] * K  # expected outputs of the offered input
        lost_out = [0.0] * K  # expected outputs lost to shedding
        viol_sum = [0.0] * K
        viol_max = [0.0] * K
        series: list[dict[str, Any]] = []
        redistributions: list[dict[str, Any]] = []

        batch = eng.batch_size
        ovh = eng.batch_overhead_s
        dispatch = eng.dispatch_overhead_s
        hidden = 1.0 + eng.hidden_overhead_fraction
        jitter = eng.cost_jitter
        jitter_mu = -0.5 * jitter * jitter
        visible = eng.background_cost_visible
        tick = eng.tick_s
        span = eng.run_span_s
        # the floor (response time of a lone tuple): an arrival tick, a scheduler round
        # waiting for its class's turn, and its most expensive path at the current speed
        paths = net.longest_paths()
        floor_work = [
            (paths[n][0] + paths[n][1] * ovh) * hidden + paths[n][1] * dispatch
            if n in paths
            else 0.0
            for n in names
        ]
        floor_wait = tick + round_s
        period = sc.control.period_s
        end = sc.duration_s
        rng = self.rng
        gauss = rng.gauss
        exp = math.exp
        log10 = math.log10
        bg = self.background
        bg_starts = bg.starts
        bg_rates = bg.rates
        bg_i = 0
        share = bg_rates[0]
        # elastic capacity (spec §5): executors are processors of speed 1 each; a new one
        # serves ``executor_startup_s`` after the policy asked for it
        scaling = sc.scaling()
        if scaling is not None and scaling.start == "expected_load":
            rates = {name: schedule.rate_at(0.0) for name, schedule in self.schedules.items()}
            scaling = sized_at_start(scaling, expected_load(net, rates))
        action_log = ActionLog(
            dict(zip(names, targets, strict=True)),
            scaling.warmup_s if scaling is not None else 0.0,
        )
        pool = PoolControl(scaling) if scaling is not None else None
        executors = scaling.min_executors if scaling is not None else 1
        ready_at = math.inf
        speed = executors * (1.0 - share)
        next_bg = bg_starts[1] if len(bg_starts) > 1 else math.inf
        stall_rng = random.Random(f"{sc.seed}:stalls")
        stall_rate = eng.stall_rate_per_s
        stall_mean = eng.stall_mean_s
        next_stall = stall_rng.expovariate(stall_rate) if stall_rate > 0 else math.inf
        stalled_total = 0.0

        t = 0.0
        inj_t = 0.0
        period_start = 0.0
        period_end = period
        next_house = min(tick, period_end, next_bg, end)
        turns = 0
        idle_total = 0.0
        last_headroom: dict[str, float | None] = {}

        def inject(now: float) -> None:
            nonlocal inj_t
            a = inj_t
            for s, (sched, nodes) in enumerate(streams):
                c = int(sched.count_before(now))
                n = c - injected[s]
                if n <= 0:
                    continue
                injected[s] = c
                for j in nodes:
                    k = owner[j]
                    p_src[j] += n
                    p_arrived[k] += n
                    for kk, f in dout_items[j]:
                        offered_out[kk] += n * f
                    p_point[j] += n
                    if admit_rate[j] >= 0.0:
                        kept = admit(j, n, now)
                        if n > kept:
                            defer(j, k, n - kept, a, now)
                    else:
                        kept = n
                    if kept:
                        q = queues[j]
                        if q:
                            last = q[-1]
                            if now - last[1] <= span and a >= last[1]:
                                last[0] += kept
                                last[2] = now
                                qn[j] += kept
                                kq[k] += kept
                                continue
                        q.append([kept, a, now])
                        qn[j] += kept
                        kq[k] += kept
            inj_t = now

        def admit(j: int, n: int, now: float) -> int:
            """How many of ``n`` tuples reaching shedding point ``j`` at ``now`` it admits."""
            tok = min(tokens[j] + admit_rate[j] * (now - filled[j]), depth[j])
            filled[j] = now
            kept = n if n <= tok else int(tok)
            tokens[j] = tok - kept
            return kept

        def defer(j: int, k: int, n: int, first: float, last: float) -> None:
            """``n`` tuples over shedding point ``j``'s admit rate: deferred if class ``k``
            sheds stale first, dropped otherwise."""
            if stale[k] is None:
                p_shed[k] += n
                for kk, f in dout_items[j]:
                    lost_out[kk] += n * f
                turned_away[k] = last + tick
                return
            q = deferred[j]
            if q and last - q[-1][1] <= span and first >= q[-1][1]:
                tail = q[-1]
                tail[0] += n
                tail[2] = max(tail[2], last)
            else:
                q.append([n, first, last])
            dn[j] += n
            kdn[k] += n

        def undefer(j: int, k: int, take: int) -> None:
            """Move the ``take`` freshest tuples deferred at shedding point ``j`` (of class
            ``k``) to its queue."""
            q = deferred[j]
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
            queues[j].extend(moved)
            qn[j] += take
            kq[k] += take
            dn[j] -= take
            kdn[k] -= take

        def drop_oldest(q: deque[list[float]], limit: float, excess: int) -> int:
            """Drop from ``q`` the tuples that arrived before ``limit`` and at least the
            ``excess`` oldest; how many were dropped."""
            dropped = 0
            while q:
                run = q[0]
                c, first, last = run
                if last < limit or c <= excess - dropped:
                    q.popleft()
                    dropped += int(c)
                    continue
                d = max(
                    int(c * (limit - first) / (last - first)) if first < limit else 0,
                    excess - dropped,
                )
                if d > 0:
                    run[0] = c - d
                    run[1] = first + (last - first) * d / c
                    dropped += d
                break
            return dropped

        def needs(h: int) -> bool:
            """Does class ``h`` need the processor back from the classes below it: it has
            tuples deferred, a full batch queued at a shedding point, or queued tuples
            halfway (``PATIENCE``) to what its stale rule lets them wait or lets queue? A
            class with a few young tuples lets them batch up while a lower class runs on
            quota it lent (the batching DILoS's redistribution exploits), except under
            strict priority (``eager``), where any work takes the processor back."""
            if kdn[h]:
                return True
            if not kq[h]:
                return False
            if eager:
                return True
            limit = t - patience[h]
            queued = 0
            for j in shed_points[h]:
                if qn[j] >= batch or (queues[j] and queues[j][0][1] < limit):
                    return True
                queued += qn[j]
            return queued > patience_n[h]

        def shed_stale(now: float) -> None:
            """Stale first (``ControlResult.stale``): drop, oldest first, the tuples that
            waited at a class's shedding points (queued or deferred) past its rule's age,
            and the oldest of queues longer than its rule's limit (each queue its
            proportional part). A class without a rule drops what it deferred."""
            for k in range(K):
                rule = stale[k]
                points = shed_points[k]
                queued = sum(qn[j] for j in points) if rule is not None else 0
                if not queued and not kdn[k]:
                    continue
                over = 0.0
                if rule is not None and rule.max_queued is not None:
                    over = queued - rule.max_queued
                limit = now - rule.after_s if rule is not None else math.inf
                for j in points:
                    dropped = 0
                    if qn[j]:
                        excess = int(over * qn[j] / queued) if over > 0 else 0
                        d = drop_oldest(queues[j], limit, excess)
                        qn[j] -= d
                        kq[k] -= d
                        dropped += d
                    if dn[j]:
                        d = drop_oldest(deferred[j], limit, 0)
                        dn[j] -= d
                        kdn[k] -= d
                        dropped += d
                    if dropped:
                        p_shed[k] += dropped
                        p_stale[k] += dropped
                        for kk, f in dout_items[j]:
                            lost_out[kk] += dropped * f

        def control_step(at: float) -> None:
            nonlocal p_idle, quota_s, executors, speed, ready_at
            dt = at - period_start
            costs: dict[str, float] = {}
            sels: dict[str, float] = {}
            for i in range(N):
                n_in = p_in[i]
                if n_in > 0:
                    costs[op_ids[i]] = p_busy[i] / n_in
                    sels[op_ids[i]] = p_out[i] / n_in
            rates = {op_ids[j]: p_src[j] / dt for j in range(N) if net.nodes[j].stream is not None}
            avail_s = p_idle * (1.0 - share) / hidden
            periods = {
                name: ClassPeriod(
                    arrived=p_arrived[k],
                    processed=sum(p_in[i] for i in shed_points[k]),
                    shed=p_shed[k],
                    outputs=p_cnt[k],
                    response_sum_s=p_rt_sum[k],
                    response_max_s=p_rt_max[k],
                    busy_s=p_cls_busy[k],
                    floor_s=floor_wait + floor_work[k] * executors / speed,
                    stale_shed=p_stale[k],
                    stale_first=stale[k] is not None,
                    idle_load=p_idle / dt,
                    busy_load=p_cls_busy[k] / dt,
                )
                for k, name in enumerate(names)
            }
            outcome = loop.step(
                dt,
                periods,
                # the processor time the classes had, whoever used it
                machine_s=sum(p_cls_busy) + avail_s,
                costs=costs,
                selectivities=sels,
                source_rates=rates,
                queue_lengths={op_ids[i]: float(qn[i]) for i in range(N)},
                shed_fractions={names[k]: 1.0 - keep[k] for k in range(K)},
            )
            for k in range(K):
                tot = totals[k]
                tot.arrived += p_arrived[k]
                tot.shed += p_shed[k]
                tot.outputs += p_cnt[k]
                tot.response_sum_s += p_rt_sum[k]
                if p_cnt[k] and p_rt_max[k] > tot.response_max_s:
                    tot.response_max_s = p_rt_max[k]
            result = outcome.result
            shed = dict(result.shed)
            if pool is not None:
                shed = pool.step(
                    at,
                    {n: o.load for n, o in outcome.observations.items()},
                    speed,
                    executors,
                    pool.params.max_executors - executors,
                    shed,
                    [names[k] for k in order],
                )
            action_log.observe(
                at,
                periods,
                Managed.of(outcome),
                shed,
                executors if pool is not None else None,
                pool.last_action if pool is not None else None,
            )
            if pool is not None:
                if pool.target < executors:  # released at once
                    executors, ready_at = pool.target, math.inf
                    speed = executors * (1.0 - share)
                elif pool.target > executors and ready_at == math.inf:
                    ready_at = at + eng.executor_startup_s
            rules = spared_queues(result.shed, shed, result.stale)
            for k, name in enumerate(names):
                keep[k] = 1.0 - shed[name]
                rule = stale[k] = rules.get(name)
                patience[k] = PATIENCE * (rule.after_s if rule is not None else targets[k])
                most = rule.max_queued if rule is not None else None
                patience_n[k] = PATIENCE * most if most is not None else math.inf
                for j in shed_points[k]:
                    if keep[k] >= 1.0:
                        admit_rate[j] = -1.0
                        continue
                    rate = keep[k] * p_point[j] / dt
                    # at least one whole tuple: a trickle admits a tuple now and then
                    full = max(rate * ADMIT_DEPTH_S, 1.0)
                    if admit_rate[j] < 0.0:
                        tokens[j] = full
                        filled[j] = at
                    admit_rate[j] = rate
                    depth[j] = full
            quota_s = [result.quotas[n] * round_s for n in names]
            rank_classes()
            if result.redistributed:
                redistributions.append({"t_s": round(at, 6), **result.details})
            sample_classes: dict[str, Any] = {}
            for k, name in enumerate(names):
                last_headroom[name] = result.headrooms[name]
                sample_classes[name] = {
                    **class_sample(name, dt, periods[name], outcome),
                    "shed_count": p_shed[k],
                    "stale_shed_count": p_stale[k],
                    "queue_length": int(outcome.observations[name].queue_length),
                    "unwanted_busy_s": rounded(p_free[k]),
                    "repaid_busy_s": rounded(p_repaid[k]),
                    "longest_turn_s": rounded(p_turn_max[k]),
                }
            series.append(
                {
                    "t_s": rounded(at),
                    "background_share": rounded(share),
                    "idle_s": rounded(p_idle),
                    **(pool.sample(executors) if pool is not None else {}),
                    "classes": sample_classes,
                }
            )
            for i in range(N):
                p_busy[i] = 0.0
                p_in[i] = 0
                p_out[i] = 0
                p_src[i] = 0
                p_point[i] = 0
            for k in range(K):
                p_arrived[k] = p_shed[k] = p_stale[k] = p_cnt[k] = 0
                p_rt_sum[k] = p_rt_max[k] = p_cls_busy[k] = p_turn_max[k] = 0.0
                p_free[k] = p_repaid[k] = 0.0
            p_idle = 0.0

        def housekeeping() -> None:
            """Deliver arrivals, run due control steps, follow the background schedule."""
            nonlocal next_house, period_start, period_end, bg_i, share, speed, next_bg
            nonlocal t, next_stall, stalled_total, executors, ready_at
            while next_stall <= t:
                # the processor is taken away (interrupt, another process): time passes,
                # nobody measures it
                stall = stall_rng.expovariate(1.0 / stall_mean)
                t += stall
                stalled_total += stall
                next_stall += stall + stall_rng.expovariate(stall_rate)
            while next_bg <= t:
                bg_i += 1
                share = bg_rates[bg_i]
                speed = executors * (1.0 - share)
                next_bg = bg_starts[bg_i + 1] if bg_i + 1 < len(bg_starts) else math.inf
            if ready_at <= t and pool is not None:  # the executors asked for serve
                executors, ready_at = pool.target, math.inf
                speed = executors * (1.0 - share)
            if t >= inj_t + tick or t >= period_end:
                inject(min(t, end))
                shed_stale(min(t, end))
            while period_end <= t and period_end <= end + 1e-9:
                control_step(period_end)
                period_start = period_end
                period_end = period_start + period
            next_house = min(inj_t + tick, period_end, next_bg, end, next_stall, ready_at)

        while t < end:
            if t >= next_house:
                housekeeping()
            worked = False
            held = False  # spare kept for a higher class whose work arrived
            # the share of this round that classes repaying a deficit skip: a turn that
            # overran its class's slot delayed every other class alike; the shorter round
            # gives each its part back, in proportion to its quota (repaid_busy_s)
            short = 0.0
            for k in range(K):
                q_k = quota_s[k]
                if credit[k] + min(q_k, own_s[k]) <= 0.0 and (
                    lent_credit[k] + max(q_k - own_s[k], 0.0) <= 0.0
                ):
                    short += q_k
            short /= round_s
            # a round: each class runs on its quota; then the quota that classes without
            # work left over goes to the classes with work, highest priority first (a turn
            # that overruns it is paid back from later rounds' spare, as a deficit). What
            # a class runs beyond its own share stops at the next turn as soon as a class
            # above it needs the processor (lent quota) or has work (spare)
            for slot in range(2 * K):  # slot ≥ K: the spare pass
                in_quota = slot < K
                k = order[slot] if in_quota else order[slot - K]
                if in_quota:
                    q_k = quota_s[k]
                    own = credit[k] + (q_k if q_k < own_s[k] else own_s[k])
                    lent = lent_credit[k] + (q_k - own_s[k] if q_k > own_s[k] else 0.0)
                    if own <= 0.0 and lent <= 0.0:
                        credit[k] = own
                        lent_credit[k] = lent
                        continue
                else:
                    if spare <= 0.0:
                        break
                    own, lent = 0.0, spare
                nodes = owned[k]
                m = len(nodes)
                cur = cursor[k]
                while own > 0.0 or lent > 0.0:
                    if t >= next_house:
                        if t >= end:
                            break
                        housekeeping()
                    # beyond its own share, a turn starts only while no class above needs
                    # the processor (on spare credit: while none has work at all); what is
                    # left goes back to the spare, for the classes above
                    if own <= 0.0 and any(
                        needs(h) if in_quota else kq[h] or kdn[h] for h in above[k]
                    ):
                        held = not in_quota
                        break
                    found = -1
                    for step in range(m):
                        pos = cur + step
                        if pos >= m:
                            pos -= m
                        i = nodes[pos]
                        if qn[i]:
                            found = i
                            cur = pos + 1 if pos + 1 < m else 0
                            break
                    if found < 0:
                        if not kdn[k]:
                            owed[k] = 0.0  # a class out of work is owed nothing
                            break
                        found = max(shed_points[k], key=dn.__getitem__)
                    i = found
                    if dn[i] and qn[i] < batch:
                        # a turn at a shedding point fills its batch with deferred tuples
                        undefer(i, k, min(batch - qn[i], dn[i]))
                    # --- one operator turn ------------------------------------------------
                    have = qn[i]
                    n = batch if have > batch else have
                    q = queues[i]
                    need: float = n
                    head = q[0]
                    first = head[1]
                    last_t = first
                    # runs of a join's queue come from two inputs: track the extremes
                    while True:
                        c = head[0]
                        if head[1] < first:  # noqa: PLR1730 - hot loop, no call
                            first = head[1]
                        if c <= need:
                            q.popleft()
                            need -= c
                            if head[2] > last_t:  # noqa: PLR1730 - hot loop, no call
                                last_t = head[2]
                            if not need:
                                break
                            head = q[0]
                        else:
                            split = head[1] + (head[2] - head[1]) * (need / c)
                            head[0] = c - need
                            head[1] = split
                            if split > last_t:  # noqa: PLR1730 - hot loop, no call
                                last_t = split
                            break
                    qn[i] = have - n
                    kq[k] -= n
                    work = ovh + n * cost[i]
                    if jitter:
                        work *= exp(gauss(jitter_mu, jitter))
                    elapsed = (work * hidden + dispatch) / speed
                    done = t + elapsed
                    measured = elapsed if visible else work
                    p_busy[i] += measured
                    p_cls_busy[k] += measured
                    for h in above[k]:
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
                    p_in[i] += n
                    acc_out = carry[i] + n * sel[i]
                    out = int(acc_out)
                    carry[i] = acc_out - out
                    turns += 1
                    if out:
                        p_out[i] += out
                        sk = sink[i]
                        if sk >= 0:
                            hi = done - first
                            lo = done - last_t
                            mean = 0.5 * (hi + lo)
                            p_cnt[sk] += out
                            p_rt_sum[sk] += out * mean
                            if hi > p_rt_max[sk]:  # noqa: PLR1730 - hot loop, no call
                                p_rt_max[sk] = hi
                            target = targets[sk]
                            if hi > target:
                                if lo >= target:
                                    viol_sum[sk] += out * (mean - target)
                                else:
                                    viol_sum[sk] += out * (hi - target) ** 2 / (2 * (hi - lo))
                                if hi - target > viol_max[sk]:  # noqa: PLR1730 - hot loop, no call
                                    viol_max[sk] = hi - target
                            b = (
                                int(HIST_BINS_PER_DECADE * (log10(mean) - HIST_MIN_EXP))
                                if mean > 1e-6
                                else 0
                            )
                            hist[sk][b if b < HIST_BINS else HIST_BINS - 1] += out
                        for j, sk2 in children[i]:
                            run_first = first
                            if sk2 >= 0:
                                p_arrived[sk2] += out
                                p_point[j] += out
                                fresh = out
                                rule = stale[sk2]
                                if rule is not None and first < done - rule.after_s:
                                    # stale first where a higher class's segment hands
                                    # over tuples already too old for this class
                                    run_first = done - rule.after_s
                                    old = (
                                        out
                                        if last_t <= run_first
                                        else int(out * (run_first - first) / (last_t - first))
                                    )
                                    if old:
                                        fresh -= old
                                        p_shed[sk2] += old
                                        p_stale[sk2] += old
                                        for kk, f in dout_items[j]:
                                            lost_out[kk] += old * f
                                if not fresh:
                                    continue
                                kept = admit(j, fresh, done) if admit_rate[j] >= 0.0 else fresh
                                if fresh > kept:
                                    defer(j, sk2, fresh - kept, run_first, last_t)
                                if not kept:
                                    continue
                            else:
                                kept = out
                            qj = queues[j]
                            if qj:
                                tail = qj[-1]
                                if last_t - tail[1] <= span and run_first >= tail[1]:
                                    tail[0] += kept
                                    if last_t > tail[2]:  # noqa: PLR1730 - hot loop, no call
                                        tail[2] = last_t
                                    qn[j] += kept
                                    kq[owner[j]] += kept
                                    continue
                            qj.append([kept, run_first, last_t])
                            qn[j] += kept
                            kq[owner[j]] += kept
                    t = done
                    # a turn is paid from the class's own share first; one that overruns
                    # it is the class's own deficit
                    if own > 0.0:
                        own -= elapsed
                        over = -own
                    else:
                        lent -= elapsed
                        over = -lent
                    if over > 0.0 and in_quota:
                        # it overran its slot: the other classes lost their parts of that
                        over = min(over, elapsed) / round_s
                        for j in range(K):
                            if j != k:
                                owed[j] += over * quota_s[j]
                    worked = True
                cursor[k] = cur
                if in_quota:
                    spare += (own if own > 0.0 else 0.0) + (lent if lent > 0.0 else 0.0)
                    credit[k] = own if own < 0.0 else 0.0
                    lent_credit[k] = lent if lent < 0.0 else 0.0
                else:
                    spare = lent
                if t >= end:
                    break
            if not held:
                spare = min(spare, 0.0)  # spare nobody had work for is not kept
            if not worked and t < end:
                pending = [k for k in range(K) if kq[k] or kdn[k]]
                if pending:
                    # every class with work is in deficit: skip the rounds it would take
                    # for one to run again, on its own share, its lent quota, or the spare
                    # the classes without work leave (a class with no quota runs only
                    # when the others have nothing to do: the scheduler stays
                    # work-conserving)
                    idle_quota = sum(quota_s[k] for k in range(K) if k not in pending)
                    parts = [
                        (min(quota_s[k], own_s[k]), max(quota_s[k] - own_s[k], 0.0))
                        for k in range(K)
                    ]
                    waits = [
                        math.floor(-c / q) + 1
                        for k in pending
                        for c, q in ((credit[k], parts[k][0]), (lent_credit[k], parts[k][1]))
                        if q > 0.0
                    ]
                    if idle_quota > 0.0:
                        waits.append(math.floor(-spare / idle_quota) + 1)
                    if not waits:  # no quota anywhere: a round for the classes by priority
                        spare = round_s
                        continue
                    skip = max(min(waits) - 1, 0)
                    for k in pending:
                        credit[k] = min(credit[k] + skip * parts[k][0], 0.0)
                        lent_credit[k] = min(lent_credit[k] + skip * parts[k][1], 0.0)
                    spare += skip * idle_quota
                    continue
                target_t = max(t, min(inj_t + tick, period_end, next_bg, end, next_stall, ready_at))
                gap = target_t - t
                p_idle += gap
                idle_total += gap
                t = target_t
                housekeeping()
        housekeeping()  # the last period's control step and arrivals
        oracle = loop.oracle.losses()
        for k in range(K):
            tot = totals[k]
            # a last period shorter than the control period: count it, without a step
            tot.arrived += p_arrived[k]
            tot.shed += p_shed[k]
            tot.outputs += p_cnt[k]
            tot.response_sum_s += p_rt_sum[k]
            tot.response_max_s = max(tot.response_max_s, p_rt_max[k])
            tot.oracle_loss = oracle[names[k]].loss_fraction
            tot.offered_outputs = offered_out[k]
            tot.lost_outputs = lost_out[k]
            tot.violation_sum_s = viol_sum[k]
            tot.violation_max_s = viol_max[k]
        backlog: dict[str, int] = {}
        backlog_age: dict[str, float] = {}
        for k, name in enumerate(names):
            backlog[name] = kq[k] + kdn[k]  # queued and deferred
            waiting = [queues[i] for i in owned[k]] + [deferred[j] for j in shed_points[k]]
            oldest = min((run[1] for q in waiting for run in q), default=None)
            backlog_age[name] = end - oldest if oldest is not None else 0.0
        self.last_headroom = last_headroom
        return SimOutput(
            scenario=sc,
            network=net,
            class_order=tuple(names),
            totals={names[k]: totals[k] for k in range(K)},
            series=series,
            redistributions=redistributions,
            backlog=backlog,
            backlog_age_s=backlog_age,
            idle_s=idle_total,
            end_s=end,
            turns=turns,
            actions=list(action_log.actions),
            scaling=scaling_summary(scaling, pool),
            oracle=loop.oracle,
        )


def simulate(scenario: Scenario) -> SimOutput:
    """Run ``scenario`` once."""
    return Simulation(scenario).run()

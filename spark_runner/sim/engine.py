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
  it serves the freshest of them when it has nothing admitted to do or, while it sheds
  nothing (a burst over its bucket), room in a batch, and drops them once stale. The
  queued and deferred tuples there that the class can no longer deliver within its target
  are dropped first (stale first, at every arrival tick).
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

Where each part lives: :mod:`.topology` (the network as index arrays), :mod:`.state`
(queues and counters), :mod:`.admission` (arrivals, admission and stale-first shedding),
:mod:`.turns` (one operator turn), :mod:`.scheduler` (the class scheduler),
:mod:`.clock` (background, executors, stalls), :mod:`.period_step` (the control step);
this module wires them into a run.

The engine reads no clock and uses randomness only from ``random.Random(seed)`` (per-turn
cost jitter, Pareto arrivals), so a scenario and a seed give the same results every time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from spark_runner.contract.control import LiveConfig, TargetsInForce
from spark_runner.control.actions import ActionLog
from spark_runner.control.background import background_schedule
from spark_runner.control.elastic import PoolControl, scaling_summary
from spark_runner.control.live import apply_live_config
from spark_runner.control.network import build_network, declare_statistics, expected_load
from spark_runner.control.period import PeriodLoop
from spark_runner.control.plane import ControlPlane, make_control_plane
from spark_runner.control.run import ClassTotals, RunOutput
from spark_runner.core.elastic import ScalingParams, sized_at_start
from spark_runner.core.load_model import LoadModel
from spark_runner.scenario.arrivals import build_schedule
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.scenario.models import Scenario
from spark_runner.sim.admission import Admission, Arrivals
from spark_runner.sim.clock import Clock
from spark_runner.sim.period_step import PeriodStep
from spark_runner.sim.scheduler import Scheduler
from spark_runner.sim.state import PeriodCounters, RunAccounts, Work
from spark_runner.sim.topology import Topology, build_topology
from spark_runner.sim.turns import operator_turns

LiveChange = tuple[float, LiveConfig]
"""A live configuration to apply at the control step at or after its instant (s), as a
running job applies a new version at its next control period; at 0 s or before, the run
starts with it."""


class Simulation:
    """One run of a scenario. ``run()`` once; the result is deterministic given the seed.
    ``changes``: live configurations applied during the run (:data:`LiveChange`)."""

    def __init__(self, scenario: Scenario, changes: Sequence[LiveChange] = ()) -> None:
        self.scenario = scenario
        self.live = scenario_live_config(scenario)
        self.changes = sorted(changes, key=lambda change: change[0])
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
        while self.changes and self.changes[0][0] <= 0.0:
            self._apply(self.changes.pop(0)[1])

    def run(self) -> RunOutput:
        """Simulate the scenario to its end; what it produced."""
        return self.start().finish()

    def start(self) -> Running:
        """The run set up at 0 s, to be advanced (several runs side by side: a cluster)."""
        sc, eng = self.scenario, self.scenario.engine
        targets = TargetsInForce(lambda: self.live)
        topo = build_topology(self.network, self.load_model.plan, dict(targets), eng)
        n_classes, n_nodes = len(topo.names), len(topo.op_ids)
        work, accounts = Work.empty(n_nodes, n_classes), RunAccounts.empty(n_classes)
        counters = PeriodCounters(n_nodes, n_classes)
        admission = Admission(
            topo, work, counters, accounts, tick_s=eng.tick_s, span_s=eng.run_span_s
        )
        # elastic capacity (spec §5): executors are processors of speed 1 each; a new one
        # serves ``executor_startup_s`` after the policy asked for it
        scaling = sc.scaling()
        if scaling is not None and scaling.start == "expected_load":
            rates = {name: schedule.rate_at(0.0) for name, schedule in self.schedules.items()}
            scaling = sized_at_start(scaling, expected_load(self.network, rates))
        pool = PoolControl(scaling) if scaling is not None else None
        clock = Clock(
            self.background, scaling.min_executors if scaling is not None else 1, eng, sc.seed
        )
        turn = operator_turns(topo, admission, eng, self.rng)
        scheduler = Scheduler(
            self.control,
            admission,
            turn,
            clock,
            round_s=eng.scheduler_round_s,
            batch=eng.batch_size,
            end_s=sc.duration_s,
        )
        action_log = ActionLog(targets, scaling.warmup_s if scaling is not None else 0.0)
        loop = PeriodLoop(self.control, self.load_model, targets)
        step = PeriodStep(loop, admission, scheduler, clock, pool, action_log, eng)

        def stepped(at: float, dt: float) -> None:
            step(at, dt)
            self._apply_due(at, topo)

        house = _Housekeeping(sc, Arrivals(topo, self.schedules, admission), clock, pool, stepped)
        return Running(self, step, scheduler, house, scaling)

    def _apply_due(self, at: float, topo: Topology) -> None:
        """Apply the changes due by the control step at ``at``; the operator turns then
        judge outputs against the targets in force."""
        while self.changes and self.changes[0][0] <= at + 1e-9:
            self._apply(self.changes.pop(0)[1])
            topo.targets[:] = [self.live.classes[name].delay_target_s for name in topo.names]

    def _apply(self, new: LiveConfig) -> None:
        apply_live_config(self.control, self.live, new)
        self.live = new


class Running:
    """A run under way: ``advance`` it (to its end, or to an instant), then ``finish``."""

    def __init__(
        self,
        simulation: Simulation,
        step: PeriodStep,
        scheduler: Scheduler,
        house: _Housekeeping,
        scaling: ScalingParams | None,
    ) -> None:
        self.simulation, self.step, self.scheduler, self.house = simulation, step, scheduler, house
        self.scaling = scaling

    @property
    def pool(self) -> PoolControl | None:
        """The elastic pool's control (None: the scenario asks no elasticity)."""
        return self.step.pool

    def set_range(self, name: str, from_s: float = 0.0, until_s: float = math.inf) -> None:
        """From now on class ``name`` takes the tuples delivered in ``[from_s, until_s)``
        only (its share of a hand-off between jobs)."""
        self.house.arrivals.ranges[self.step.topo.names.index(name)] = (from_s, until_s)

    def advance(self, until: float = math.inf) -> None:
        """Simulate until ``until`` (its control step done) or the run's end."""
        self.scheduler.run(self.house, until)

    def finish(self) -> RunOutput:
        """The rest of the run, its last period's control step and arrivals; what the
        run produced."""
        house, step, scheduler = self.house, self.step, self.scheduler
        sc, topo = self.simulation.scenario, step.topo
        house(scheduler.run(house))
        accounts = step.admission.accounts
        backlog, backlog_age = _backlog(topo, step.admission.work, sc.duration_s)
        return RunOutput(
            scenario=sc,
            network=self.simulation.network,
            class_order=topo.names,
            totals=_close_totals(step, accounts, step.loop, topo.names),
            series=step.series,
            redistributions=step.redistributions,
            backlog=backlog,
            backlog_age_s=backlog_age,
            idle_s=accounts.idle_s,
            end_s=sc.duration_s,
            turns=scheduler.turns,
            actions=list(step.action_log.actions),
            scaling=scaling_summary(self.scaling, self.pool),
            oracle=step.loop.oracle,
        )


class _Housekeeping:
    """Between operator turns: stalls, the background schedule, executors coming up,
    arrivals (and stale-first shedding) every tick, and the control steps due."""

    def __init__(
        self,
        scenario: Scenario,
        arrivals: Arrivals,
        clock: Clock,
        pool: PoolControl | None,
        step: Callable[[float, float], None],
    ) -> None:
        self.arrivals, self.clock, self.pool, self.step = arrivals, clock, pool, step
        self.tick_s = scenario.engine.tick_s
        self.period_s = scenario.control.period_s
        self.end_s = scenario.duration_s
        self.period_start = 0.0
        self.period_end = self.period_s
        self.next_s = min(self.tick_s, self.period_end, clock.next_bg, self.end_s)
        """When housekeeping is next due."""

    def __call__(self, t: float) -> float:
        """Catch up with ``t``; the time after it (a stall takes time)."""
        clock = self.clock
        t = clock.stall(t)
        clock.follow_background(t)
        if clock.ready_at <= t and self.pool is not None:  # the executors asked for serve
            clock.resize(self.pool.target)
        if t >= self.arrivals.last_s + self.tick_s or t >= self.period_end:
            now = min(t, self.end_s)
            self.arrivals.inject(now)
            self.arrivals.admission.shed_stale(now)
        while self.period_end <= t and self.period_end <= self.end_s + 1e-9:
            self.step(self.period_end, self.period_end - self.period_start)
            self.period_start = self.period_end
            self.period_end = self.period_start + self.period_s
        self.next_s = self.wake_at()
        return t

    def wake_at(self) -> float:
        """When something is next due: arrivals, a control step, a background change, the
        run's end, a stall or executors coming up."""
        clock = self.clock
        return min(
            self.arrivals.last_s + self.tick_s,
            self.period_end,
            clock.next_bg,
            self.end_s,
            clock.next_stall,
            clock.ready_at,
        )


def _close_totals(
    step: PeriodStep, accounts: RunAccounts, loop: PeriodLoop, names: tuple[str, ...]
) -> dict[str, ClassTotals]:
    """The run's totals per class, with a last period shorter than the control period
    counted (without a step) and the oracle's loss under the policy."""
    step.add_totals()
    oracle = loop.oracle.losses()
    for k, tot in enumerate(accounts.totals):
        tot.oracle_loss = oracle[names[k]].loss_fraction
        tot.offered_outputs = accounts.offered_out[k]
        tot.lost_outputs = accounts.lost_out[k]
        tot.violation_sum_s = accounts.viol_sum[k]
        tot.violation_max_s = accounts.viol_max[k]
    return dict(zip(names, accounts.totals, strict=True))


def _backlog(topo: Topology, work: Work, end_s: float) -> tuple[dict[str, int], dict[str, float]]:
    """Per class, the tuples still queued or deferred at the end and the oldest's age."""
    backlog: dict[str, int] = {}
    backlog_age: dict[str, float] = {}
    for k, name in enumerate(topo.names):
        backlog[name] = work.kq[k] + work.kdn[k]
        waiting = [work.queues[i] for i in topo.owned[k]] + [
            work.deferred[j] for j in topo.shed_points[k]
        ]
        oldest = min((run[1] for q in waiting for run in q), default=None)
        backlog_age[name] = end_s - oldest if oldest is not None else 0.0
    return backlog, backlog_age


def simulate(scenario: Scenario) -> RunOutput:
    """Run ``scenario`` once."""
    return Simulation(scenario).run()

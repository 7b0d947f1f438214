"""The control loop on the driver: batch accounting → core step → next decision (no Spark).

After every micro-batch (one control period; batches start one *pace* apart, see
:mod:`pacing`) the runner hands over the batch's record (offsets), what its ``observe``
operators measured in Spark (:mod:`measures`: counts per operator, each class's
answers) and its timing. :meth:`EngineController.on_batch` then

1. takes the response times of the class's answers (commit instant − arrival instant)
   and the exact per-class counts: arrived, admitted (processed), shed, waiting;
2. fits the cost model on the batch's time (:mod:`costs`) and feeds the core's
   :class:`LoadModel` with measured costs, selectivities, arrival rates before shedding
   and the queues waiting in the log;
3. hands each class's period (:class:`~spark_runner.control.period.ClassPeriod`) to
   the per-period loop the simulator runs too (:mod:`spark_runner.control.period`): one
   :class:`Observation` per class, the control plane's step (one core manager per class
   through :class:`DilosController` — ``none``, ``per_class``, ``dilos`` — or one common
   manager, ``common``), the oracle's account;
4. returns the next :class:`Decision` — quotas, shed fractions (zero in recommend-only
   mode), the pace (from the tightest target among the classes with tuples), the batch
   budget for that pace and each point's cost — plus one :class:`MetricSample` per
   class and a series entry for the results document.

A new live configuration offered from another thread (:meth:`offer`) is put in force at
once, between two steps (a step in progress finishes first): from then on every decision
is made with it, the first at the next step.

Warm-up (``warmup_s`` > 0, for benchmarks): the first batches pay for JIT compilation and
Python worker start-up (seconds on 2 cores). For ``warmup_s`` the cost model learns but
the managers do not run (no shedding, quotas at the priority shares); then one decision
discards every tuple still waiting, and the measured run — series, totals, results —
starts with the next batch.

Times are epoch seconds handed in by the caller; nothing here reads a clock.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spark_runner.contract.actions import ControlAction
from spark_runner.contract.control import LiveConfig, TargetsInForce
from spark_runner.contract.samples import INT32_MAX, MetricSample
from spark_runner.contract.snapshot import DEFAULT_TARGET_UTILIZATION
from spark_runner.control.actions import ActionLog, Managed
from spark_runner.control.background import background_schedule
from spark_runner.control.elastic import PoolControl, scaling_changes, scaling_summary
from spark_runner.control.live import apply_live_config
from spark_runner.control.network import build_network, expected_load
from spark_runner.control.period import (
    ClassPeriod,
    PeriodLoop,
    PeriodOutcome,
    class_sample,
    rounded,
)
from spark_runner.control.plane import make_control_plane
from spark_runner.control.run import ClassTotals
from spark_runner.core.class_scheduler import priority_order
from spark_runner.core.dilos import StaleRule
from spark_runner.core.elastic import ScalingParams, sized_at_start, spared_queues
from spark_runner.core.errors import ParameterError
from spark_runner.core.load_model import LoadModel
from spark_runner.core.oracle import recent_shed_s
from spark_runner.engine.control.pacing import (
    MIN_WORK_SHARE,
    bare_floor_s,
    floor_s,
    mean_floor_s,
    pace_s,
)
from spark_runner.engine.dataflow.network import NetworkPlan, stream_specs
from spark_runner.engine.measure.costs import (
    ROW_WEIGHT_S,
    STATEFUL_ROW_WEIGHT_S,
    BatchBudget,
    BranchScales,
)
from spark_runner.engine.measure.digest import PeriodStats, RunDigest, period_stats
from spark_runner.engine.measure.measures import BatchMeasures, NodeCounts, ResponseSample
from spark_runner.engine.sources.offsets import BatchRecord, Decision
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.scenario.handoff import movable_issue
from spark_runner.scenario.models import MapOp, Scenario, WindowAggregateOp

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ControllerOptions:
    """Attributes:
    target_utilization: share of a period a batch may take, (0, 1]
        [``DEFAULT_TARGET_UTILIZATION``].
    min_budget_fraction: the batch budget never goes below this share of a period [0.1].
    warmup_s: outputs and periods before this scenario time stay out of the results [0].
    plain: no class scheduler and no managers: every waiting tuple is taken (the
        "Spark without the controller" baseline) [False].
    fixed_pace: batches start one control period apart, whatever the targets (a
        baseline; see :mod:`pacing`) [False].
    burn: maps burn their calibrated CPU cost (their weight includes it) [True].
    parallelism: task slots a batch runs on [2].
    measured_costs: operator weights follow the executor time Spark measured per query
        branch (:class:`~spark_runner.engine.measure.costs.BranchScales`); otherwise they stay
        the declared priors [True].
    numbering: the number of the run's first control period and first control action,
        and the step to the next, ``(first, step)``: a job's queries (one per tier)
        number their periods and actions apart, so the job's numbers stay unique
        [(0, 1)].
    """

    target_utilization: float = DEFAULT_TARGET_UTILIZATION
    min_budget_fraction: float = 0.1
    warmup_s: float = 0.0
    plain: bool = False
    fixed_pace: bool = False
    burn: bool = True
    parallelism: int = 2
    measured_costs: bool = True
    numbering: tuple[int, int] = (0, 1)


@dataclass(frozen=True)
class BatchTiming:
    """Epoch seconds: ``started_s`` the trigger began, ``output_s`` the batch committed
    (its outputs written: every answer of the batch counts as produced then)."""

    started_s: float
    output_s: float


def first_branch(plan: NetworkPlan, outputs: Sequence[int]) -> dict[int, int]:
    """Per node, the first of ``outputs`` (highest priority first) that needs it: the
    branch its sources' read time counts in."""
    branch: dict[int, int] = {}
    for o in outputs:
        for i in plan.needed_by(o):
            branch.setdefault(i, o)
    return branch


def edge_shedding_nodes(plan: NetworkPlan) -> dict[str, list[int]]:
    """Per class, the nodes where it sheds on an edge (a higher class's shared segment it
    reads), not at a point."""
    return {
        name: [
            i
            for op in plan.sharing.shedding_point_ids(name)
            if plan.nodes[i := plan.graph.index(op)].point is None
        ]
        for name in plan.class_names
    }


@dataclass(frozen=True)
class LastWork:
    """The last batch stepped on, for its task times read after the step: per node its
    declared work and tuples taken, and per branch (output node) its sources' read time."""

    batch_id: int
    work: np.ndarray
    tuples: np.ndarray
    read_s: dict[int, float]


@dataclass
class StepOutcome:
    """What one step decided, for the runner to hand on."""

    decision: Decision
    samples: list[MetricSample]
    redistributed: bool = False
    actions: list[ControlAction] = field(default_factory=list)


@dataclass
class _Period:
    """Accumulators between two steps."""

    window_s: float = 0.0
    down_s: float = 0.0  # of window_s, before this process's first batch started
    response: dict[str, ResponseSample] = field(default_factory=dict)
    arrived: dict[str, int] = field(default_factory=dict)
    processed: dict[str, int] = field(default_factory=dict)
    shed: dict[str, int] = field(default_factory=dict)
    stale: dict[str, int] = field(default_factory=dict)
    busy_s: dict[str, float] = field(default_factory=dict)
    point_arrived: list[int] = field(default_factory=list)
    point_shed: list[int] = field(default_factory=list)
    edge_shed: dict[int, int] = field(default_factory=dict)
    reached: np.ndarray | None = None
    passed: np.ndarray | None = None
    idle_s: float = 0.0
    batches: int = 0


class EngineController:
    """Per-run controller state (see module docstring)."""

    def __init__(
        self,
        plan: NetworkPlan,
        options: ControllerOptions | None = None,
        live: LiveConfig | None = None,
        period_s: float | None = None,
    ) -> None:
        self.plan = plan
        self.options = options or ControllerOptions()
        scenario = plan.scenario
        self.period_s = period_s or scenario.control.period_s
        self.pace_s = self.period_s
        self.start_pace_s = self.period_s
        self.names = plan.class_names
        self.targets: Mapping[str, float] = TargetsInForce(lambda: self.live)
        self.digests = {n: RunDigest() for n in self.names}
        self.load_model = LoadModel(plan.graph, plan.priorities)
        self.control = make_control_plane(scenario, self.load_model)
        scaling = scenario.scaling()
        # read only by ESJ's initial size (start is fixed at launch)
        asks_esj = scaling is not None and scaling.start == "expected_load"
        self.expected_load = _expected_load(scenario) if asks_esj else 0.0
        self.scaling = sized_at_start(scaling, self.expected_load) if scaling else None
        self.elastic = PoolControl(self.scaling) if self.scaling is not None else None
        self.executors = self.scaling.min_executors if self.scaling is not None else 1
        self.free_executors = 0
        self.scaling_off: str | None = None
        self.live = self._launch_config = scenario_live_config(scenario)
        if live is not None:
            changes = self._install(live)
            if changes:
                log.info("launch configuration v%d over the scenario: %s", live.version, changes)
        self.budget = BatchBudget(
            self.period_s,
            self.options.target_utilization,
            alpha=1.0 / max(1, self.options.parallelism),
            floor_fraction=self.options.min_budget_fraction,
        )
        self._step_lock = threading.Lock()  # a step and a live configuration's install
        self._w_in, self._w_out = self._weights()
        # highest priority first: a shared segment's cost is measured on its owner's branch
        outputs = [n.index for n in sorted(plan.outputs, key=plan.output_rank)]
        self.scales = BranchScales([plan.needed_by(o) for o in outputs], outputs)
        self._read_branch = first_branch(plan, outputs)
        self._scale = np.ones(len(plan.nodes))
        self._first_batch: int | None = None
        self._warm_s: float | None = None  # the first batch's commit: warm-up ends
        self._last_work: LastWork | None = None
        self.source_read_s: dict[int, float] = {}
        """Per branch (output node), the seconds its sources took to produce its tuples
        over the run (Python workers: not in Spark's executor CPU)."""
        self.unattributed_task_s = 0.0
        self._owner = np.array([self.names.index(n.owner) for n in plan.nodes], dtype=np.int64)
        self._edge_points = edge_shedding_nodes(plan)
        self._sel = np.ones(len(plan.nodes))
        self._quotas = self.control.initial_quotas()
        self._step = 0
        self._decision_version = 0
        self._plain_ranges: dict[str, tuple[float | None, float | None]] = {}
        self._period = self._new_period()
        self.background = background_schedule(scenario)
        # results
        self.totals = {n: ClassTotals() for n in self.names}
        self.loop = PeriodLoop(self.control, self.load_model, self.targets)
        self.action_log = ActionLog(
            self.targets,
            self.scaling.warmup_s if self.scaling is not None else 0.0,
            numbers=self.options.numbering,
        )
        self.series: list[dict[str, Any]] = []
        self.redistributions: list[dict[str, Any]] = []
        self.idle_s = 0.0
        self.batches = 0
        self.last_record: BatchRecord | None = None
        self.phase = "warmup" if self.options.warmup_s > 0 else "running"
        self.measured_from_s = 0.0 if self.phase == "running" else math.nan

    # --- configuration -----------------------------------------------------------------

    def _weights(self) -> tuple[np.ndarray, np.ndarray]:
        w_in = np.full(len(self.plan.nodes), ROW_WEIGHT_S)
        w_out = np.zeros(len(self.plan.nodes))
        for n in self.plan.nodes:
            if isinstance(n.model, MapOp) and self.options.burn:
                w_in[n.index] += n.model.cpu_cost_per_tuple_s
            elif isinstance(n.model, WindowAggregateOp):
                window = n.model.window
                per_tuple = math.ceil(window.size_s / (window.slide_s or window.size_s) - 1e-9)
                w_in[n.index] = STATEFUL_ROW_WEIGHT_S * per_tuple
            elif n.stateful:
                w_in[n.index] = STATEFUL_ROW_WEIGHT_S
            if n.output is not None:
                w_out[n.index] = STATEFUL_ROW_WEIGHT_S
        return w_in, w_out

    def declared_and_measured(self) -> dict[str, dict[str, float]]:
        """Every operator's weight per input tuple, declared (the prior) and as measured
        (the prior times its branch's scale), s."""
        per_tuple = self._w_in + self._sel * self._w_out
        return {
            self.plan.graph.ids[i]: {
                "declared_s": float(per_tuple[i]),
                "measured_s": float(per_tuple[i] * self._scale[i]),
            }
            for i in range(len(self.plan.nodes))
        }

    def branch_fixed_cpu(self) -> dict[str, float]:
        """Per query output, its branch's executor CPU per batch that does not grow with
        its tuples (learnt by :class:`BranchScales`; in the batch's fixed time), s."""
        ids = self.plan.graph.ids
        return {ids[o]: f for o, f in zip(self.scales.outputs, self.scales.fixed_s, strict=True)}

    @property
    def config_version(self) -> int:
        return self.live.version

    @property
    def recommend_only(self) -> bool:
        return self.live.recommend_only

    def offer(self, config: LiveConfig) -> int | None:
        """Put a newer live configuration in force (called from another thread; a step in
        progress finishes first). Returns its version once in force; None when it is not
        newer than the one in force, or is rejected (its rules fail: nothing changes)."""
        with self._step_lock:
            if config.version <= self.live.version:
                return None
            try:
                changes = self._install(config)
            except ParameterError as exc:
                log.error("live configuration v%d rejected, not applied: %s", config.version, exc)
                return None
        log.info("live configuration v%d applied: %s", config.version, changes or "no change")
        return config.version

    def _install(self, config: LiveConfig) -> list[str]:
        scaling = self._live_scaling(config)  # checked before anything changes
        for name in config.ranges:
            if name in self.names and (why := movable_issue(self.plan.scenario, name)) is not None:
                raise ParameterError(f"ranges.{name}", name, f"cannot move between jobs: {why}")
        changes = apply_live_config(self.control, self.live, config)
        if config.ranges != self.live.ranges:
            changes.append(f"ranges={self._ranges_of(config)}")
        if scaling is not None and self.elastic is not None and scaling != self.elastic.params:
            changes.append(f"elastic={scaling_changes(self.elastic.params, scaling)}")
            self.elastic.retune(scaling)
        self.live = config
        return changes

    def _live_scaling(self, config: LiveConfig) -> ScalingParams | None:
        """The elasticity settings ``config`` asks (None: the run does not scale); raises
        ``ParameterError`` for one the running application cannot take. The thresholds
        are its classes' even where ``config`` carries no elasticity settings."""
        if self.scaling is None:
            return None
        if config.elastic is None:  # a configuration from before elasticity was live
            config = config.model_copy(update={"elastic": self._launch_config.elastic})
        config.check_launch(self._launch_config)
        params = config.scaling_params()
        return sized_at_start(params, self.expected_load) if params is not None else None

    # --- decisions -----------------------------------------------------------------------

    def set_parallelism(self, parallelism: int) -> None:
        """The task slots a batch runs on (known once Spark runs, and again whenever the
        pool of executors changes): the budget's scale."""
        with self._step_lock:
            self.budget.rescale(1.0 / max(1, parallelism))

    def no_scaling(self, reason: str) -> None:
        """The engine cannot resize its executors (``reason``): the run goes on without
        the elastic policy, and its results say why."""
        log.warning("elastic capacity off: %s", reason)
        self.elastic = None
        self.scaling_off = reason

    def scaling_summary(self) -> dict[str, Any] | None:
        """The results' ``scaling`` part (None: the scenario asks no elasticity)."""
        return scaling_summary(self.scaling, self.elastic, self.scaling_off)

    def pool_state(self, serving: int, free: int) -> None:
        """The executors serving now and how many more the cluster could start (the
        runner's :class:`~spark_runner.engine.control.executors.ExecutorPool`)."""
        if self.scaling is None:
            return
        with self._step_lock:
            if serving != self.executors and serving > 0:
                self.budget.rescale(1.0 / (serving * self.scaling.executor_cores))
            self.executors, self.free_executors = serving, free

    @property
    def alpha(self) -> float:
        """Capacity seconds per weight second: the batch budget is one pace of capacity
        (see :mod:`costs`)."""
        return self.pace_s / self.budget.budget_s

    def capacity(self) -> float:
        """Capacity seconds per second the batches give at this pace (the pool's ``L_C``:
        what is left of each cycle after its fixed time, at the machine's speed now).
        Loads are in the same unit (costs are scaled by ``alpha``), so a pool twice as
        large halves the load and keeps this."""
        return self.budget_s() / self.pace_s

    def budget_s(self) -> float:
        """The next batch's budget in capacity seconds (one pace)."""
        return self.alpha * self.budget.budget_s

    def _repace(self, loaded: Sequence[str]) -> None:
        """Set the pace from the tightest target among the ``loaded`` classes: the one
        the budget, the loads and the floors are reckoned in (a quarter of a cycle for
        work at the least), and the one batches start at, whose least leaves the work the
        classes offer (:func:`pacing.work_share`). Light classes then get batches nearly
        back to back, while their loads keep their meaning: reckoned at the shorter pace,
        a light load read as two thirds of the capacity (the cycle holds little more
        than it), and the elastic policy would scale out for it. A pace cut for a target
        leaves its class and the classes above it the work they offer (their ``needs``,
        by the priorities in force)."""
        targets = [self.targets[n] for n in loaded]
        machine = (self.period_s, self.budget.fixed_now_s, self.options.target_utilization)
        shares, priority = self.budget.offered_shares(), self.control.priorities()
        needs = [
            sum(shares.get(m, 0.0) for m in loaded if priority[m] >= priority[n]) for n in loaded
        ]
        self.pace_s = pace_s(targets, *machine, MIN_WORK_SHARE, needs)
        offered = self.budget.offered_share
        self.start_pace_s = pace_s(
            targets, *machine, MIN_WORK_SHARE if offered is None else offered, needs
        )
        self.budget.period_s = self.pace_s

    def _offer(self, record: BatchRecord, class_work: np.ndarray, window_s: float) -> None:
        """Tell the budget the work the batch's window offered, in all and by class: its
        modelled work scaled by the tuples that arrived at its points over those it kept
        (the deferred and shed ones would have cost as much). A batch (or class) that kept
        none of its arrivals says nothing."""
        arrived, kept = np.zeros(len(self.names)), np.zeros(len(self.names))
        for p in self.plan.points:
            d, k = record.delta(p.index), self.names.index(p.class_name)
            arrived[k] += d.arrived
            kept[k] += d.kept
        if kept.sum() > 0 or arrived.sum() == 0:
            total = class_work.sum() * arrived.sum() / kept.sum() if kept.sum() else 0.0
            by_class = {
                name: float(class_work[k] * arrived[k] / kept[k]) if kept[k] else 0.0
                for k, name in enumerate(self.names)
                if kept[k] > 0 or arrived[k] == 0
            }
            self.budget.offer(float(total), window_s, by_class)

    def initial_decision(self) -> Decision:
        if self.options.plain:
            return self._plain_decision()
        if not self.options.fixed_pace:
            self._repace(self.names)
        self._push_costs()
        return self._decision({n: 0.0 for n in self.names}, self._quotas)

    def _held_decision(self) -> Decision:
        """The managers do not run (warm-up): priority quotas, no shedding, fresh costs."""
        self._decision_version += 1
        if self.options.plain:
            return self._plain_decision()
        self._push_costs()
        return self._decision({n: 0.0 for n in self.names}, self._quotas)

    def _decision(
        self,
        shed: Mapping[str, float],
        quotas: Mapping[str, float],
        stale: Mapping[str, StaleRule | None] | None = None,
    ) -> Decision:
        applied = {n: 0.0 if self.recommend_only else float(shed[n]) for n in self.names}
        stale_max = {
            n: rule.max_queued
            for n, rule in (stale or {}).items()
            if rule is not None and rule.max_queued is not None and not self.recommend_only
        }
        costs = {p.op_id: self.load_model.class_coefficient(p.op_id) for p in self.plan.points}
        return Decision(
            version=self._decision_version,
            shed=applied,
            quotas=dict(quotas),
            budget_s=self.budget_s(),
            costs_s=costs,
            edge_costs_s={} if self.recommend_only else self._edge_costs(),
            admit_all=False,
            config_version=self.config_version,
            stale_max=stale_max,
            pace_s=self.start_pace_s,
            order=priority_order(self.control.priorities()),
            ranges=self._ranges(),
        )

    def _plain_decision(self) -> Decision:
        """Take every waiting tuple (no managers), within the classes' ranges."""
        self._plain_ranges = self._ranges()
        return Decision(
            version=self._decision_version,
            admit_all=True,
            config_version=self.config_version,
            pace_s=self.period_s,
            ranges=self._plain_ranges,
        )

    def _plain_ranges_step(self) -> StepOutcome | None:
        """A plain run decides nothing but the ranges a live configuration changed."""
        if self._ranges() == self._plain_ranges:
            return None
        self._decision_version += 1
        return StepOutcome(self._plain_decision(), [])

    def _ranges(self) -> dict[str, tuple[float | None, float | None]]:
        """The event time the live configuration gives this job of each moving class."""
        return self._ranges_of(self.live)

    def _ranges_of(self, config: LiveConfig) -> dict[str, tuple[float | None, float | None]]:
        return {n: (r.from_s, r.until_s) for n, r in config.ranges.items() if n in self.names}

    def _edge_costs(self) -> dict[str, dict[str, float]]:
        """Per class that sheds on an edge, per point upstream of its edges, its work per
        tuple kept at the point (before its shed fraction): the tuples that reach the
        edges (measured selectivities) times its branch's load coefficient."""
        plan = self.plan
        out: dict[str, dict[str, float]] = {}
        for p in plan.points:
            flow = np.zeros(len(plan.nodes))
            flow[p.node] = self._sel[p.node]
            for i in plan.graph.order:
                parents = plan.graph.parents[i]
                if parents and i != p.node:
                    flow[i] = sum(flow[j] for j in parents) * self._sel[i]
            for node in plan.nodes:
                for route in node.routes:
                    if route.shed_class < 0 or not flow[node.index]:
                        continue
                    name = plan.class_names[route.shed_class]
                    child = plan.graph.ids[route.child]
                    work = flow[node.index] * self.load_model.class_coefficient(child)
                    costs = out.setdefault(name, {})
                    costs[p.op_id] = costs.get(p.op_id, 0.0) + float(work)
        return out

    def _push_costs(self) -> None:
        alpha = self.alpha
        cost = alpha * (self._w_in + self._sel * self._w_out) * self._scale
        ids = self.plan.graph.ids
        self.load_model.update(costs={ids[i]: float(c) for i, c in enumerate(cost)})

    # --- batches -----------------------------------------------------------------------

    def _new_period(self) -> _Period:
        n = len(self.plan.nodes)
        p = _Period()
        p.response = {name: ResponseSample() for name in self.names}
        for d in (p.arrived, p.processed, p.shed, p.stale, p.busy_s):
            d.update({name: 0 for name in self.names})
        p.point_arrived = [0] * len(self.plan.points)
        p.point_shed = [0] * len(self.plan.points)
        p.reached = np.zeros(n, dtype=np.int64)
        p.passed = np.zeros(n, dtype=np.int64)
        return p

    def on_batch(
        self, record: BatchRecord, measures: BatchMeasures, timing: BatchTiming
    ) -> StepOutcome | None:
        """Account for one batch; step the control plane (returns None in plain mode)."""
        with self._step_lock:
            return self._on_batch(record, measures, timing)

    def _on_batch(
        self, record: BatchRecord, measures: BatchMeasures, timing: BatchTiming
    ) -> StepOutcome | None:
        self.batches += 1
        self.last_record = record
        period = self._period
        counts = measures.counts
        start_s, end_s = record.window_s
        window_s = max(end_s - start_s, 1e-6)
        period.window_s += window_s
        # the first batch's window reaches back to the streams' origin (a start after a
        # backlog) or to the last committed offset (a restart): nothing ran before it
        down_s = max(0.0, min(timing.started_s, end_s) - start_s) if self.batches == 1 else 0.0
        period.down_s += down_s
        period.batches += 1
        commit_s = timing.output_s - measures.origin_s
        for name, summaries in measures.answers.items():
            for summary in summaries:
                period.response[name].add_answers(summary, commit_s)
        self._count_admission(record, counts, period)
        assert period.reached is not None and period.passed is not None
        period.reached += counts.reached
        period.passed += counts.passed
        declared_work = counts.reached * self._w_in + counts.passed * self._w_out
        if self._first_batch is None:
            self._first_batch = record.batch_id
            self._warm_s = timing.output_s
        reads = self._branch_reads(measures.read_s)
        self._last_work = LastWork(record.batch_id, declared_work, counts.reached.copy(), reads)
        node_work = declared_work * self._scale
        work = float(node_work.sum())
        seconds = timing.output_s - timing.started_s
        cycle = seconds
        busy = np.bincount(self._owner, weights=node_work * self.alpha, minlength=len(self.names))
        # the tuples of this batch arrived while the last one ran: its overrun gave no
        # capacity (read before this batch's update replaces it)
        stalled_s = self.budget.overrun_s
        self.budget.update(work, cycle)
        self._offer(record, np.bincount(self._owner, node_work, len(self.names)), window_s)
        if not (self.options.plain or self.options.fixed_pace):
            self._repace(
                [n for n in self.names if period.arrived[n] > 0 or self._waiting(record, n) > 0]
            )
        for k, name in enumerate(self.names):
            period.busy_s[name] += float(busy[k])
        # capacity is one capacity-second per second: what the batch left unused is idle,
        # but not the time the last batch stalled beyond its model
        period.idle_s += max(0.0, window_s - down_s - stalled_s - float(busy.sum()))
        t_s = timing.output_s - record.end.origin_us / 1e6
        if self.phase == "warmup":
            self._period = self._new_period()
            if t_s < self.options.warmup_s:
                return None if self.options.plain else StepOutcome(self._held_decision(), [])
            self.phase = "discarding"
            self.budget.settle()
            decision = self._held_decision()
            log.info("warm-up over at %.1f s: discarding what waits", t_s)
            return StepOutcome(dataclasses.replace(decision, discard=True), [])
        if self.phase == "discarding":
            self._period = self._new_period()
            self.phase = "running"
            self.measured_from_s = record.end.t_us / 1e6 - record.end.origin_us / 1e6
            return None if self.options.plain else StepOutcome(self._held_decision(), [])
        if self.options.plain:
            self._record_plain(record, t_s, seconds)
            return self._plain_ranges_step()
        return self._step_now(record, timing, t_s)

    def _count_admission(self, record: BatchRecord, counts: NodeCounts, period: _Period) -> None:
        """What each class's points (from the offsets) and shedding edges (from the
        counts) took in, kept and shed in the batch, into ``period``."""
        for p in self.plan.points:
            d = record.delta(p.index)
            period.arrived[p.class_name] += d.arrived
            period.processed[p.class_name] += d.kept
            period.shed[p.class_name] += d.shed
            period.stale[p.class_name] += d.stale
            period.point_arrived[p.index] += d.arrived
            period.point_shed[p.index] += d.shed
        for name, nodes in self._edge_points.items():
            for i in nodes:
                shed_i = int(counts.shed[i])
                period.arrived[name] += int(counts.reached[i]) + shed_i
                period.processed[name] += int(counts.reached[i])
                period.shed[name] += shed_i
                period.edge_shed[i] = period.edge_shed.get(i, 0) + shed_i

    def _branch_reads(self, read_s: Mapping[int, float]) -> dict[int, float]:
        """A batch's source read seconds (by the node each scan fed) per branch (output
        node), also added to the run's :attr:`source_read_s`."""
        reads: dict[int, float] = {}
        for node, seconds in read_s.items():
            branch = self._read_branch.get(node)
            if branch is not None:
                reads[branch] = reads.get(branch, 0.0) + seconds
        for branch, seconds in reads.items():
            self.source_read_s[branch] = self.source_read_s.get(branch, 0.0) + seconds
        return reads

    def on_task_times(
        self, batch_id: int, task_s: Mapping[int, float], unattributed_s: float
    ) -> None:
        """Spark's executor seconds of batch ``batch_id``'s tasks per query output node
        (:mod:`task_times`), read after the step on that batch so that the read is off
        the control path: the branches' scales learn from them, paired with that batch's
        declared work, for the next steps. Not from the run's first batch (it pays for
        JIT compilation and the Python workers' start), nor from another batch than the
        last one stepped on."""
        with self._step_lock:
            self.unattributed_task_s += unattributed_s
            last = self._last_work
            if not (self.options.measured_costs and task_s and last and last.batch_id == batch_id):
                return
            if batch_id == self._first_batch:
                return
            # a branch's time: its tasks' executor CPU and its sources' reading (Python)
            measured = {o: s + last.read_s.get(o, 0.0) for o, s in task_s.items()}
            self.scales.update(last.work.tolist(), last.tuples.tolist(), measured)
            self._scale = np.array(self.scales.node_scales(len(self.plan.nodes)))

    def _record_plain(self, record: BatchRecord, t_s: float, batch_s: float) -> None:
        period, self._period = self._period, self._new_period()
        dout = self._expected_outputs()
        warmup = self.warming_up(record)
        classes: dict[str, Any] = {}
        for name in self.names:
            rt = period.response[name]
            stats = period_stats(rt, self.targets[name])
            self._add_totals(name, period, rt, dout, warmup)
            classes[name] = {
                "mean_response_time_s": rounded(stats.mean_s),
                "max_response_time_s": rounded(stats.max_s),
                "p95_response_time_s": rounded(stats.p95_s),
                "outputs": stats.count,
                "arrival_rate_per_s": rounded(period.arrived[name] / period.window_s),
                "headroom": None,
                "queue_length": self._waiting(record, name),
                "admitted": period.processed[name],
                "shed_count": period.shed[name],
            }
        self.idle_s += period.idle_s
        self.series.append(
            {
                "t_s": rounded(t_s),
                "batch": record.batch_id,
                "batch_s": rounded(batch_s),
                "classes": classes,
            }
        )

    def floor_s(self) -> float:
        """The least response time at this pace (:func:`pacing.floor_s`), at the speed
        the machine runs now (a class whose target a slower machine has just put out of
        reach is infeasible at once)."""
        return floor_s(self.pace_s, self.budget.fixed_now_s, self.options.target_utilization)

    def warming_up(self, record: BatchRecord) -> bool:
        """Whether ``record``'s batch is a warm-up one: it started before the process's
        first batch committed, so its tuples waited through that batch, which pays for
        Spark's start (JIT compilation, the Python workers): its first batch and the one
        that serves what arrived meanwhile."""
        return self._warm_s is not None and record.start.t_us / 1e6 < self._warm_s

    def _waiting(self, record: BatchRecord, name: str) -> int:
        return sum(
            record.end.points[p.index].waiting for p in self.plan.points if p.class_name == name
        )

    def _step_now(self, record: BatchRecord, timing: BatchTiming, t_s: float) -> StepOutcome:
        period, self._period = self._period, self._new_period()
        plan = self.plan
        dt = period.window_s
        assert period.reached is not None and period.passed is not None
        seen = period.reached > 0
        self._sel[seen] = period.passed[seen] / period.reached[seen]
        ids = plan.graph.ids
        self._push_costs()
        shed_in_force = {n: record.decision.shed.get(n, 0.0) for n in self.names}
        warmup = self.warming_up(record)
        periods = self._class_periods(record, period, warmup)
        outcome = self.loop.step(
            dt,
            periods,
            # the processor time the classes had, whoever used it
            machine_s=sum(period.busy_s.values()) + period.idle_s,
            down_s=period.down_s,
            # Tuples wait in the log *before* their class sheds (the source drops its share as
            # they leave it), so the work a queue holds — what a tuple admitted now waits
            # behind, Eq. 4.1's qL — is its length times the share that will be kept. (In the
            # simulator shedding comes first and its queues hold only admitted tuples.)
            selectivities={ids[i]: float(self._sel[i]) for i in np.flatnonzero(seen)},
            source_rates={p.op_id: period.point_arrived[p.index] / dt for p in plan.points},
            queue_lengths={
                p.op_id: record.end.points[p.index].waiting * (1.0 - shed_in_force[p.class_name])
                for p in plan.points
            },
            shed_fractions=shed_in_force,
        )
        result = outcome.result
        self._quotas = dict(result.quotas)
        self._step += 1
        self._decision_version += 1
        shed = self._scale_pool(t_s, outcome)
        decision = self._decision(
            shed, result.quotas, spared_queues(result.shed, shed, result.stale)
        )
        actions = self.action_log.observe(
            t_s,
            periods,
            Managed.of(outcome),
            decision.shed,
            self.executors if self.elastic is not None else None,
            self.elastic.last_action if self.elastic is not None else None,
        )
        if result.redistributed:
            self.redistributions.append({"t_s": rounded(t_s), **result.details})
        self.idle_s += period.idle_s
        samples, classes = self._record_classes(
            record, period, timing, outcome, periods, decision, warmup
        )
        self.series.append(
            self._series_entry(record, period, timing, t_s, decision, warmup, classes)
        )
        return StepOutcome(decision, samples, result.redistributed, actions)

    def _record_classes(
        self,
        record: BatchRecord,
        period: _Period,
        timing: BatchTiming,
        outcome: PeriodOutcome,
        periods: Mapping[str, ClassPeriod],
        decision: Decision,
        warmup: bool,
    ) -> tuple[list[MetricSample], dict[str, Any]]:
        """The period's metric sample and results entry of every class; its totals."""
        dt = period.window_s
        samples: list[MetricSample] = []
        classes: dict[str, Any] = {}
        dout = self._expected_outputs()
        oracle_shed = recent_shed_s(self.loop.oracle)
        for name in self.names:
            rt = period.response[name]
            offered = outcome.observations[name].load * dt
            stats = period_stats(rt, self.targets[name])
            waiting = self._waiting(record, name)
            self._add_totals(name, period, rt, dout, warmup)
            classes[name] = {
                **class_sample(name, dt, periods[name], outcome),
                "mean_response_time_s": rounded(stats.mean_s),
                "max_response_time_s": rounded(stats.max_s),
                "p95_response_time_s": rounded(stats.p95_s),
                "queue_length": waiting,
                "admitted": period.processed[name],
                "shed_count": period.shed[name],
                "violation_mean_s": rounded(stats.violation_mean_s),
                "applied_shed_fraction": rounded(decision.shed[name]),
            }
            samples.append(
                self._metric_sample(
                    name,
                    period,
                    outcome,
                    stats,
                    waiting,
                    timing.output_s,
                    warmup,
                    oracle_shed[name] / offered if offered > 0 else 0.0,
                )
            )
        return samples, classes

    def _series_entry(
        self,
        record: BatchRecord,
        period: _Period,
        timing: BatchTiming,
        t_s: float,
        decision: Decision,
        warmup: bool,
        classes: dict[str, Any],
    ) -> dict[str, Any]:
        """The results file's entry of the period: the batch, the budget, the pool and
        every class's figures (``classes``)."""
        return {
            "t_s": rounded(t_s),
            "batch": record.batch_id,
            "warmup": warmup,
            "background_share": rounded(self.background.rate_at(t_s)),
            "idle_s": rounded(period.idle_s),
            "budget_s": rounded(decision.budget_s),
            "budget_weight_s": rounded(self.budget.budget_s),
            "fixed_s": rounded(self.budget.fixed_s),
            "pace_s": rounded(self.pace_s),
            "slowdown": rounded(self.budget.slowdown),
            "stall": rounded(self.budget.stall),
            "batch_s": rounded(timing.output_s - timing.started_s),
            "config_version": self.config_version,
            **(self.elastic.sample(self.executors) if self.elastic is not None else {}),
            "classes": classes,
        }

    def _class_periods(
        self, record: BatchRecord, period: _Period, warmup: bool
    ) -> dict[str, ClassPeriod]:
        """What each class did in the period, with the floors it is judged by."""
        dt = period.window_s
        # a warm-up batch times Spark's start (JIT compilation, workers starting), not the
        # engine's floor: no class is judged infeasible on it (a start's backlog is then
        # shed stale first, not served late as an infeasible class's), and the oracle
        # judges its tuples against their target alone (it sheds the ones past it)
        floor = None if warmup else self.floor_s()
        # the flag reports what the class's own query can do on this machine, so its floor
        # takes the fixed time's running estimate, not one slow stretch's (the hold above
        # follows the machine now)
        mean_floor = (
            None if warmup else mean_floor_s(self.budget.fixed_s, self.options.target_utilization)
        )
        oracle_floor = 0.0 if warmup else bare_floor_s(self.pace_s, self.budget.fixed_now_s)
        return {
            name: ClassPeriod(
                arrived=period.arrived[name],
                processed=period.processed[name],
                shed=period.shed[name],
                outputs=period.response[name].count,
                response_sum_s=period.response[name].sum_s,
                response_max_s=period.response[name].max_s,
                busy_s=period.busy_s[name],
                floor_s=floor,
                mean_floor_s=mean_floor,
                oracle_floor_s=oracle_floor,
                stale_shed=period.stale[name],
                stale_first=name in record.decision.stale_max,
                slowdown=self.budget.slowdown,
                stall=self.budget.stall,
                idle_load=period.idle_s / dt,
                busy_load=period.busy_s[name] / dt,
            )
            for name in self.names
        }

    def _metric_sample(
        self,
        name: str,
        period: _Period,
        outcome: PeriodOutcome,
        stats: PeriodStats,
        waiting: int,
        t_out: float,
        warmup: bool,
        oracle_shed_fraction: float,
    ) -> MetricSample:
        """The class's sample of the period for the control plane (``oracle_shed_fraction``:
        of the work it was offered in the period, what the oracle shed in it)."""
        dt = period.window_s
        first, step = self.options.numbering
        result = outcome.result
        obs = outcome.observations[name]
        d = result.decisions[name]
        headroom = result.headrooms[name]
        elastic = self.elastic
        return MetricSample(
            class_name=name,
            seq=min(first + step * (self._step - 1), INT32_MAX),
            t=t_out,
            period_s=dt,
            arrived_count=min(period.arrived[name], INT32_MAX),
            output_count=min(stats.count, INT32_MAX),
            arrival_rate=period.arrived[name] / dt,
            response_time_mean_s=stats.mean_s,
            response_time_max_s=stats.max_s,
            response_time_p50_s=stats.p50_s,
            response_time_p95_s=stats.p95_s,
            response_time_p99_s=stats.p99_s,
            violation_mean_s=stats.violation_mean_s,
            violation_max_s=stats.violation_max_s,
            admitted_count=min(period.processed[name], INT32_MAX),
            shed_count=min(period.shed[name], INT32_MAX),
            waiting_count=min(waiting, INT32_MAX),
            load=_finite(obs.load),
            capacity_share=min(max(result.quotas[name], 0.0), 1.0),
            headroom=_finite(headroom),
            capacity_usage=_finite(obs.load / headroom) if headroom else None,
            shed_fraction=min(max(result.shed[name], 0.0), 1.0),
            oracle_shed_fraction=min(oracle_shed_fraction, 1.0),
            floor_s=obs.feasibility_floor_s,
            manager=d.kind[:20],
            manager_state=str(d.state)[:20],
            redistributed=result.redistributed,
            config_version=self.config_version,
            warmup=warmup,
            executors=self.executors if elastic is not None else None,
            executors_requested=elastic.target if elastic is not None else None,
            job_usage=_finite(elastic.usage) if elastic is not None else None,
        )

    def _scale_pool(self, t_s: float, outcome: PeriodOutcome) -> dict[str, float]:
        """The shed fractions to apply: the managers', bounded by the elastic policy to
        what scaling cannot cover (whose step may resize the pool: the runner's follows
        ``elastic.target``)."""
        result = outcome.result
        if self.elastic is None:
            return dict(result.shed)
        return self.elastic.step(
            t_s,
            {n: o.load for n, o in outcome.observations.items()},
            self.capacity(),
            self.executors,
            self.free_executors,
            result.shed,
            priority_order(self.control.priorities()),
        )

    # --- results -----------------------------------------------------------------------

    def _add_totals(
        self,
        name: str,
        period: _Period,
        rt: ResponseSample,
        dout: Sequence[Sequence[float]],
        warmup: bool,
    ) -> None:
        """Run totals; ``dout``: per node, expected outputs per class of one tuple entering.
        A warm-up batch's answers (:meth:`warming_up`) count as outputs but stay out of the
        response times, as the history's summary leaves them out: they time Spark's start."""
        tot = self.totals[name]
        tot.arrived += period.arrived[name]
        tot.shed += period.shed[name]
        tot.outputs += rt.count
        if not warmup:
            self.digests[name].add(rt, self.targets[name])
        k = self.names.index(name)
        for p in self.plan.points:
            tot.offered_outputs += period.point_arrived[p.index] * dout[p.node][k]
            tot.lost_outputs += period.point_shed[p.index] * dout[p.node][k]
        for i, shed in period.edge_shed.items():
            tot.lost_outputs += shed * dout[i][k]

    def _expected_outputs(self) -> list[list[float]]:
        """Per node, the output tuples per class one tuple entering it yields (measured)."""
        plan, k_count = self.plan, len(self.names)
        dout = [[0.0] * k_count for _ in plan.nodes]
        for i in reversed(plan.graph.order):
            acc = [0.0] * k_count
            node = plan.nodes[i]
            sel = float(self._sel[i])
            if node.output is not None:
                acc[self.names.index(node.output[0])] += sel
            for j in plan.graph.children[i]:
                for k in range(k_count):
                    acc[k] += sel * dout[j][k]
            dout[i] = acc
        return dout

    def class_summaries(self) -> dict[str, ClassTotals]:
        """Run totals per class, with the response-time digest folded in."""
        oracle = self.loop.oracle.losses()
        for name, tot in self.totals.items():
            dig = self.digests[name]
            tot.timed_outputs = dig.count
            tot.response_sum_s = dig.sum_s
            tot.response_max_s = dig.max_s
            tot.violation_sum_s = dig.violation_sum_s
            tot.violation_max_s = dig.violation_max_s
            tot.histogram = dig.histogram.tolist()
            tot.oracle_loss = oracle[name].loss_fraction
        return self.totals

    def backlog(self) -> tuple[dict[str, int], dict[str, float]]:
        """Tuples still waiting per class at the last batch, and the oldest one's age (s)."""
        record = self.last_record
        if record is None:
            return {n: 0 for n in self.names}, {n: 0.0 for n in self.names}
        now_s = record.end.t_us / 1e6
        tuples: dict[str, int] = {}
        ages: dict[str, float] = {}
        for name in self.names:
            points = [p for p in self.plan.points if p.class_name == name]
            tuples[name] = sum(record.end.points[p.index].waiting for p in points)
            waiting_heads = [
                record.end.points[p.index].head_s
                for p in points
                if record.end.points[p.index].waiting > 0
            ]
            ages[name] = max(0.0, now_s - min(waiting_heads)) if waiting_heads else 0.0
        return tuples, ages


def _expected_load(scenario: Scenario) -> float:
    """Processor seconds per second the scenario's declared rates at its start take at its
    declared costs (what ESJ's initial size reads: :func:`sized_at_start`)."""
    rates = {name: spec.rates[0] for name, spec in stream_specs(scenario).items()}
    return expected_load(build_network(scenario), rates)


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return max(0.0, value)

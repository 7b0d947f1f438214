"""A Spark-free stand-in for the engine, in simulated time, for testing the control loop.

Each batch starts one pace after the last (the decision's): the real source logic
(:func:`feed.next_offset` on the generated log) admits tuples by the controller's
decision; the batch "runs" for ``overhead_s + alpha × Σ map costs`` seconds (the maps'
true costs, ``true_cost_s`` by class where a declared cost is wrong; each query's executor
time is reported as Spark's status store would, per output); every kept
tuple of a one-map query is an output at the end of the batch, measured as the
dataflow's ``observe`` operators would report it; the real :class:`EngineController`
takes it from there. Nothing sleeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spark_runner.contract.control import LiveConfig
from spark_runner.engine.control.controller import (
    BatchTiming,
    ControllerOptions,
    EngineController,
    StepOutcome,
)
from spark_runner.engine.dataflow.network import compile_network, stream_specs
from spark_runner.engine.measure.measures import ArrivalSummary, BatchMeasures, NodeCounts
from spark_runner.engine.sources.feed import (
    FeedPoint,
    FeedSpec,
    GeneratedLog,
    initial_offset,
    next_offset,
    plan_partitions,
)
from spark_runner.engine.sources.offsets import BatchRecord, Decision, SourceOffset
from spark_runner.scenario import Scenario, parse_scenario
from spark_runner.scenario.models import MapOp

ORIGIN_US = 1_800_000_000_000_000


def one_map_scenario(
    rates: dict[str, float],
    targets: dict[str, float],
    cost_s: float,
    period_s: float = 1.0,
    mode: str = "dilos",
    declared_s: dict[str, float] | None = None,
    elastic: str = "",
) -> Scenario:
    """Three classes (priorities 6/3/1), one map each; ``declared_s`` overrides ``cost_s``
    by class; ``elastic``: the control's elastic parameters (a YAML mapping)."""
    costs = {n: (declared_s or {}).get(n, cost_s) for n in rates}
    priorities = [6, 3, 1]
    streams = "\n".join(
        f"  - {{name: s_{n}, arrival: {{kind: constant, rate_per_s: {r}}}}}"
        for n, r in rates.items()
    )
    classes = "\n".join(
        f"""  - name: {n}
    priority: {priorities[i]}
    delay_target_s: {targets[n]}
    manager: {{kind: aloma, params: {{max_shed: 0.99}}}}
    queries:
      - name: q
        source: s_{n}
        operators:
          - {{kind: map, expression: "value", output: v, cpu_cost_per_tuple_s: {costs[n]}}}"""
        for i, n in enumerate(rates)
    )
    elastic_part = f", elastic: {{params: {elastic}}}" if elastic else ""
    return parse_scenario(
        f"""
version: 1
name: plant
seed: 1
duration_s: 1000
control: {{period_s: {period_s}, mode: {mode}{elastic_part}}}
streams:
{streams}
classes:
{classes}
"""
    )


@dataclass
class Plant:
    scenario: Scenario
    tmp: Path
    overhead_s: float = 0.3
    alpha: float = 0.5
    options: ControllerOptions = field(default_factory=ControllerOptions)
    live: LiveConfig | None = None
    true_cost_s: dict[str, float] = field(default_factory=dict)
    executors: int = 1
    """Executors serving: a batch's work runs ``executors`` times as fast (an elastic
    scenario's pool, which follows the controller's policy)."""
    cluster: int = 8
    startup_s: float = 5.0
    """How long a requested executor takes to serve."""
    stalls: dict[int, float] = field(default_factory=dict)
    """Batch id → seconds its cycle stalls beyond its work (another process took the
    machine, a Python worker started)."""
    backlog_s: float = 0.0
    """The streams flowed this long before the engine started."""
    read_cost_s: float = 0.0
    """Seconds a tuple takes in its source's reader (a Python worker: not in the executors'
    CPU Spark reports); the reader reports it in the batch's measures when
    ``reads_reported``."""
    reads_reported: bool = True

    def __post_init__(self) -> None:
        self.plan = compile_network(self.scenario)
        self.spec = FeedSpec(
            kind="generator",
            backlog_us=round(self.backlog_s * 1e6),
            points=tuple(FeedPoint(p.op_id, p.class_name, p.stream) for p in self.plan.points),
            streams=stream_specs(self.scenario),
            decision_path=str(self.tmp / "decision.json"),
        )
        self.log = GeneratedLog(self.spec, ORIGIN_US)
        self.period_s = self.scenario.control.period_s
        self.controller = EngineController(self.plan, self.options, self.live)
        self.decision: Decision = self.controller.initial_decision()
        self.now_us = ORIGIN_US + round(self.backlog_s * 1e6)
        self.offset: SourceOffset = initial_offset(self.spec, self.log, self.now_us)
        self.batch_id = 0
        self.outcomes: list[StepOutcome] = []
        self.pool: list[int] = []  # executors serving, per batch
        self._ready_us: int | None = None
        self._cost = np.zeros(len(self.plan.nodes))
        for n in self.plan.nodes:
            if isinstance(n.model, MapOp):
                self._cost[n.index] = self.true_cost_s.get(n.owner, n.model.cpu_cost_per_tuple_s)
        self._output = {
            p.index: next(r.child for r in self.plan.nodes[p.node].routes) for p in self.plan.points
        }

    def run(self, periods: int) -> list[StepOutcome]:
        for _ in range(periods):
            self.step()
        return self.outcomes

    def step(self) -> StepOutcome | None:
        """One batch, started one pace (the decision's, else the period) after the last."""
        pace_s = self.decision.pace_s or self.period_s
        self.now_us += round(pace_s * 1e6)
        end = next_offset(self.spec, self.log, self.offset, self.decision, self.now_us)
        # the first batch's window reaches back to the origin, as the runner records it
        record = BatchRecord(
            self.batch_id, end.run_start() if self.batch_id == 0 else self.offset, end
        )
        n_nodes = len(self.plan.nodes)
        reached = np.zeros(n_nodes, dtype=np.int64)
        arrivals: dict[str, list[np.ndarray]] = {}
        for group in plan_partitions(self.spec, self.offset, end, self.decision.costs_s):
            for piece in group:
                rows = self.log.rows(piece)
                point = self.plan.points[piece.point]
                reached[self.plan.points[piece.point].node] += len(rows["seq"])
                reached[self._output[piece.point]] += len(rows["seq"])
                arrivals.setdefault(point.class_name, []).append(
                    rows["arrival_s"] - ORIGIN_US / 1e6
                )
        node_work = self._cost * reached
        points = [p.node for p in self.plan.points]
        read_s = {self._output[i]: self.read_cost_s * reached[n] for i, n in enumerate(points)}
        work = float(node_work.sum()) + sum(read_s.values())
        started_s = self.now_us / 1e6
        self._follow_pool()
        cycle_s = self.overhead_s + self.alpha * work / self.executors
        cycle_s += self.stalls.get(self.batch_id, 0.0)
        answers = {}
        for name, parts in arrivals.items():
            summary = ArrivalSummary.of(np.concatenate(parts))
            if summary is not None:
                answers[name] = [summary]
        measures = BatchMeasures(
            NodeCounts(reached=reached, passed=reached.copy(), shed=np.zeros(n_nodes, np.int64)),
            answers,
            ORIGIN_US / 1e6,
            read_s if self.reads_reported else {},
        )
        outcome = self.controller.on_batch(
            record, measures, BatchTiming(started_s, started_s + cycle_s)
        )
        task_s = {n.index: float(node_work[n.index]) for n in self.plan.outputs}
        self.controller.on_task_times(self.batch_id, task_s, 0.0)
        self.offset = end
        self.batch_id += 1
        # a batch longer than the pace delays the next one
        self.now_us += max(0, round((cycle_s - pace_s) * 1e6))
        if outcome is not None:
            self.decision = outcome.decision
            self.outcomes.append(outcome)
        return outcome

    def _follow_pool(self) -> None:
        """The pool follows the controller's elastic policy: a release at once, new
        executors ``startup_s`` after they were asked for; the controller is told."""
        policy = self.controller.elastic
        if policy is None:
            return
        if policy.target < self.executors:
            self.executors, self._ready_us = policy.target, None
        elif policy.target > self.executors and self._ready_us is None:
            self._ready_us = self.now_us + round(self.startup_s * 1e6)
        if self._ready_us is not None and self.now_us >= self._ready_us:
            self.executors, self._ready_us = policy.target, None
        self.controller.pool_state(self.executors, self.cluster - self.executors)
        self.pool.append(self.executors)

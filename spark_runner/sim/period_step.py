"""The simulator's control step, once per control period: measure, decide, apply, record.

- **measure**: one :class:`ClassPeriod` per class and the operators' costs,
  selectivities, source rates and queue lengths from the period's counters;
- **decide**: the shared per-period loop (:class:`PeriodLoop`: load model, control plane,
  oracle), then the executor pool, if the scenario scales;
- **apply**: shed fractions and stale rules to the admission, quotas to the scheduler,
  executors to the clock;
- **record**: the period's sample and the run's totals; the counters start again.
"""

from __future__ import annotations

import math
from typing import Any

from spark_runner.control.actions import ActionLog, Managed
from spark_runner.control.elastic import PoolControl
from spark_runner.control.period import (
    ClassPeriod,
    PeriodLoop,
    PeriodOutcome,
    class_sample,
    rounded,
)
from spark_runner.core.elastic import spared_queues
from spark_runner.scenario.models import Engine
from spark_runner.sim.admission import Admission
from spark_runner.sim.clock import Clock
from spark_runner.sim.scheduler import Scheduler


class PeriodStep:
    """``step(at, dt)``: the control step closing the period of ``dt`` seconds ending at
    ``at`` (see the module docstring)."""

    def __init__(
        self,
        loop: PeriodLoop,
        admission: Admission,
        scheduler: Scheduler,
        clock: Clock,
        pool: PoolControl | None,
        action_log: ActionLog,
        engine: Engine,
    ) -> None:
        self.loop, self.admission, self.scheduler, self.clock = loop, admission, scheduler, clock
        self.pool, self.action_log, self.engine = pool, action_log, engine
        self.topo, self.counters = admission.topo, admission.counters
        # the floor (response time of a lone tuple): an arrival tick, a scheduler round
        # waiting for its class's turn, and its most expensive path at the current speed
        self.floor_wait = engine.tick_s + engine.scheduler_round_s
        self.series: list[dict[str, Any]] = []
        self.redistributions: list[dict[str, Any]] = []

    def __call__(self, at: float, dt: float) -> None:
        periods = self._class_periods(dt)
        outcome = self._measure_and_decide(dt, periods)
        self.add_totals()
        shed = self._scale(at, outcome)
        self.action_log.observe(
            at,
            periods,
            Managed.of(outcome),
            shed,
            self.clock.executors if self.pool is not None else None,
            self.pool.last_action if self.pool is not None else None,
        )
        self._apply(at, dt, outcome, shed)
        self._record(at, dt, periods, outcome)
        self.counters.reset()

    def _class_periods(self, dt: float) -> dict[str, ClassPeriod]:
        c, topo, clock = self.counters, self.topo, self.clock
        return {
            name: ClassPeriod(
                arrived=c.arrived[k],
                processed=sum(c.n_in[i] for i in topo.shed_points[k]),
                shed=c.shed[k],
                outputs=c.outputs[k],
                response_sum_s=c.rt_sum[k],
                response_max_s=c.rt_max[k],
                busy_s=c.class_busy[k],
                floor_s=self.floor_wait + topo.floor_work[k] * clock.executors / clock.speed,
                stale_shed=c.stale[k],
                stale_first=self.admission.stale[k] is not None,
                idle_load=c.idle / dt,
                busy_load=c.class_busy[k] / dt,
            )
            for k, name in enumerate(topo.names)
        }

    def _measure_and_decide(self, dt: float, periods: dict[str, ClassPeriod]) -> PeriodOutcome:
        c, topo = self.counters, self.topo
        costs: dict[str, float] = {}
        sels: dict[str, float] = {}
        for i in topo.nodes:
            n_in = c.n_in[i]
            if n_in > 0:
                costs[topo.op_ids[i]] = c.busy[i] / n_in
                sels[topo.op_ids[i]] = c.n_out[i] / n_in
        hidden = 1.0 + self.engine.hidden_overhead_fraction
        avail_s = c.idle * (1.0 - self.clock.share) / hidden
        return self.loop.step(
            dt,
            periods,
            # the processor time the classes had, whoever used it
            machine_s=sum(c.class_busy) + avail_s,
            costs=costs,
            selectivities=sels,
            source_rates={topo.op_ids[j]: c.src[j] / dt for j in topo.sources},
            queue_lengths={topo.op_ids[i]: float(self.admission.work.qn[i]) for i in topo.nodes},
            shed_fractions={
                name: 1.0 - self.admission.keep[k] for k, name in enumerate(topo.names)
            },
        )

    def add_totals(self) -> None:
        """Add the period's counts to the run's totals (a last period shorter than the
        control period is added this way too, without a step)."""
        c = self.counters
        for k, tot in enumerate(self.admission.accounts.totals):
            tot.arrived += c.arrived[k]
            tot.shed += c.shed[k]
            tot.outputs += c.outputs[k]
            tot.response_sum_s += c.rt_sum[k]
            if c.outputs[k] and c.rt_max[k] > tot.response_max_s:
                tot.response_max_s = c.rt_max[k]

    def _scale(self, at: float, outcome: PeriodOutcome) -> dict[str, float]:
        """The shed fractions after the executor pool's say (it may add capacity instead)."""
        shed = dict(outcome.result.shed)
        pool, clock = self.pool, self.clock
        if pool is None:
            return shed
        return pool.step(
            at,
            {n: o.load for n, o in outcome.observations.items()},
            clock.speed,
            clock.executors,
            pool.limit - clock.executors,
            shed,
            [self.topo.names[k] for k in self.scheduler.order],
        )

    def _apply(self, at: float, dt: float, outcome: PeriodOutcome, shed: dict[str, float]) -> None:
        pool, clock, result = self.pool, self.clock, outcome.result
        if pool is not None:
            if pool.target < clock.executors:  # released at once
                clock.resize(pool.target)
            elif pool.target > clock.executors and math.isinf(clock.ready_at):
                clock.ready_at = at + self.engine.executor_startup_s
        self.admission.plan(shed, spared_queues(result.shed, shed, result.stale), dt, at)
        self.scheduler.set_quotas(result.quotas)
        if result.redistributed:
            self.redistributions.append({"t_s": round(at, 6), **result.details})

    def _record(
        self, at: float, dt: float, periods: dict[str, ClassPeriod], outcome: PeriodOutcome
    ) -> None:
        c = self.counters
        classes: dict[str, Any] = {}
        for k, name in enumerate(self.topo.names):
            classes[name] = {
                **class_sample(name, dt, periods[name], outcome),
                "mean_violation_s": rounded(c.viol_sum[k] / c.outputs[k]) if c.outputs[k] else None,
                "shed_count": c.shed[k],
                "stale_shed_count": c.stale[k],
                "expired_shed_count": c.expired[k],
                "queue_length": int(outcome.observations[name].queue_length),
                "unwanted_busy_s": rounded(c.free[k]),
                "repaid_busy_s": rounded(c.repaid[k]),
                "longest_turn_s": rounded(c.turn_max[k]),
            }
        self.series.append(
            {
                "t_s": rounded(at),
                "background_share": rounded(self.clock.share),
                "idle_s": rounded(c.idle),
                **(self.pool.sample(self.clock.executors) if self.pool is not None else {}),
                "classes": classes,
            }
        )

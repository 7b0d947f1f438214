"""A tiny fluid FIFO queue plant for closed-loop tests, in simulated time.

One class = one FIFO server. Arrivals come at ``rate`` tuples/s; the shedder drops a
fraction ``s`` of them; every admitted tuple needs ``cost_s`` seconds of work; the server
does ``capacity`` seconds of work per second (its true headroom, s/s). Each period is cut
into ``substeps`` slices; the arrivals of a slice form one chunk that waits behind the
work already queued. A tuple's response time is its completion instant minus its arrival
instant plus ``base_latency_s`` (fixed processing/batching latency). Outputs are counted
in the period in which they complete, so the measured response time lags like a real
system's. No clock, no randomness.

``cost_visible`` decides what the load monitor measures when the capacity changes:
``False`` (hidden) keeps the measured cost at ``cost_s`` — the thesis's background-job
case where only the headroom changes; ``True`` scales the measured cost by
``nominal_capacity / capacity`` — a wall-clock cost that inflates under contention.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from spark_runner.core.observation import Observation, ResponseTimeStats


@dataclass
class _Chunk:
    arrival_s: float
    tuples: float
    work_s: float


@dataclass
class FluidPlant:
    capacity: float = 0.9
    cost_s: float = 0.001
    base_latency_s: float = 0.05
    substeps: int = 10
    cost_visible: bool = False
    nominal_capacity: float = 0.9
    now_s: float = 0.0
    _queue: deque[_Chunk] = field(default_factory=deque)
    # totals for loss/violation accounting
    arrived_total: float = 0.0
    shed_total: float = 0.0
    output_total: float = 0.0
    violation_sum_s: float = 0.0

    @property
    def backlog_s(self) -> float:
        return sum(c.work_s for c in self._queue)

    @property
    def queued_tuples(self) -> float:
        return sum(c.tuples for c in self._queue)

    def measured_cost_s(self) -> float:
        if self.cost_visible:
            return self.cost_s * self.nominal_capacity / self.capacity
        return self.cost_s

    def run_period(
        self, rate_per_s: float, shed_fraction: float, period_s: float, delay_target_s: float = 0.0
    ) -> Observation:
        """Advance one control period; return what the load/response monitors would see."""
        dt = period_s / self.substeps
        rts: list[tuple[float, float]] = []  # (response time, tuples)
        arrived = rate_per_s * period_s
        admitted_tuples = 0.0
        for _ in range(self.substeps):
            n = rate_per_s * dt
            admitted = n * (1.0 - shed_fraction)
            admitted_tuples += admitted
            if admitted > 0:
                self._queue.append(_Chunk(self.now_s + dt / 2, admitted, admitted * self.cost_s))
            budget = self.capacity * dt
            t = self.now_s
            while self._queue and budget > 0:
                head = self._queue[0]
                if head.work_s <= budget:
                    t += head.work_s / self.capacity
                    budget -= head.work_s
                    rts.append((max(t - head.arrival_s, 0.0) + self.base_latency_s, head.tuples))
                    self._queue.popleft()
                else:  # the served share of the chunk completes now
                    done = budget / head.work_s
                    t += budget / self.capacity
                    rts.append(
                        (max(t - head.arrival_s, 0.0) + self.base_latency_s, head.tuples * done)
                    )
                    head.work_s -= budget
                    head.tuples *= 1.0 - done
                    budget = 0.0
            self.now_s += dt
        out = sum(w for _, w in rts)
        self.arrived_total += arrived
        self.shed_total += arrived - admitted_tuples
        self.output_total += out
        if rts and out > 0:
            mean = sum(r * w for r, w in rts) / out
            worst = max(r for r, _ in rts)
            stats = ResponseTimeStats(mean_s=mean, max_s=worst, count=max(1, round(out)))
            if delay_target_s > 0:
                self.violation_sum_s += sum(max(0.0, r - delay_target_s) * w for r, w in rts)
        else:
            stats = ResponseTimeStats()
        cost = self.measured_cost_s()
        return Observation(
            period_s=period_s,
            load=rate_per_s * cost,
            arrival_rate_per_s=rate_per_s,
            response_time=stats,
            queue_length=self.queued_tuples,
            queued_load_s=self.backlog_s * cost / self.cost_s,
            arrived_count=round(arrived),
            processed_count=round(out),
            shed_count=round(arrived - admitted_tuples),
            cost_per_tuple_s=cost,
        )

    @property
    def loss_fraction(self) -> float:
        return self.shed_total / self.arrived_total if self.arrived_total else 0.0

    @property
    def mean_violation_s(self) -> float:
        return self.violation_sum_s / self.output_total if self.output_total else 0.0


@dataclass
class QuotaPlant:
    """Several classes on one processor split by strict time quotas (no implicit sharing).

    Class k processes ``quota_k × total_capacity`` seconds of work per second; a quota it
    leaves unused is lost (a scheduler that strictly fixes the CPU split, 001 §6.2.2). Each
    class is a :class:`FluidPlant`.
    """

    total_capacity: float
    classes: dict[str, FluidPlant]

    @classmethod
    def build(
        cls,
        total_capacity: float,
        quotas: dict[str, float],
        cost_s: float = 0.001,
        base_latency_s: float = 0.01,
    ) -> QuotaPlant:
        plants = {
            name: FluidPlant(
                capacity=q * total_capacity,
                cost_s=cost_s,
                base_latency_s=base_latency_s,
                nominal_capacity=q * total_capacity,
            )
            for name, q in quotas.items()
        }
        return cls(total_capacity, plants)

    def set_quotas(self, quotas: dict[str, float]) -> None:
        for name, q in quotas.items():
            self.classes[name].capacity = max(q * self.total_capacity, 1e-9)

    def run_period(
        self,
        rates: dict[str, float],
        sheds: dict[str, float],
        period_s: float,
        targets: dict[str, float],
    ) -> dict[str, Observation]:
        return {
            name: plant.run_period(rates[name], sheds.get(name, 0.0), period_s, targets[name])
            for name, plant in self.classes.items()
        }

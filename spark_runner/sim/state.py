"""The dynamic side of a simulated run: what waits, what a period measured, what the run
accumulated.

Every field is a list indexed by node or class (see :mod:`spark_runner.sim.topology`)
and is only ever changed in place, so the hot loop's local names for them stay valid.
Queued tuples are runs ``[count, first arrival, last arrival]`` with arrivals spread
evenly inside a run.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from spark_runner.control.run import ClassTotals


@dataclass
class Work:
    """The tuples waiting in the network: queued at operators, or deferred at a class's
    shedding points (over its admit rate, kept for stale-first shedding)."""

    queues: list[deque[list[float]]]
    qn: list[int]
    """Tuples queued per node."""
    carry: list[float]
    """Selectivity error diffusion per node (whole tuples out, exact in the long run)."""
    deferred: list[deque[list[float]]]
    dn: list[int]
    """Tuples deferred per node."""
    kdn: list[int]
    """Tuples deferred per class."""
    kq: list[int]
    """Tuples queued in each class's operators."""

    @classmethod
    def empty(cls, nodes: int, classes: int) -> Work:
        return cls(
            queues=[deque() for _ in range(nodes)],
            qn=[0] * nodes,
            carry=[0.0] * nodes,
            deferred=[deque() for _ in range(nodes)],
            dn=[0] * nodes,
            kdn=[0] * classes,
            kq=[0] * classes,
        )


@dataclass
class PeriodCounters:
    """What the current control period measured (reset at each control step)."""

    nodes: int
    classes: int
    busy: list[float] = field(init=False)
    n_in: list[int] = field(init=False)
    n_out: list[int] = field(init=False)
    src: list[int] = field(init=False)
    """Arrivals into source nodes."""
    point: list[int] = field(init=False)
    """Arrivals at each shedding point."""
    arrived: list[int] = field(init=False)
    shed: list[int] = field(init=False)
    stale: list[int] = field(init=False)
    expired: list[int] = field(init=False)
    """Of the stale-first drops, the tuples that had waited the class's delay target or
    longer: late whatever had served them."""
    outputs: list[int] = field(init=False)
    rt_sum: list[float] = field(init=False)
    rt_max: list[float] = field(init=False)
    viol_sum: list[float] = field(init=False)
    """Output tuples' violations, ``max(0, rt − D)`` summed, s."""
    class_busy: list[float] = field(init=False)
    free: list[float] = field(init=False)
    """Busy time taken while no class above wanted the processor."""
    repaid: list[float] = field(init=False)
    """Busy time given back while other classes repaid a deficit."""
    turn_max: list[float] = field(init=False)
    """The longest single operator turn (turns are not preempted)."""
    idle: float = 0.0

    def __post_init__(self) -> None:
        n, k = self.nodes, self.classes
        self.busy = [0.0] * n
        self.n_in, self.n_out, self.src, self.point = [0] * n, [0] * n, [0] * n, [0] * n
        self.arrived, self.shed, self.stale, self.outputs = [0] * k, [0] * k, [0] * k, [0] * k
        self.expired = [0] * k
        self.rt_sum, self.rt_max, self.class_busy = [0.0] * k, [0.0] * k, [0.0] * k
        self.viol_sum = [0.0] * k
        self.free, self.repaid, self.turn_max = [0.0] * k, [0.0] * k, [0.0] * k

    def reset(self) -> None:
        """Start a new period (in place)."""
        for i in range(self.nodes):
            self.busy[i] = 0.0
            self.n_in[i] = self.n_out[i] = self.src[i] = self.point[i] = 0
        for k in range(self.classes):
            self.arrived[k] = self.shed[k] = self.stale[k] = self.outputs[k] = 0
            self.expired[k] = 0
            self.rt_sum[k] = self.rt_max[k] = self.class_busy[k] = self.turn_max[k] = 0.0
            self.free[k] = self.repaid[k] = self.viol_sum[k] = 0.0
        self.idle = 0.0


@dataclass
class RunAccounts:
    """Run-long accumulators besides the per-period ones."""

    totals: list[ClassTotals]
    offered_out: list[float]
    """Expected outputs of the offered input, per class."""
    lost_out: list[float]
    """Expected outputs lost to shedding, per class."""
    viol_sum: list[float]
    viol_max: list[float]
    turns: int = 0
    idle_s: float = 0.0

    @classmethod
    def empty(cls, classes: int) -> RunAccounts:
        return cls(
            totals=[ClassTotals() for _ in range(classes)],
            offered_out=[0.0] * classes,
            lost_out=[0.0] * classes,
            viol_sum=[0.0] * classes,
            viol_max=[0.0] * classes,
        )

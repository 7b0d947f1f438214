"""The oracle's loss: the least each class could have shed on the machine and still met
its delay target, with the machine shared as the run's policy promises.

One definition, used by the simulator and the Spark runner alike, and independent of how
the run being judged shared the processor. Each control period the engine reports, per
class, the work offered (its load L before shedding × T: arrivals times the measured cost
per tuple) and its floor (the least response time any tuple gets; 0 where it is not
measured); for the whole machine, the processor time the classes could have had in the
period (never a class's own busy time, which a scheduler that starved the class would
have shrunk with it) and how long the engine was not running at the period's start (the
first period of a run whose streams flowed before it started: no capacity then).

The work is a fluid. A period's work arrives evenly: it is taken in pieces at the
period's middle (or, in a period longer than the time a tuple may wait, in slices no
longer than that, each at its middle), each to be served from the period's start until
its deadline, the delay target less the floor after its instant; what is not served by
then had to be shed (so tuples already past their target when the engine started are
shed by the oracle too). The oracle knows the whole run and serves it as a flow from the
pieces through the time between them to the machine (:mod:`spark_runner.core.flow`), in
phases: first each class up to the share of the processor it keeps whatever the classes
above it need (:meth:`~spark_runner.control.plane.ControlPlane.own_shares`), then
the classes in priority order, each phase taking the most it can without taking from the
phases before. So the top class loses the least any admission could make it lose on the
machine, and each class below the least given that the classes above it lost no more:
the losses are a lexicographic minimum, and a run is compared with them class by class
from the top (a lower class can beat a per-class yardstick only by taking what a higher
one needed).

Periods in which a class is infeasible (floor at or above its target) are not judged for
it: no admission meets the target there, so its offered work is neither counted nor shed.
The loss is a share of the work *judged*: served in full, or whose deadline has passed.
What still waits at the end of a run (the last ``D − floor`` seconds of a class in
overload) is neither served nor shed yet.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from spark_runner.core.flow import WindowFlow
from spark_runner.core.params import require_positive

_TINY_S = 1e-9  # less work than this is rounding
_MAX_SLICES = 100  # a period's work is taken in at most this many slices


@dataclass(frozen=True)
class _Period:
    start: float
    up: float  # the machine serves from here (after the engine's down time) ...
    end: float  # ... to here
    machine_s: float
    order: tuple[str, ...]  # highest priority first
    guaranteed: Mapping[str, float]

    def rate(self) -> float:
        return self.machine_s / (self.end - self.up) if self.end > self.up else 0.0


@dataclass(frozen=True)
class _Piece:
    name: str
    period: int
    release: float
    deadline: float
    work: float


@dataclass
class OracleLoss:
    """One class's account: ``offered_s`` of work, of which ``judged_s`` decided and
    ``shed_s`` shed, and the work shed at deadlines in each period (``shed_by_period``)."""

    offered_s: float = 0.0
    judged_s: float = 0.0
    shed_s: float = 0.0
    shed_by_period: dict[int, float] = field(default_factory=dict)

    @property
    def loss_fraction(self) -> float:
        """Share of the work judged the oracle had to shed (0 without such work)."""
        return min(self.shed_s / self.judged_s, 1.0) if self.judged_s > _TINY_S else 0.0


class MachineOracle:
    """The oracle of a run's classes on one machine (see module)."""

    def __init__(self, targets: Mapping[str, float]) -> None:
        """``targets``: each class's delay target, read as each period is recorded (a
        running job passes its targets in force, so a live change counts from then on)."""
        for name, target in targets.items():
            require_positive(f"delay_target_s of {name}", target, " seconds")
        self.targets = targets
        self._periods: list[_Period] = []
        self._pieces: list[_Piece] = []
        self._first_piece: list[int] = []  # per period, where its pieces begin

    @property
    def periods(self) -> int:
        return len(self._periods)

    def period(
        self,
        period_s: float,
        offered_s: Mapping[str, float],
        machine_s: float,
        order: Sequence[str],
        guaranteed: Mapping[str, float] | None = None,
        floors_s: Mapping[str, float] | None = None,
        down_s: float = 0.0,
    ) -> None:
        """Record one period: each class's ``offered_s`` arrived, the classes could have
        had ``machine_s`` of processor time together after its first ``down_s`` seconds,
        shared by their ``guaranteed`` shares and then in ``order`` (highest first)."""
        require_positive("period_s", period_s, " seconds")
        start = self._periods[-1].end if self._periods else 0.0
        end = start + period_s
        index = len(self._periods)
        self._first_piece.append(len(self._pieces))
        self._periods.append(
            _Period(
                start,
                start + min(max(down_s, 0.0), period_s),
                end,
                max(machine_s, 0.0),
                tuple(order),
                dict(guaranteed or {}),
            )
        )
        for name, target in self.targets.items():
            slack = target - max((floors_s or {}).get(name, 0.0), 0.0)
            offered = offered_s.get(name, 0.0)
            if offered <= 0.0 or slack <= 0.0:
                continue
            slices = min(math.ceil(period_s / slack), _MAX_SLICES)
            width = period_s / slices
            for k in range(slices):
                deadline = start + (k + 0.5) * width + slack
                self._pieces.append(_Piece(name, index, start, deadline, offered / slices))

    def losses(self, first_period: int = 0, guaranteed: bool = True) -> dict[str, OracleLoss]:
        """Each class's account over the periods recorded from ``first_period`` on (the
        work offered before it left out, as if the run had started there). Without the
        ``guaranteed`` shares, the classes are served in priority order alone: the
        lexicographic least over every way to share the machine, which no run can beat
        from the top whatever its policy."""
        if first_period >= len(self._periods):
            return {name: OracleLoss() for name in self.targets}
        pieces = self._pieces[self._first_piece[first_period] :]
        served = _Solver(self._periods, first_period, pieces).solve(guaranteed)
        horizon = self._periods[-1].end
        ends = [p.end for p in self._periods]
        out = {name: OracleLoss() for name in self.targets}
        for piece, got in served:
            loss = out[piece.name]
            loss.offered_s += piece.work
            left = piece.work - got
            if left <= _TINY_S * max(piece.work, 1.0):
                loss.judged_s += piece.work
            elif piece.deadline <= horizon:
                loss.judged_s += piece.work
                loss.shed_s += left
                at = min(bisect.bisect_left(ends, piece.deadline), len(ends) - 1)
                loss.shed_by_period[at] = loss.shed_by_period.get(at, 0.0) + left
        return out


def recent_shed_s(oracle: MachineOracle, periods: int = 40) -> dict[str, float]:
    """Per class, the work the oracle shed at deadlines in the last period recorded, as it
    reads over the last ``periods`` periods alone: a live figure, cheap to solve each
    period (the run's totals solve the whole run)."""
    last = oracle.periods - 1
    losses = oracle.losses(first_period=max(0, oracle.periods - periods))
    return {name: loss.shed_by_period.get(last, 0.0) for name, loss in losses.items()}


class _Solver:
    """The flow of one :meth:`MachineOracle.losses`: source → piece (its work) → each
    stretch of time between its release and its deadline → sink (the machine's time in
    the stretch)."""

    def __init__(self, periods: Sequence[_Period], first: int, pieces: Sequence[_Piece]):
        """``pieces``: those of the periods from ``first`` on."""
        self.first = first
        self.periods = periods[first:]
        self.starts = [p.start for p in self.periods]
        self.pieces = list(pieces)
        horizon = self.periods[-1].end
        cuts = {t for p in self.periods for t in (p.start, p.up, p.end)}
        cuts |= {p.deadline for p in self.pieces if p.deadline < horizon}
        self.cuts = sorted(cuts)
        stretches = list(zip(self.cuts, self.cuts[1:], strict=False))
        self.stretch_of = [self._period_of(a) for a, _ in stretches]
        self.stretch_s = [
            period.rate() * max(0.0, b - max(a, period.up))
            for (a, b), period in zip(stretches, self.stretch_of, strict=True)
        ]
        self.flow = WindowFlow(len(stretches))
        for piece in self.pieces:  # item i is piece i
            self._piece(piece)

    def _period_of(self, t: float) -> _Period:
        return self.periods[max(bisect.bisect_right(self.starts, t) - 1, 0)]

    def _piece(self, piece: _Piece) -> None:
        """The piece's item, linked to the stretches from its release to its deadline."""
        stretches = len(self.stretch_s)
        first = min(bisect.bisect_left(self.cuts, piece.release), stretches)
        last = bisect.bisect_left(self.cuts, piece.deadline)  # the stretches ending by then
        self.flow.item(first, max(first, min(last, stretches)), piece.work)

    def solve(self, guaranteed: bool) -> list[tuple[_Piece, float]]:
        """Each piece and the work of it served: the ``guaranteed`` shares first, class by
        class (each adding its share of every stretch to what the sink may take), then
        the whole machine, one priority rank after the other."""
        names = list(dict.fromkeys(n for p in self.periods for n in p.order))
        reserved = [0.0] * len(self.stretch_s)
        for name in names if guaranteed else ():
            for j, whole in enumerate(self.stretch_s):
                reserved[j] += self.stretch_of[j].guaranteed.get(name, 0.0) * whole
                self.flow.set_slot_capacity(j, min(reserved[j], whole))
            self.flow.augment(self._sources({name}, range(len(names) + 1)))
        for j, whole in enumerate(self.stretch_s):
            self.flow.set_slot_capacity(j, whole)
        for rank in range(len(names)):
            self.flow.augment(self._sources(set(names), (rank,)))
        return list(zip(self.pieces, self.flow.served, strict=True))

    def _rank(self, piece: _Piece) -> int:
        """The piece's class's place by priority in the period it arrived in."""
        order = self.periods[piece.period - self.first].order
        return order.index(piece.name) if piece.name in order else len(order)

    def _sources(self, names: set[str], ranks: Sequence[int]) -> list[int]:
        """The items of the pieces of ``names`` whose class had one of ``ranks``."""
        return [i for i, p in enumerate(self.pieces) if p.name in names and self._rank(p) in ranks]

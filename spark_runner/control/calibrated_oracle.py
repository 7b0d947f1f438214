"""The oracle of a finished run, its machine taken from a separate calibration (pure).

The oracle a run reports (:mod:`spark_runner.core.oracle`, fed each period by the engine)
measures the machine and each class's cost per tuple in the run it judges: on Spark, the
processor time the batches left and the executor time per tuple of that run. This one
takes both from a calibration made apart from the run: the processor time a second the
engine's operators took on the same network past its capacity, in a run of its own, each
class's cost per tuple there, and the mean response time its batches gave. Of the judged
run it reads only what its classes were offered (their arrivals, which no admission
changes), so a run that under-serves a class cannot shrink the yardstick it is judged by.

The machine serves the classes in priority order (the ``absolute`` and ``strict``
policies, with no quota floor) the processor time the calibration's operators took a
second, each class's tuple costing what it cost there; a tuple must be answered within
its class's target less the floor. The losses compare with the run's own over the same
periods: :func:`run_losses`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from spark_runner.core.oracle import MachineOracle
from spark_runner.core.params import require_positive


@dataclass(frozen=True)
class Calibration:
    """The machine as a run of its own measured it: ``busy_per_s``, the processor time
    its classes' operators took a second once steady (the engine at full load; 1 would
    be every second of the processor), each class's ``costs_s`` per admitted tuple, and
    ``floor_s``, the mean response time a fully admitted tuple got."""

    busy_per_s: float
    costs_s: Mapping[str, float]
    floor_s: float = 0.0

    def __post_init__(self) -> None:
        require_positive("busy_per_s", self.busy_per_s, " s/s")
        for name, cost in self.costs_s.items():
            require_positive(f"costs_s.{name}", cost, " s/tuple")

    @classmethod
    def of_run(cls, results: Mapping[str, Any], since_s: float = 0.0) -> Calibration:
        """The machine a calibration run (a Spark results document of a run past the
        machine's capacity) measured over the second half of its periods from
        ``since_s``: the operators' busy time a second, each class's busy time per
        admitted tuple, and the median of the classes' ``floor_s`` (half a pace and a
        batch's fixed time; 0 where none is recorded)."""
        series = results["series"]
        start = _steady_start(series, since_s)
        steady = series[start:]
        busy_s = sum(c["busy_s"] for s in steady for c in s["classes"].values())
        floors = sorted(
            c["floor_s"]
            for s in steady
            for c in s["classes"].values()
            if c.get("floor_s") is not None
        )
        return cls(
            busy_per_s=busy_s / (steady[-1]["t_s"] - series[start - 1]["t_s"]),
            costs_s=_costs_s(results["classes"], steady, series),
            floor_s=floors[len(floors) // 2] if floors else 0.0,
        )


def _costs_s(
    names: Iterable[str],
    steady: Sequence[Mapping[str, Any]],
    series: Sequence[Mapping[str, Any]],
) -> dict[str, float]:
    """Each class's busy time per admitted tuple over the ``steady`` periods, or over the
    whole run for a class admitted in none of them (a lowest class shed in full once the
    overload settled: its tuples before); a class never admitted has none."""
    costs = {}
    for name in names:
        for periods in (steady, series):
            admitted = sum(s["classes"][name]["admitted"] for s in periods)
            if admitted > 0:
                costs[name] = sum(s["classes"][name]["busy_s"] for s in periods) / admitted
                break
    return costs


def _steady_start(series: Sequence[Mapping[str, Any]], since_s: float) -> int:
    """The index of the first period of the second half of those that began at
    ``since_s`` or later (the first batches of a JVM, or of an overload, are not yet
    steady)."""
    first = next((i for i in range(1, len(series)) if series[i - 1]["t_s"] >= since_s), None)
    if first is None or len(series) - first < 2:
        raise ValueError(f"too few periods from {since_s:g} s to measure a throughput")
    return first + (len(series) - first) // 2


def steady_throughput(results: Mapping[str, Any], since_s: float = 0.0) -> float:
    """Tuples/s a run admitted over the second half of its periods that began at
    ``since_s`` (scenario time) or later, from the end of the period before that half to
    the end of the last (periods follow the batch cycle: their lengths vary)."""
    series = results["series"]
    start = _steady_start(series, since_s)
    steady = series[start:]
    admitted = sum(s["classes"][c]["admitted"] for s in steady for c in results["classes"])
    return float(admitted / (steady[-1]["t_s"] - series[start - 1]["t_s"]))


def _periods(results: Mapping[str, Any], since_s: float) -> list[tuple[float, dict[str, Any]]]:
    """``(period_s, classes)`` of each period of ``results`` that began at ``since_s``
    or later (the first sample's period is left out: its start is not recorded)."""
    return [
        (sample["t_s"] - before["t_s"], sample["classes"])
        for before, sample in pairwise(results["series"])
        if before["t_s"] >= since_s
    ]


def calibrated_losses(
    results: Mapping[str, Any], calibration: Calibration, since_s: float = 0.0
) -> dict[str, float]:
    """Each class's least loss (a share of its judged tuples) over the periods of
    ``results`` from ``since_s``, on ``calibration``'s machine, classes served by
    priority."""
    classes = results["classes"]
    order = sorted(classes, key=lambda n: -classes[n]["priority"])
    missing = sorted(set(order) - set(calibration.costs_s))
    if missing:
        raise ValueError(f"the calibration measured no cost for {missing}")
    oracle = MachineOracle({n: classes[n]["delay_target_s"] for n in order})
    floors = {n: calibration.floor_s for n in order}
    for period_s, sample in _periods(results, since_s):
        if period_s <= 0:
            continue
        offered = {
            n: sample[n]["arrival_rate_per_s"] * period_s * calibration.costs_s[n] for n in order
        }
        machine_s = period_s * calibration.busy_per_s
        oracle.period(period_s, offered, machine_s, order, None, floors)
    return {n: loss.loss_fraction for n, loss in oracle.losses().items()}


def run_losses(results: Mapping[str, Any], since_s: float = 0.0) -> dict[str, float]:
    """Each class's loss in ``results`` over the same periods: tuples shed over tuples
    that arrived."""
    arrived = dict.fromkeys(results["classes"], 0.0)
    shed = dict.fromkeys(results["classes"], 0.0)
    for period_s, sample in _periods(results, since_s):
        for name in arrived:
            arrived[name] += sample[name]["arrival_rate_per_s"] * period_s
            shed[name] += sample[name]["shed_count"]
    return {n: shed[n] / arrived[n] if arrived[n] > 0 else 0.0 for n in arrived}

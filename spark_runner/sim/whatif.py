"""What if: a job's last minutes replayed through the simulator, under the configuration
in force and under a proposed one, before the proposal is applied.

The replay is the job's own scenario with what the job measured in each control period
(its metric samples) put in place of the scenario's assumptions:

- **arrivals**: every stream arrives at the rate measured in each period (a step per
  period) by a class that reads it alone, or by one that reads several less the rates of
  its other streams (a class counts the tuples of every stream it reads);
- **costs**: each class's operators are scaled so that its path costs what the job
  measured per arriving tuple (``load / arrival_rate`` over the window; the scenario's
  modelled costs keep their proportions), then once more so that a first replay measures
  that same cost (the job's figure includes its engine's per-batch costs, which the
  simulator adds again). Both engines measure load in seconds of the processor's work
  per second, so the simulated processor's capacity of 1 s/s is the job's capacity (a
  process beside the job that took part of the machine is not replayed);
- **control**: the scenario's own control settings, then the configuration (in force, or
  proposed) applied through the same live-update path a running job uses.

Both replays start from fresh managers over the same window, so their difference is the
proposal's; the measured figures of the window stand beside them. The window is the last
``REPLAY_MAX_S`` of samples; where more than ``MAX_REPLAY_TUPLES`` arrived in it, the
replay is thinned: every rate divided and every cost multiplied by the same factor, so
the load, the queues' work and the response times stay (shortening the window instead
left a job of 12,000 tuples/s 25 s of its two minutes).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from spark_runner.contract.control import LiveConfig
from spark_runner.control.network import build_network
from spark_runner.control.results import pending_backlog
from spark_runner.control.run import RunOutput
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import MAX_COST_PER_TUPLE_S, Scenario, operator_cost
from spark_runner.sim.engine import Simulation

REPLAY_MAX_S = 120.0
"""How far back the replay looks (the newest samples of the job)."""
MAX_REPLAY_TUPLES = 300_000
"""At most this many arrivals are replayed: a busier window is thinned (each replayed
tuple stands for several, and costs as much as they did together)."""


@dataclass(frozen=True)
class ClassOutcome:
    """One class over the window: mean violation (s), loss (share of tuples), mean
    response time (s); ``None`` where nothing was output or nothing arrived."""

    mean_violation_s: float | None
    loss_fraction: float | None
    mean_response_time_s: float | None


@dataclass(frozen=True)
class WhatIf:
    """The window replayed: what the job measured, and what the simulator predicts under
    the configuration in force and under the proposed one, per class."""

    window_s: float
    measured: dict[str, ClassOutcome]
    current: dict[str, ClassOutcome]
    proposed: dict[str, ClassOutcome]


def what_if(
    document: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    current: LiveConfig,
    proposed: LiveConfig,
) -> WhatIf:
    """Replay ``samples`` (the job's newest, oldest first) of the scenario ``document``
    under ``current`` and ``proposed``.

    Raises ``ParameterError`` when there is nothing to replay, ``ScenarioError`` when the
    replayed scenario is not valid.
    """
    by_class: dict[str, list[Mapping[str, Any]]] = {}
    for s in samples:
        by_class.setdefault(s["class_name"], []).append(s)
    if not by_class:
        raise ParameterError(
            "samples", 0, f"the job reported no samples in its last {REPLAY_MAX_S:g} s"
        )
    period = median(float(s["period_s"]) for s in samples)
    end = max(float(s["t"]) for s in samples)
    start = max(min(float(s["t"]) - float(s["period_s"]) for s in samples), end - REPLAY_MAX_S)
    by_class = {n: [s for s in ss if float(s["t"]) > start] for n, ss in by_class.items()}
    rate = sum(_mean(ss, "arrival_rate") or 0.0 for ss in by_class.values())
    thin = max(1.0, rate * (end - start) / MAX_REPLAY_TUPLES)
    doc = _replay_document(document, by_class, start, end, period, thin)
    doc = _calibrated(doc, current, by_class, thin)
    scenario = scenario_from_dict(doc, source="what-if replay")  # frozen: both runs share it
    outcomes = {
        label: _run(scenario, config)
        for label, config in (("current", current), ("proposed", proposed))
    }
    measured = {n: measured_outcome(ss) for n, ss in by_class.items()}
    return WhatIf(end - start, measured, outcomes["current"], outcomes["proposed"])


def _replay_document(
    document: Mapping[str, Any],
    by_class: Mapping[str, Sequence[Mapping[str, Any]]],
    start: float,
    end: float,
    period: float,
    thin: float,
) -> dict[str, Any]:
    doc = copy.deepcopy(dict(document))
    doc["duration_s"] = round(end - start, 6)
    doc["control"] = {**doc.get("control", {}), "period_s": period}
    rates = _stream_rates(_streams_read(doc), by_class)
    for stream in doc["streams"]:
        steps = [
            {"at_s": round(max(t - start, 0.0), 6), "rate_per_s": rate / thin}
            for t, rate in sorted(rates.get(stream["name"], {}).items())
        ]
        if steps:
            steps[0]["at_s"] = 0.0
            stream["arrival"] = {"kind": "step", "steps": _distinct_instants(steps)}
    paths = build_network(scenario_from_dict(copy.deepcopy(doc))).longest_paths()
    factors = {
        name: thin * cost / paths[name][0]
        for name, samples in by_class.items()
        if (cost := _cost_per_tuple(samples)) > 0.0 and paths.get(name, (0.0, 0))[0] > 0.0
    }
    return _scaled(doc, factors)


def _calibrated(
    doc: dict[str, Any],
    config: LiveConfig,
    by_class: Mapping[str, Sequence[Mapping[str, Any]]],
    thin: float,
) -> dict[str, Any]:
    """``doc`` with each class's costs scaled once more so that the replay measures the
    cost per arriving tuple the job measured (``thin`` times it: each replayed tuple
    stands for that many): the job's figure includes what its engine
    spends per batch, which the simulator adds again (its batch and dispatch overheads),
    so scaled from the declared costs alone a class cost up to a fifth more in the
    replay, and a class that kept up in the job was predicted to shed most of its load."""
    probe = Simulation(scenario_from_dict(doc, source="what-if replay"), [(0.0, config)]).run()
    replayed = series_samples(probe.series, float(doc["control"]["period_s"]))
    factors: dict[str, float] = {}
    for name, samples in by_class.items():
        mine = [s for s in replayed if s["class_name"] == name]
        job, replay = thin * _cost_per_tuple(samples), _cost_per_tuple(mine)
        if job > 0.0 and replay > 0.0:
            factors[name] = job / replay
    return _scaled(doc, factors)


def _scaled(doc: dict[str, Any], factors: Mapping[str, float]) -> dict[str, Any]:
    """``doc`` with each class's operator costs multiplied by its factor (at most
    ``MAX_COST_PER_TUPLE_S`` each)."""
    out = copy.deepcopy(doc)
    scenario = scenario_from_dict(copy.deepcopy(doc), source="what-if replay")
    for cls in out["classes"]:
        factor = factors.get(cls["name"])
        if factor is None:
            continue
        parsed = scenario.query_class(cls["name"])
        for query, parsed_query in zip(cls["queries"], parsed.queries, strict=True):
            for op, parsed_op in zip(query["operators"], parsed_query.operators, strict=True):
                cost = min(operator_cost(parsed_op, scenario.engine) * factor, MAX_COST_PER_TUPLE_S)
                op["sim"] = {**op.get("sim", {}), "cost_per_tuple_s": cost}
    return out


def _cost_per_tuple(samples: Sequence[Mapping[str, Any]]) -> float:
    """The processor time a class's arriving tuple cost, s (0 without load or arrivals)."""
    load, arrivals = _sum(samples, "load"), _sum(samples, "arrival_rate")
    return load / arrivals if load > 0.0 and arrivals > 0.0 else 0.0


def _streams_read(doc: Mapping[str, Any]) -> dict[str, tuple[list[str], bool]]:
    """Per class, the streams it reads (directly or through a shared segment), and
    whether it reads any through a segment."""
    segments = {s["name"]: s["source"] for s in doc.get("shared_segments", [])}
    out: dict[str, tuple[list[str], bool]] = {}
    for cls in doc["classes"]:
        streams: list[str] = []
        for query in cls["queries"]:
            stream = segments.get(query["source"], query["source"])
            if stream not in streams:
                streams.append(stream)
        out[cls["name"]] = (streams, any(q["source"] in segments for q in cls["queries"]))
    return out


def _stream_rates(
    streams_read: Mapping[str, tuple[list[str], bool]],
    by_class: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, dict[float, float]]:
    """Each stream's arrival rate per period (keyed by the period's start, s), from the
    classes' measured arrival rates: a class counts the tuples of every stream it reads,
    so a stream takes the rate of a class that reads it alone (one reading it directly
    first), less, for a class reading several, the rates of its other streams already
    known; a stream no class pins down keeps the scenario's arrivals. (Through a shared
    segment a class may count only what the segment passes: read so, a filtering
    segment's stream is under-counted.)"""
    per_period = {
        name: {float(s["t"]) - float(s["period_s"]): float(s["arrival_rate"]) for s in samples}
        for name, samples in by_class.items()
    }
    order = sorted(per_period, key=lambda n: (len(streams_read[n][0]), streams_read[n][1]))
    rates: dict[str, dict[float, float]] = {}
    progress = True
    while progress:
        progress = False
        for name in order:
            unknown = [s for s in streams_read[name][0] if s not in rates]
            if len(unknown) != 1:
                continue
            known = [rates[s] for s in streams_read[name][0] if s in rates]
            rates[unknown[0]] = {
                t: max(rate - sum(k.get(t, 0.0) for k in known), 0.0)
                for t, rate in per_period[name].items()
            }
            progress = True
    return rates


def _distinct_instants(steps: list[dict[str, float]]) -> list[dict[str, float]]:
    out: list[dict[str, float]] = []
    for step in steps:
        if out and step["at_s"] <= out[-1]["at_s"]:
            out[-1]["rate_per_s"] = step["rate_per_s"]
        else:
            out.append(step)
    return out


def _run(scenario: Scenario, config: LiveConfig) -> dict[str, ClassOutcome]:
    """The replay under ``config`` from its start (outputs judged against its targets),
    each class read from its samples as the job's are (:func:`measured_outcome`): the
    prediction and the measurement are the same statistics."""
    output = Simulation(scenario, [(0.0, config)]).run()
    rows = series_samples(output.series, scenario.control.period_s)
    return {
        name: measured_outcome(
            [r for r in rows if r["class_name"] == name],
            pending=_pending(output, name, config.classes[name].delay_target_s),
        )
        for name in output.class_order
    }


def _pending(output: RunOutput, name: str, target_s: float) -> int:
    """The tuples of a class still waiting at the replay's end within its target
    (:func:`~spark_runner.control.results.pending_backlog`). The job's window sheds, stale
    first, what waited at its start and leaves what waits at its end; the replay starts
    with nothing waiting, so counted among its arrivals they read as kept, and the replay
    predicted a class that shed stale first to lose less than it did."""
    return int(pending_backlog(output.backlog[name], output.backlog_age_s[name], target_s))


def measured_outcome(samples: Sequence[Mapping[str, Any]], pending: int = 0) -> ClassOutcome:
    """One class's outcome over its metric ``samples``: the mean violation and mean
    response time over their outputs, the loss over their arrivals less the ``pending``
    ones (still waiting within the target)."""
    outputs = sum(int(s.get("output_count") or 0) for s in samples)
    arrived = max(0, sum(int(s.get("arrived_count") or 0) for s in samples) - pending)
    shed = [s.get("shed_count") for s in samples]
    weighted = [
        (s.get("violation_mean_s"), s.get("response_time_mean_s"), int(s.get("output_count") or 0))
        for s in samples
    ]
    return ClassOutcome(
        mean_violation_s=(
            sum((v or 0.0) * n for v, _, n in weighted) / outputs if outputs else None
        ),
        loss_fraction=(
            sum(int(x) for x in shed if x is not None) / arrived
            if arrived and any(x is not None for x in shed)
            else None
        ),
        mean_response_time_s=(
            sum((r or 0.0) * n for _, r, n in weighted) / outputs if outputs else None
        ),
    )


def _sum(samples: Sequence[Mapping[str, Any]], key: str) -> float:
    return sum(float(s[key]) for s in samples if s.get(key) is not None)


def _mean(samples: Sequence[Mapping[str, Any]], key: str) -> float | None:
    values = [float(s[key]) for s in samples if s.get(key) is not None]
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class PredictionError:
    """How far a prediction was from what was then measured, predicted − measured (so
    positive: predicted worse): the mean violation (s) and the loss (share of tuples);
    ``None`` where either side has no figure."""

    violation_s: float | None
    loss: float | None


def prediction_error(predicted: ClassOutcome, measured: ClassOutcome) -> PredictionError:
    """``predicted`` (a replay under a change) against ``measured`` (the class's outcome
    once the change ran)."""

    def gap(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a - b

    return PredictionError(
        gap(predicted.mean_violation_s, measured.mean_violation_s),
        gap(predicted.loss_fraction, measured.loss_fraction),
    )


def series_samples(series: Sequence[Mapping[str, Any]], period_s: float) -> list[dict[str, Any]]:
    """A simulation's series (``RunOutput.series``) as the metric samples a job reports,
    the fields :func:`what_if` and :func:`measured_outcome` read, ``t`` in simulated
    seconds: so a simulated run can be replayed and judged as a job is."""
    return [
        {
            "class_name": name,
            "t": float(sample["t_s"]),
            "period_s": period_s,
            "arrival_rate": c["arrival_rate_per_s"],
            "arrived_count": round(c["arrival_rate_per_s"] * period_s),
            "output_count": c["outputs"],
            "shed_count": c["shed_count"],
            "load": c["load"],
            "violation_mean_s": c["mean_violation_s"],
            "response_time_mean_s": c["mean_response_time_s"],
        }
        for sample in series
        for name, c in sample["classes"].items()
    ]

"""What if: a job's last minutes replayed through the simulator, under the configuration
in force and under a proposed one, before the proposal is applied.

The replay is the job's own scenario with what the job measured in each control period
(its metric samples) put in place of the scenario's assumptions:

- **arrivals**: every stream arrives at the rate the class reading it measured in each
  period (a step per period; a stream several classes read takes the first one's);
- **costs**: each class's operators are scaled so that its path costs what the job
  measured per arriving tuple (``load / arrival_rate`` over the window; the scenario's
  modelled costs keep their proportions). Both engines measure load in seconds of the
  processor's work per second, so the simulated processor's capacity of 1 s/s is the
  job's capacity;
- **control**: the scenario's own control settings, then the configuration (in force, or
  proposed) applied through the same live-update path a running job uses.

Both replays start from fresh managers over the same window, so their difference is the
proposal's; the measured figures of the window stand beside them. The window is the last
``REPLAY_MAX_S`` of samples, shortened (newest part kept) so that at most
``MAX_REPLAY_TUPLES`` arrive.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

from spark_runner.contract.control import LiveConfig
from spark_runner.control.live import apply_live_config
from spark_runner.control.network import build_network
from spark_runner.control.results import build_results
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.compose import scenario_live_config
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import MAX_COST_PER_TUPLE_S, Scenario, operator_cost
from spark_runner.sim.engine import Simulation

REPLAY_MAX_S = 120.0
"""How far back the replay looks (the newest samples of the job)."""
MAX_REPLAY_TUPLES = 300_000
"""At most this many arrivals are replayed (the window is shortened to fit)."""


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
    rate = sum(_mean(ss, "arrival_rate") or 0.0 for ss in by_class.values())
    if rate * (end - start) > MAX_REPLAY_TUPLES:
        start = end - max(MAX_REPLAY_TUPLES / rate, period)
    by_class = {n: [s for s in ss if float(s["t"]) > start] for n, ss in by_class.items()}
    doc = _replay_document(document, by_class, start, end, period)
    scenario = scenario_from_dict(doc, source="what-if replay")  # frozen: both runs share it
    outcomes = {
        label: _run(scenario, config)
        for label, config in (("current", current), ("proposed", proposed))
    }
    measured = {n: _measured(ss) for n, ss in by_class.items()}
    return WhatIf(end - start, measured, outcomes["current"], outcomes["proposed"])


def _replay_document(
    document: Mapping[str, Any],
    by_class: Mapping[str, Sequence[Mapping[str, Any]]],
    start: float,
    end: float,
    period: float,
) -> dict[str, Any]:
    doc = copy.deepcopy(dict(document))
    doc["duration_s"] = round(end - start, 6)
    doc["control"] = {**doc.get("control", {}), "period_s": period}
    readers = _stream_readers(doc)
    for stream in doc["streams"]:
        measured = next((by_class[c] for c in readers.get(stream["name"], []) if c in by_class), [])
        steps = [
            {
                "at_s": round(max(float(s["t"]) - float(s["period_s"]) - start, 0.0), 6),
                "rate_per_s": float(s["arrival_rate"]),
            }
            for s in measured
        ]
        if steps:
            steps[0]["at_s"] = 0.0
            stream["arrival"] = {"kind": "step", "steps": _distinct_instants(steps)}
    scenario = scenario_from_dict(copy.deepcopy(doc), source="what-if replay")
    paths = build_network(scenario).longest_paths()
    for cls in doc["classes"]:
        name = cls["name"]
        load, arrivals = (
            _sum(by_class.get(name, []), "load"),
            _sum(by_class.get(name, []), "arrival_rate"),
        )
        modelled = paths.get(name, (0.0, 0))[0]
        if load <= 0.0 or arrivals <= 0.0 or modelled <= 0.0:
            continue
        factor = (load / arrivals) / modelled
        parsed = scenario.query_class(name)
        for query, parsed_query in zip(cls["queries"], parsed.queries, strict=True):
            for op, parsed_op in zip(query["operators"], parsed_query.operators, strict=True):
                cost = min(operator_cost(parsed_op, scenario.engine) * factor, MAX_COST_PER_TUPLE_S)
                op["sim"] = {**op.get("sim", {}), "cost_per_tuple_s": cost}
    return doc


def _stream_readers(doc: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per stream, the classes that read it (directly or through a shared segment)."""
    segments = {s["name"]: s["source"] for s in doc.get("shared_segments", [])}
    readers: dict[str, list[str]] = {}
    for cls in doc["classes"]:
        for query in cls["queries"]:
            source = query["source"]
            stream = segments.get(source, source)
            if cls["name"] not in readers.setdefault(stream, []):
                readers[stream].append(cls["name"])
    return readers


def _distinct_instants(steps: list[dict[str, float]]) -> list[dict[str, float]]:
    out: list[dict[str, float]] = []
    for step in steps:
        if out and step["at_s"] <= out[-1]["at_s"]:
            out[-1]["rate_per_s"] = step["rate_per_s"]
        else:
            out.append(step)
    return out


def _run(scenario: Scenario, config: LiveConfig) -> dict[str, ClassOutcome]:
    simulation = Simulation(scenario)
    apply_live_config(simulation.control, scenario_live_config(scenario), config)
    classes = build_results(simulation.run())["classes"]
    return {
        name: ClassOutcome(
            mean_violation_s=c["mean_violation_s"] if c["outputs"] else None,
            loss_fraction=c["loss_fraction"] if c["arrived_tuples"] else None,
            mean_response_time_s=c["mean_response_time_s"],
        )
        for name, c in classes.items()
    }


def _measured(samples: Sequence[Mapping[str, Any]]) -> ClassOutcome:
    outputs = sum(int(s.get("output_count") or 0) for s in samples)
    arrived = sum(int(s.get("arrived_count") or 0) for s in samples)
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

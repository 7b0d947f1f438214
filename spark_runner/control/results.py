"""The results file of a simulation (JSON, ``format: headroom-sim-results``, version 1).

Layout (documented in docs/scenario-format.md, "Results file")::

    {
      "format": "headroom-sim-results", "format_version": 1,
      "scenario": {"name", "version", "seed", "duration_s", "control_period_s", "mode"},
      "classes": {"<name>": {per-class summary, see CLASS_FIELDS}},
      "totals": {"mean_loss_fraction", "idle_fraction", "operator_turns"},
      "redistributions": [{"t_s", "reason", "before": {class: quota}, "after": {...}}],
      "actions": [{"seq", "at_s", "kind", "class_name", "usage", ..., "verdict"}],
      "series": [{"t_s", "background_share", "idle_s", "classes": {"<name>": {...}}}]
    }

Per-class summary fields (times in seconds, fractions in [0, 1]):

- ``priority``, ``delay_target_s``;
- ``mean_response_time_s``, ``p95_response_time_s``, ``max_response_time_s`` over all
  output tuples (``null`` without output); p95 is read from a histogram with 20 bins per
  decade (about 12 % resolution);
- ``mean_violation_s`` (mean over output tuples of ``max(0, rt − D)``), ``max_violation_s``;
- ``loss_fraction``: data loss, 1 − QoD (001 Def. 5): output tuples lost to shedding over
  the output tuples the offered input would have produced;
- ``shed_fraction``: tuples shed over tuples arrived at the class's shedding points;
- ``oracle_loss_fraction``: the least share of the class's offered work (its load L
  before shedding, from the load model, times time) any admission could have shed and
  still met the delay target on the machine (the processor time the classes had in each
  period, whoever used it), the classes served by the policy's guarantees and then in
  priority order, given the floor, over the work served or shed by the run's end (what
  still waits within its target then is not judged; :mod:`spark_runner.core.oracle`);
  ``loss_vs_oracle`` = loss / oracle (``null`` when the oracle is 0);
- ``outputs``, ``arrived_tuples``, ``shed_tuples``, ``backlog_tuples`` (queued at the end),
  ``backlog_age_s`` (age of the oldest queued tuple at the end; grows without bound when
  a class is overloaded and nothing sheds), ``infeasible_fraction`` (share of the
  periods in which its target was below the floor), ``max_floor_s`` (the largest floor
  measured; ``null`` where the engine measures none), ``mean_headroom``, ``final_headroom``,
  ``final_quota``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from spark_runner.contract.actions import SCALING_KINDS
from spark_runner.control.run import (
    HIST_BINS_PER_DECADE,
    HIST_MIN_EXP,
    ClassTotals,
    RunOutput,
)

RESULTS_FORMAT = "headroom-sim-results"
RESULTS_FORMAT_VERSION = 1

CLASS_FIELDS = (
    "priority",
    "delay_target_s",
    "mean_response_time_s",
    "p95_response_time_s",
    "max_response_time_s",
    "mean_violation_s",
    "max_violation_s",
    "loss_fraction",
    "oracle_loss_fraction",
    "loss_vs_oracle",
    "shed_fraction",
    "outputs",
    "arrived_tuples",
    "shed_tuples",
    "backlog_tuples",
    "backlog_age_s",
    "mean_headroom",
    "final_headroom",
    "final_quota",
    "infeasible_fraction",
    "max_floor_s",
)


def bin_centre_s(b: int) -> float:
    """The geometric centre of the log-binned histogram's bin ``b``, s."""
    return float(10 ** (HIST_MIN_EXP + (b + 0.5) / HIST_BINS_PER_DECADE))


def percentile_from_histogram(histogram: list[float], fraction: float) -> float | None:
    """The ``fraction`` quantile of a log-binned histogram (geometric bin centre), s."""
    total = sum(histogram)
    if total <= 0:
        return None
    goal = fraction * total
    running = 0.0
    for b, count in enumerate(histogram):
        running += count
        if running >= goal:
            return bin_centre_s(b)
    return bin_centre_s(len(histogram) - 1)


def pending_backlog(backlog: float, age_s: float, target_s: float) -> float:
    """Of a backlog left at a run's end, the tuples neither lost nor kept yet: all of it
    while its oldest tuple is within the target (the oracle leaves the work of a run's
    last target unjudged too), none once that tuple is past it (then it is late)."""
    return backlog if age_s <= target_s else 0.0


def _class_summary(out: RunOutput, name: str, tot: ClassTotals) -> dict[str, Any]:
    qc = out.scenario.query_class(name)
    has = tot.timed > 0
    loss = tot.lost_outputs / tot.offered_outputs if tot.offered_outputs > 0 else 0.0
    oracle = tot.oracle_loss
    headrooms = [
        s["classes"][name]["headroom"]
        for s in out.series
        if s["classes"][name]["headroom"] is not None
    ]
    last = out.series[-1]["classes"][name] if out.series else {}
    floors = [
        s["classes"][name]["floor_s"]
        for s in out.series
        if s["classes"][name].get("floor_s") is not None
    ]
    return {
        "priority": qc.priority,
        "delay_target_s": qc.delay_target_s,
        "mean_response_time_s": tot.response_sum_s / tot.timed if has else None,
        "p95_response_time_s": percentile_from_histogram(tot.histogram, 0.95) if has else None,
        "max_response_time_s": tot.response_max_s if has else None,
        "mean_violation_s": tot.violation_sum_s / tot.timed if has else 0.0,
        "max_violation_s": tot.violation_max_s,
        "loss_fraction": min(max(loss, 0.0), 1.0),
        "oracle_loss_fraction": oracle,
        "loss_vs_oracle": loss / oracle if oracle > 1e-9 else None,
        "shed_fraction": tot.shed / tot.arrived if tot.arrived else 0.0,
        "outputs": tot.outputs,
        "arrived_tuples": tot.arrived,
        "shed_tuples": tot.shed,
        "backlog_tuples": out.backlog[name],
        "backlog_age_s": out.backlog_age_s[name],
        "mean_headroom": sum(headrooms) / len(headrooms) if headrooms else None,
        "final_headroom": last.get("headroom"),
        "final_quota": last.get("quota"),
        "infeasible_fraction": (
            sum(s["classes"][name].get("state") == "infeasible" for s in out.series)
            / len(out.series)
            if out.series
            else 0.0
        ),
        "max_floor_s": max(floors) if floors else None,
    }


def build_results(out: RunOutput) -> dict[str, Any]:
    """The results document of a run (see module docstring)."""
    sc = out.scenario
    classes = {name: _class_summary(out, name, out.totals[name]) for name in out.class_order}
    losses = [c["loss_fraction"] for c in classes.values()]
    scaling = {"scaling": out.scaling} if out.scaling is not None else {}
    return {
        "format": RESULTS_FORMAT,
        "format_version": RESULTS_FORMAT_VERSION,
        "scenario": {
            "name": sc.name,
            "version": sc.version,
            "seed": sc.seed,
            "duration_s": sc.duration_s,
            "control_period_s": sc.control.period_s,
            "mode": sc.control.mode,
        },
        "classes": classes,
        "totals": {
            "mean_loss_fraction": sum(losses) / len(losses),
            "idle_fraction": out.idle_s / out.end_s if out.end_s > 0 else 0.0,
            "operator_turns": out.turns,
        },
        "redistributions": out.redistributions,
        "actions": [a.model_dump(exclude_none=True) for a in out.actions],
        **scaling,
        "series": out.series,
    }


def scaling_actions(results: dict[str, Any]) -> list[dict[str, Any]]:
    """A results document's resizes (its ``actions`` of a scaling kind), oldest first."""
    return [a for a in results.get("actions", []) if a["kind"] in SCALING_KINDS]


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def dumps_results(results: dict[str, Any]) -> str:
    """``results`` as JSON text: the summary indented, one line per series sample."""
    clean = _clean(results)
    series = clean.pop("series", [])
    head = json.dumps(clean, indent=2)
    lines = ",\n".join("    " + json.dumps(s, separators=(",", ":")) for s in series)
    listed = f"[\n{lines}\n  ]" if series else "[]"
    return f'{head[:-2]},\n  "series": {listed}\n}}\n'  # always there, even empty


def write_results(results: dict[str, Any], path: str | Path) -> None:
    """Write ``results`` as JSON (UTF-8, no NaN/inf)."""
    Path(path).write_text(dumps_results(results), encoding="utf-8")

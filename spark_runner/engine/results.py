"""The results document of a Spark run: the simulator's format, so both engines compare.

:func:`build_spark_results` shapes the controller's run totals and series into the
simulator's :class:`~spark_runner.control.run.RunOutput` and renders it with
:func:`spark_runner.control.results.build_results` — same fields, same table
(:mod:`spark_runner.control.report`). Spark-specific facts go under ``"engine"``:
master, batches, the measured cost model (every operator's declared and measured weight
per tuple), the burn calibration, warm-up, wall time.
Series samples carry a few more fields than the simulator's (``admitted``, ``shed``,
``violation_mean_s``, ``applied_shed_fraction``, and per sample ``budget_s``, ``alpha``,
``overhead_s``, ``config_version``, ``batch``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from spark_runner.control.network import build_network
from spark_runner.control.results import build_results
from spark_runner.control.run import RunOutput
from spark_runner.engine.control.controller import EngineController


def build_spark_results(
    controller: EngineController, duration_s: float, engine: Mapping[str, Any]
) -> dict[str, Any]:
    """The results document (``format: headroom-sim-results``) of a finished run."""
    plan = controller.plan
    backlog, ages = controller.backlog()
    out = RunOutput(
        scenario=plan.scenario,
        network=build_network(plan.scenario),
        class_order=plan.class_names,
        totals=dict(controller.class_summaries()),
        series=controller.series,
        redistributions=controller.redistributions,
        backlog=backlog,
        backlog_age_s=ages,
        idle_s=controller.idle_s,
        end_s=max(duration_s - _measured_from(controller), 1e-9),
        turns=controller.batches,
        actions=list(controller.action_log.actions),
        scaling=controller.scaling_summary(),
        oracle=controller.loop.oracle,
    )
    results = build_results(out)
    results["scenario"]["duration_s"] = duration_s - _measured_from(controller)
    if controller.options.plain:
        results["scenario"]["mode"] = "plain"
    results["engine"] = {
        "name": "spark",
        "batches": controller.batches,
        "batch_budget_weight_s": controller.budget.budget_s,
        "batch_fixed_s": controller.budget.fixed_s,
        "warmup_s": controller.options.warmup_s,
        "warmup_ended": not math.isnan(controller.measured_from_s),
        "measured_from_s": _measured_from(controller),
        "measured_costs": controller.options.measured_costs,
        "operator_costs": controller.declared_and_measured(),
        "branch_fixed_cpu_s": controller.branch_fixed_cpu(),
        "unattributed_task_s": controller.unattributed_task_s,
        **engine,
    }
    return results


MIN_MEASURED_PERIODS = 3
"""A run that measured fewer control periods than this has nothing to judge."""


def measurement_problem(results: Mapping[str, Any]) -> str | None:
    """Why a run's results judge nothing (None when they do): the warm-up never ended, or
    too few periods were measured after it."""
    engine, periods = results["engine"], len(results.get("series", ()))
    warmup = engine.get("warmup_s", 0.0)
    if not engine.get("warmup_ended", True):
        return (
            f"the warm-up ({warmup:g} s) overran: it did not end within the run "
            f"({engine.get('batches')} batches ran, every one in the warm-up); nothing was "
            "measured"
        )
    if periods < MIN_MEASURED_PERIODS:
        late = engine.get("measured_from_s", 0.0) - warmup
        overran = f"the warm-up ({warmup:g} s) overran by {late:.1f} s and " if late > 1 else ""
        return (
            f"{overran}{periods} control periods were measured "
            f"({results['scenario']['duration_s']:.1f} s); a run needs at least "
            f"{MIN_MEASURED_PERIODS} to be judged"
        )
    return None


def _measured_from(controller: EngineController) -> float:
    start = controller.measured_from_s
    return 0.0 if math.isnan(start) else start  # NaN: the warm-up never ended

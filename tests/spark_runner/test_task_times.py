"""Operator costs measured on Spark: the executor time of every query branch, from the
status store, against the declared costs (issue 14's first item).

Two classes read equal streams through equal plans except one map: ``cheap`` computes
``value * 2``, ``costly`` a SHA-256 of a 20,000-character string, both declared at cost 0.
With declared costs alone the two look the same; measured, the costly branch's operators
weigh many times the cheap one's, and the load model gives its class the larger load.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.scenario import parse_scenario
from spark_runner.scenario.models import MapOp

from .spark_helpers import Run

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

SCENARIO = """
version: 1
name: measured-costs
seed: 5
duration_s: 600
control: {period_s: 1.0, mode: none}
streams:
  - {name: a, arrival: {kind: constant, rate_per_s: 300}}
  - {name: b, arrival: {kind: constant, rate_per_s: 300}}
classes:
  - name: cheap
    priority: 6
    delay_target_s: 10
    queries:
      - name: q
        source: a
        operators:
          - {kind: map, expression: "value * 2", output: x, cpu_cost_per_tuple_s: 0}
          - {kind: project, columns: [key, x]}
  - name: costly
    priority: 1
    delay_target_s: 10
    queries:
      - name: q
        source: b
        operators:
          - kind: map
            expression: "sha2(lpad(CAST(value AS STRING), 10000, 'x'), 256)"
            output: x
            cpu_cost_per_tuple_s: 0
          - {kind: project, columns: [key, x]}
"""


def test_measured_costs_tell_an_expensive_expression_from_a_cheap_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    run = Run(spark, parse_scenario(SCENARIO), tmp_path, options=ControllerOptions())
    controller = run.engine.controller
    try:
        run.start().until(lambda: controller.batches >= 12, timeout_s=150)
    finally:
        run.stop()
    costs = controller.declared_and_measured()
    maps = {n.owner: n.op_id for n in controller.plan.nodes if isinstance(n.model, MapOp)}
    cheap, costly = maps["cheap"], maps["costly"]
    assert costs[cheap]["declared_s"] == costs[costly]["declared_s"]  # both declared 0 + a row
    assert costs[costly]["measured_s"] > 3 * costs[cheap]["measured_s"], costs
    # every branch was measured, and the final stage's tasks were told apart
    assert all(m > 0 for m in controller.scales.measured_s), controller.scales.measured_s
    assert controller.unattributed_task_s == 0.0
    loads = {n: c.cost_per_tuple_s for n, c in controller.load_model.snapshot().items()}
    assert loads["costly"] > 3 * loads["cheap"], loads

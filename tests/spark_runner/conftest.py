"""Fixtures of the Spark runner's tests: scenarios as text, compiled; one local Spark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.job.session import start_spark
from spark_runner.scenario import Scenario, load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def scenario_text(body: str) -> Scenario:
    return parse_scenario(body)


TWO_CLASSES = """
version: 1
name: two
seed: 3
duration_s: 60
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: a, arrival: {kind: constant, rate_per_s: 100}}
  - name: b
    arrival: {kind: step, steps: [{at_s: 0, rate_per_s: 50}, {at_s: 10, rate_per_s: 200}]}
classes:
  - name: gold
    priority: 6
    delay_target_s: 2
    queries:
      - name: q
        source: a
        operators:
          - {kind: filter, predicate: "value < 0.5"}
          - {kind: project, columns: [key, value]}
  - name: bronze
    priority: 1
    delay_target_s: 3
    queries:
      - name: q
        source: b
        operators:
          - {kind: map, expression: "value * 10", output: v10, cpu_cost_per_tuple_s: 0.0001}
          - {kind: window_aggregate, window: {size_s: 2}, function: sum, column: v10}
"""


# gold owns a cheap shared segment; bronze's branch after it burns 4 ms a tuple
SHARED_EXPENSIVE_LOWER = """
version: 1
name: shared-expensive-lower
seed: 21
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: s, arrival: {kind: constant, rate_per_s: 600}}
shared_segments:
  - name: seg
    source: s
    operators:
      - {kind: filter, predicate: "value < 0.9"}
classes:
  - name: gold
    priority: 6
    delay_target_s: 4
    manager: {kind: aloma, params: {max_shed: 0.99}}
    queries:
      - {name: q, source: seg, operators: [{kind: project, columns: [key, value]}]}
  - name: bronze
    priority: 1
    delay_target_s: 6
    manager: {kind: aloma, params: {max_shed: 0.99}}
    queries:
      - name: q
        source: seg
        operators:
          - {kind: map, expression: "value * 2", output: v2, cpu_cost_per_tuple_s: 0.004}
          - {kind: project, columns: [key, v2]}
"""


@pytest.fixture
def two_classes() -> Scenario:
    return parse_scenario(TWO_CLASSES)


@pytest.fixture
def sharing() -> Scenario:
    return load_scenario(SCENARIOS / "thesis" / "qn_a_sdc_sharing.yaml")


@pytest.fixture
def demo() -> Scenario:
    return load_scenario(SCENARIOS / "demo.yaml")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One local Spark (``local[2]``) for every test of the engine that runs on Spark,
    configured as a job's session is."""
    snapshot = JobSnapshot(
        job_id=0,
        api_url="",
        spark_master="local[2]",
        checkpoint_dir=str(tmp_path_factory.mktemp("unused")),
        classes=(ClassSnapshot(name="x"),),
        control=LiveConfig(classes={"x": ClassControl(priority=1, delay_target_s=1)}),
    )
    handle = start_spark(snapshot)
    try:
        yield handle.spark
    finally:
        handle.stop()

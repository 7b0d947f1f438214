"""The SQL of expressions, shedding and burn, and the scenario of a job launched without one."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.core.errors import ParameterError
from spark_runner.engine.dataflow.expressions import (
    burn_amounts,
    burn_sql,
    checked_sql,
    edge_shed_sql,
)
from spark_runner.engine.dataflow.jvm_burn import burn_jar
from spark_runner.engine.dataflow.network import compile_network
from spark_runner.scenario import Scenario
from spark_runner.scenario.compose import without_settings
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import FilterOp, MapOp
from spark_runner.scenario.snapshots import job_scenario


def test_maps_burn_their_cost_in_the_units_of_the_burn(two_classes: Scenario) -> None:
    plan = compile_network(two_classes)
    node = plan.graph.index("bronze.q.0.map")
    # bronze's map burns 1e-4 s per tuple: 1000 hash repetitions of 1e-7 s, or 100,000 ns
    assert burn_amounts(plan, 1e-7) == {node: 1000}
    assert burn_amounts(plan, 1e-9) == {node: 100_000}
    assert burn_amounts(plan, None) == {}
    assert burn_sql("1000").endswith("< 0")  # never true: nothing is dropped by a burn


def test_a_checked_map_and_filter_are_rebuilt_from_their_parsed_form(
    two_classes: Scenario,
) -> None:
    plan = compile_network(two_classes)
    models = {n.op_id: n.model for n in plan.nodes}
    gold_filter, bronze_map = models["gold.q.0.filter"], models["bronze.q.0.map"]
    assert isinstance(gold_filter, FilterOp) and isinstance(bronze_map, MapOp)
    assert checked_sql(gold_filter) == "value < 0.5"
    assert checked_sql(bronze_map) == "value * 10"


def test_the_burn_udf_builds_with_the_jdk(tmp_path: Path) -> None:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    jar = burn_jar(jars, cache_dir=tmp_path)
    if jar is None:
        pytest.skip("no JDK (javac, jar) on this machine: the engine uses the hash burn")
    with zipfile.ZipFile(jar.path) as z:
        assert "headroom/Burn.class" in z.namelist()
    assert burn_jar(jars, cache_dir=tmp_path) == jar  # cached


def test_an_edge_sheds_by_a_hash_of_the_tuple_against_the_rows_fraction() -> None:
    sql = edge_shed_sql(2, 7)
    assert "xxhash64(seq, point, 7)" in sql and sql.endswith("< shed_2")


def snapshot(**overrides: object) -> JobSnapshot:
    fields: dict[str, object] = {
        "job_id": 5,
        "api_url": "",
        "checkpoint_dir": "/tmp/x",
        "control_period_s": 0.5,
        "duration_s": 30.0,
        "classes": (
            ClassSnapshot(name="gold", rate_per_s=50, selectivity=0.5),
            ClassSnapshot(name="9lives", rate_per_s=10, selectivity=0.25),
        ),
        "control": LiveConfig(
            classes={
                "gold": ClassControl(priority=6, delay_target_s=2),
                "9lives": ClassControl(priority=1, delay_target_s=4),
            }
        ),
    }
    fields.update(overrides)
    return JobSnapshot(**fields)  # type: ignore[arg-type]


def test_derived_scenario_runs_the_skeletons_queries() -> None:
    scenario = scenario_from_dict(job_scenario(snapshot()))
    # a class keeps its name: the control plane and the scenario follow one name rule
    assert [c.name for c in scenario.classes] == ["gold", "9lives"]
    assert scenario.control.period_s == 0.5 and scenario.duration_s == 30.0
    gold = scenario.classes[0].queries[0]
    assert [op.kind for op in gold.operators] == ["filter", "project"]
    assert gold.operators[0].predicate == "value < 0.5"  # type: ignore[union-attr]
    assert scenario.stream(gold.source).arrival.rate_per_s == 50  # type: ignore[union-attr]
    compile_network(scenario)


def test_a_configuration_that_misses_a_class_is_refused_by_name() -> None:
    from spark_runner.job.main import prepare

    gold = LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)})
    with pytest.raises(ValidationError, match=r"control.classes \['gold'\] must name the classes"):
        snapshot(control=gold)
    document = job_scenario(snapshot())
    bare = {**document, "classes": [without_settings(c) for c in document["classes"]]}
    only_gold = snapshot(classes=(ClassSnapshot(name="gold"),), control=gold, scenario=bare)
    with pytest.raises(ParameterError, match=r"missing \['9lives'\]"):
        prepare(only_gold)

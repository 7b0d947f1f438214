"""Operator compilation to SQL, and the scenario of a job launched without one."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.core.errors import ParameterError
from spark_runner.engine.expressions import burn_sql, compile_pipeline
from spark_runner.engine.jvm_burn import burn_jar
from spark_runner.engine.network import compile_network
from spark_runner.job.derive import derived_scenario
from spark_runner.scenario import Scenario
from spark_runner.scenario.loader import scenario_from_dict


def test_layers_and_what_each_computes(two_classes: Scenario) -> None:
    plan = compile_network(two_classes)
    compiled = compile_pipeline(plan, repetition_s=1e-7)
    # start (place rows at their source), route, then per layer: apply + route; final
    assert len(compiled.stages) == 1 + 2 + plan.layers * 3 + 1
    apply = " ".join(compiled.stages[3])
    assert "(value < 0.5)" in apply  # gold's filter, as written in the scenario
    assert "CAST((value * 10) AS DOUBLE)" in apply  # bronze's map into v10
    # bronze's map burns 1e-4 s per tuple at 1e-7 s per repetition
    assert compiled.burn_repetitions == {plan.graph.index("bronze.q.0.map"): 1000}
    assert burn_sql("CASE node WHEN 4 THEN 1000 END") in apply
    assert compiled.edge_classes == ()
    assert compiled.stages[-1][-3:] == ("node", "side", "status")


def test_the_exact_burn_is_the_udf_in_nanoseconds(two_classes: Scenario) -> None:
    plan = compile_network(two_classes)
    compiled = compile_pipeline(plan, udf=True)
    node = plan.graph.index("bronze.q.0.map")
    assert compiled.burn_repetitions == {node: 100_000}
    assert f"headroom_burn(CAST(CASE node WHEN {node} THEN 100000 END AS BIGINT))" in " ".join(
        compiled.stages[3]
    )


def test_the_burn_udf_builds_with_the_jdk(tmp_path: Path) -> None:
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    jar = burn_jar(jars, cache_dir=tmp_path)
    if jar is None:
        pytest.skip("no JDK (javac, jar) on this machine: the engine uses the hash burn")
    with zipfile.ZipFile(jar.path) as z:
        assert "headroom/Burn.class" in z.namelist()
    assert burn_jar(jars, cache_dir=tmp_path) == jar  # cached


def test_projection_nulls_what_it_drops_and_edge_classes_get_a_column(sharing: Scenario) -> None:
    plan = compile_network(sharing)
    compiled = compile_pipeline(plan)
    assert compiled.edge_classes == (plan.class_names.index("class3"),)
    route = " ".join(compiled.stages[2])
    assert "shed_2" in route and "xxhash64(seq, point, r.c)" in route
    assert compiled.burn_repetitions == {}


def snapshot(**overrides: object) -> JobSnapshot:
    fields: dict[str, object] = {
        "job_id": 5,
        "api_url": "",
        "checkpoint_dir": "/tmp/x",
        "control_period_s": 0.5,
        "duration_s": 30.0,
        "classes": (
            ClassSnapshot(
                name="gold", priority=6, delay_target_s=2, rate_per_s=50, selectivity=0.5
            ),
            ClassSnapshot(
                name="9lives", priority=1, delay_target_s=4, rate_per_s=10, selectivity=0.25
            ),
        ),
    }
    fields.update(overrides)
    return JobSnapshot(**fields)  # type: ignore[arg-type]


def test_derived_scenario_runs_the_skeletons_queries() -> None:
    scenario = scenario_from_dict(derived_scenario(snapshot()))
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
    with pytest.raises(ParameterError, match=r"missing \['9lives'\]"):
        prepare(snapshot(control=gold))

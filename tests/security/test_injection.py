"""Probe: Spark SQL injection through a map operator's expression.

Before the allow-list, ``reflect('java.lang.System','getenv','HEADROOM_SECRET_KEY')`` in a
stored scenario or a class's query reached ``selectExpr`` and put the secret in the job's
log; ``reflect('java.io.File','createTempFile',…)`` created a file. Every expression is now
parsed and checked (functions, constructs, columns) when stored, when a scenario file is
loaded by ``headroom run``, and again when the job compiles its plan; Spark only ever sees
the checked tree rendered back to SQL.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from spark_runner.engine.dataflow.expressions import checked_sql
from spark_runner.scenario.errors import ScenarioError
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import FilterOp, MapOp
from spark_runner.scenario.sql_allowlist import SqlNotAllowed, check_expression

ROOT = Path(__file__).resolve().parents[2]

ATTACKS: list[tuple[str, str]] = [
    ("reflect('java.lang.System', 'getenv', 'HEADROOM_SECRET_KEY')", "'reflect'"),
    ("java_method('java.io.File', 'createTempFile', 'x', 'y')", "'java_method'"),
    ("value + length(reflect('java.lang.System', 'getenv', 'PATH'))", "'reflect'"),
    ("input_file_name()", "'input_file_name'"),
    ("input_file_block_start()", "'input_file_block_start'"),
    ("CREATE TEMPORARY FUNCTION evil AS 'x.Evil' USING JAR '/tmp/evil.jar'", "Create"),
    ("evil_udf(value)", "'evil_udf'"),
    ("value; CREATE FUNCTION evil AS 'x.Evil'", "Block"),
    ("(SELECT secret FROM t)", "Subquery"),
    ("value IN (SELECT 1)", "subquery"),
    ("transform(array(value), x -> reflect('a', 'b'))", "'transform'"),
    ("value /* */ + 1", "comment"),
    ("'\\u0027) , reflect(1) , (\\u0027'", "string literal"),
    ("rand()", "'rand'"),
    ("current_timestamp()", "'current_timestamp'"),
    ("raise_error('boom')", "'raise_error'"),
    ("`status` + 1 + t.value", "plain name"),
]


@pytest.mark.parametrize(("expression", "named"), ATTACKS)
def test_the_allow_list_refuses_and_names_the_construct(expression: str, named: str) -> None:
    with pytest.raises(SqlNotAllowed) as refused:
        check_expression(expression)
    assert named in str(refused.value)


@pytest.mark.parametrize(
    ("expression", "rendered", "columns"),
    [
        ("value * 2 + 1", "value * 2 + 1", {"value"}),
        ("CASE WHEN value > 0.5 THEN key ELSE 0 END", None, {"value", "key"}),
        ("abs(value) + sqrt(key) + pmod(key, 7)", None, {"value", "key"}),
        ("cast(value * 100 AS INT) % 3", None, {"value"}),
        ("coalesce(nullif(value, 0), 1) BETWEEN 0 AND 2", None, {"value"}),
        ("key IN (1, 2, 3) AND NOT value IS NULL", None, {"key", "value"}),
    ],
)
def test_the_allow_list_accepts_pure_expressions(
    expression: str, rendered: str | None, columns: set[str]
) -> None:
    checked = check_expression(expression)
    assert checked.columns == columns
    if rendered is not None:
        assert checked.sql == rendered


def test_length_and_nesting_are_bounded() -> None:
    with pytest.raises(SqlNotAllowed, match="limit is 1000"):
        check_expression("value + " * 200 + "1")
    with pytest.raises(SqlNotAllowed, match="parentheses 200 deep"):
        check_expression("(" * 200 + "value" + ")" * 200)


def _scenario(expression: str) -> dict[str, object]:
    return {
        "version": 1,
        "name": "probe",
        "duration_s": 10,
        "control": {"period_s": 1},
        "streams": [{"name": "trades", "arrival": {"kind": "constant", "rate_per_s": 10}}],
        "classes": [
            {
                "name": "fraud",
                "priority": 1,
                "delay_target_s": 2,
                "queries": [
                    {
                        "name": "q",
                        "source": "trades",
                        "operators": [
                            {"kind": "map", "expression": expression, "cpu_cost_per_tuple_s": 0}
                        ],
                    }
                ],
            }
        ],
    }


def test_a_scenario_file_with_reflect_is_refused_at_its_path() -> None:
    with pytest.raises(ScenarioError) as refused:
        scenario_from_dict(_scenario(ATTACKS[0][0]))
    [issue] = refused.value.issues
    assert issue.path == "classes[0].queries[0].operators[0].expression"
    assert "'reflect'" in issue.message and "allow-list" in issue.message


def test_a_map_reading_a_column_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ScenarioError) as refused:
        scenario_from_dict(_scenario("status + shed_0"))
    [issue] = refused.value.issues
    assert issue.path == "classes[0].queries[0].operators[0].expression"
    assert "'shed_0'" in issue.message and "'status'" in issue.message


def test_the_plan_checks_again_at_launch() -> None:
    """An operator that skipped validation (built without it) still cannot reach Spark."""
    smuggled = MapOp.model_construct(
        kind="map", expression=ATTACKS[0][0], output="value", cpu_cost_per_tuple_s=0.0
    )
    with pytest.raises(SqlNotAllowed, match="'reflect'"):
        checked_sql(smuggled)
    predicate = FilterOp.model_construct(kind="filter", predicate="value > 1 or reflect('a')")
    with pytest.raises(ValueError, match="cannot read"):
        checked_sql(predicate)


@pytest.mark.parametrize(("expression", "named"), ATTACKS[:8])
def test_the_api_refuses_a_class_query(client: TestClient, expression: str, named: str) -> None:
    class_id = client.post(
        "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2}
    ).json()["id"]
    url = f"/api/v1/classes/{class_id}/queries"
    operator = {"kind": "map", "expression": expression, "cpu_cost_per_tuple_s": 0}
    response = client.post(url, json={"name": "q", "source": "trades", "operators": [operator]})
    assert response.status_code == 422, response.text
    [item] = response.json()["detail"]
    assert item["loc"][-1] == "operators[0].expression"
    assert named in item["msg"]
    assert client.get(url).json() == []


def test_the_api_refuses_a_stored_scenario(client: TestClient) -> None:
    text = yaml.safe_dump(_scenario(ATTACKS[1][0]))
    response = client.post("/api/v1/scenarios", json={"yaml": text})
    assert response.status_code == 422, response.text
    [item] = response.json()["detail"]
    assert item["loc"][-1] == "classes[0].queries[0].operators[0].expression"
    assert "'java_method'" in item["msg"]
    assert client.get("/api/v1/scenarios").json() == []


@pytest.mark.parametrize("engine", ["sim", "spark"])
def test_headroom_run_refuses_before_starting(tmp_path: Path, engine: str) -> None:
    marker = tmp_path / "created-by-the-probe"
    scenario = tmp_path / "probe.yaml"
    attack = f"java_method('java.io.File', 'createTempFile', 'x', '{marker}')"
    scenario.write_text(yaml.safe_dump(_scenario(attack)))
    run = subprocess.run(
        [sys.executable, "-m", "headroom", "run", str(scenario), "--engine", engine],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode != 0
    assert "operators[0].expression" in run.stderr and "'java_method'" in run.stderr
    assert "Traceback" not in run.stderr
    assert not list(tmp_path.glob("x*y")) and not marker.exists()

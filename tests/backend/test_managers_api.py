"""GET /managers: every registered load manager with its parameters, defaults and rules,
described by the same declarations the core validates with."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers.catalogue import ParamInfo, describe_managers
from spark_runner.core.managers.registry import MANAGER_KINDS, MANAGER_TYPES, manager_params
from spark_runner.core.params import Rule, params_as_dict, rule_bounds


def test_lists_every_registered_manager_with_its_defaults(client: TestClient) -> None:
    response = client.get("/api/v1/managers")
    assert response.status_code == 200, response.text
    managers = response.json()
    assert [m["kind"] for m in managers] == list(MANAGER_KINDS)
    assert [m["kind"] for m in managers if m["default"]] == ["aloma"]
    for manager in managers:
        defaults = params_as_dict(MANAGER_TYPES[manager["kind"]].params_type())
        params = {p["name"]: p for p in manager["parameters"]}
        # The delay target is the class's own field, not a manager parameter.
        assert set(params) == set(defaults) - {"delay_target_s"}
        assert all(params[name]["default"] == defaults[name] for name in params)
        assert manager["label"] and manager["summary"]
        for param in manager["parameters"]:
            assert param["description"], (manager["kind"], param["name"])
            assert param["rules"], (manager["kind"], param["name"])
    aloma = {p["name"]: p for p in managers[0]["parameters"]}
    assert aloma["initial_headroom"] | {"description": "", "default": None} == {
        "name": "initial_headroom",
        "type": "float",
        "default": None,
        "description": "",
        "unit": "s/s",
        "rules": ["must be > 0 s/s"],
        "minimum": None,
        "exclusive_minimum": 0.0,
        "maximum": None,
        "exclusive_maximum": None,
        "choices": None,
    }
    assert aloma["response_statistic"]["choices"] == ["max", "mean"]
    assert (
        aloma["response_statistic"]["type"] == "str"
        and aloma["response_statistic"]["default"] == "max"
    )
    assert aloma["o_point_refresh_periods"]["type"] == "int"
    assert aloma["o_point_refresh_periods"]["minimum"] == 1
    # Two rules on one field: the range is their intersection, (0, 1].
    assert aloma["drain_target"]["exclusive_minimum"] == 0.0
    assert aloma["drain_target"]["maximum"] == 1.0


def test_needs_a_signed_in_user(anonymous: TestClient) -> None:
    assert anonymous.get("/api/v1/managers").status_code == 401


def _outside(param: ParamInfo) -> list[float]:
    """Values just outside the described range (each must be refused)."""
    step = 1 if param.type == "int" else 1e-6
    values: list[float] = []
    if param.minimum is not None:
        values.append(param.minimum - step)
    if param.exclusive_minimum is not None:
        values.append(param.exclusive_minimum)
    if param.maximum is not None:
        values.append(param.maximum + step)
    if param.exclusive_maximum is not None:
        values.append(param.exclusive_maximum)
    return values


CASES = [
    (info.kind, param)
    for info in describe_managers()
    for param in info.parameters
    if param.type in ("float", "int")
    and any(b is not None for b in (param.minimum, param.exclusive_minimum, param.maximum))
]


@pytest.mark.parametrize(("kind", "param"), CASES, ids=[f"{k}.{p.name}" for k, p in CASES])
def test_described_bounds_are_the_validated_ones(kind: str, param: ParamInfo) -> None:
    for value in _outside(param):
        with pytest.raises(ParameterError) as refused:
            manager_params(kind, {param.name: value})
        assert refused.value.field == param.name and refused.value.rule in param.rules
    for bound in (param.minimum, param.maximum):
        if bound is not None:
            manager_params(kind, {param.name: bound})  # inclusive bounds are accepted


def test_choices_are_the_validated_ones() -> None:
    for info in describe_managers():
        for param in info.parameters:
            if param.choices:
                for choice in param.choices:
                    manager_params(info.kind, {param.name: choice})
                with pytest.raises(ParameterError):
                    manager_params(info.kind, {param.name: "not-a-choice"})


def test_rule_bounds_take_the_tightest_range() -> None:
    bounds = rule_bounds([Rule.closed(0.0, 1.0), Rule.positive()])
    assert (bounds.minimum, bounds.exclusive_minimum, bounds.maximum) == (None, 0.0, 1.0)
    assert rule_bounds([Rule.half_open(0.0, 1.0)]).exclusive_maximum == 1.0
    assert rule_bounds([Rule.checked_elsewhere("ordered")]) == rule_bounds([])
    assert rule_bounds([Rule.at_least(3)]).minimum == 3


def test_a_value_outside_the_rules_is_a_422_naming_the_parameter(client: TestClient) -> None:
    response = client.post(
        "/api/v1/classes",
        json={
            "name": "c",
            "priority": 1,
            "delay_target_s": 2,
            "manager": "aloma",
            "manager_params": {"drain_target": 0},
        },
    )
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["loc"][-1] == "manager_params.drain_target"
    assert item["msg"] == "manager_params.drain_target=0.0 is invalid: must be > 0"

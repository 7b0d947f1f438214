"""Live configuration versions applied to the running control plane (no Spark)."""

from __future__ import annotations

import pytest

from spark_runner.contract.control import LiveConfig
from spark_runner.control.live import apply_live_config
from spark_runner.control.plane import PerClassControl, make_control_plane
from spark_runner.core.errors import ParameterError
from spark_runner.core.load_model import LoadModel
from spark_runner.engine.dataflow.network import compile_network
from spark_runner.scenario import Scenario, parse_scenario
from spark_runner.scenario.compose import scenario_live_config

from .conftest import TWO_CLASSES


def control(scenario: Scenario) -> PerClassControl:
    plan = compile_network(scenario)
    plane = make_control_plane(scenario, LoadModel(plan.graph, plan.priorities))
    assert isinstance(plane, PerClassControl)
    return plane


def changed(live: LiveConfig, name: str, **fields: object) -> LiveConfig:
    cls = live.classes[name].model_copy(update=fields)
    return live.model_copy(
        update={"version": live.version + 1, "classes": {**live.classes, name: cls}}
    )


def test_the_scenario_is_version_zero(two_classes: Scenario) -> None:
    live = scenario_live_config(two_classes)
    assert live.version == 0 and live.redistribution_enabled
    assert live.classes["gold"].priority == 6 and live.classes["bronze"].delay_target_s == 3


def test_priority_delay_and_parameters(two_classes: Scenario) -> None:
    plane = control(two_classes)
    live = scenario_live_config(two_classes)
    new = changed(live, "bronze", priority=6, delay_target_s=5.0, manager_params={"max_shed": 0.5})
    changes = apply_live_config(plane, live, new)
    ctl = plane.controller
    assert ctl.quotas() == pytest.approx({"gold": 0.5, "bronze": 0.5})
    assert ctl.spec("bronze").delay_target_s == 5.0
    assert ctl.manager("bronze").params.max_shed == 0.5
    assert "bronze.priority=6" in changes


def test_catching_up_at_start_is_read_from_the_scenario_and_changes_live() -> None:
    billing = parse_scenario(
        TWO_CLASSES.replace("priority: 1\n", "priority: 1\n    catch_up: true\n")
    )
    plane = control(billing)
    live = scenario_live_config(billing)
    assert live.classes["bronze"].model_dump()["catch_up"]
    assert not live.classes["gold"].model_dump()["catch_up"]
    assert plane.controller.spec("bronze").catch_up
    changes = apply_live_config(plane, live, changed(live, "bronze", catch_up=False))
    assert not plane.controller.spec("bronze").catch_up and changes == ["bronze.catch_up=False"]


def test_another_manager_and_controller_parameters(two_classes: Scenario) -> None:
    plane = control(two_classes)
    live = scenario_live_config(two_classes)
    new = changed(live, "gold", manager="ctrl", manager_params={}).model_copy(
        update={"redistribution_every": 3, "policy": "strict"}
    )
    apply_live_config(plane, live, new)
    assert plane.controller.manager("gold").kind == "ctrl"
    assert plane.controller.params.redistribution_every == 3
    assert plane.controller.params.policy == "strict"


def test_a_rejected_version_changes_nothing(two_classes: Scenario) -> None:
    plane = control(two_classes)
    live = scenario_live_config(two_classes)
    bad = changed(live, "gold", manager_params={"max_shed": 1.5})
    with pytest.raises(ParameterError, match="max_shed"):
        apply_live_config(plane, live, bad)
    assert plane.controller.manager("gold").params.max_shed == 0.95
    with pytest.raises(ParameterError, match="not classes of this run"):
        apply_live_config(
            plane,
            live,
            live.model_copy(update={"classes": {**live.classes, "x": live.classes["gold"]}}),
        )


def test_common_mode_applies_only_recommend_only(two_classes: Scenario) -> None:
    common = parse_scenario(TWO_CLASSES.replace("mode: dilos", "mode: common"))
    plan = compile_network(common)
    plane = make_control_plane(common, LoadModel(plan.graph, plan.priorities))
    live = scenario_live_config(common)
    new = changed(live, "gold", priority=2.0).model_copy(update={"recommend_only": True})
    changes = apply_live_config(plane, live, new)
    assert changes[0] == "recommend_only=True"
    assert "ignored in common mode: gold" in changes[1]

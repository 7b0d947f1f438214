"""A class setting is declared once (spark_runner/core/class_settings.py); every layer
that lists the settings by name lists exactly the declared ones, with the declared
default, so a setting added to the declaration and forgotten in a layer fails here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_type_hints

import pytest
import yaml
from pydantic import BaseModel

from backend.classes.models import QueryClass as QueryClassRow
from backend.classes.schemas import ClassChange, QueryClassCreate, QueryClassRead
from frontend import api
from spark_runner.contract.control import ClassControl
from spark_runner.core.class_settings import CLASS_SETTINGS, SETTING_NAMES, default_of
from spark_runner.core.dilos import ClassSpec
from spark_runner.core.thresholds import TAUS
from spark_runner.scenario.compose import class_control, scenario_class
from spark_runner.scenario.loader import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
NOT_SETTINGS = {"id", "name", "created_at", "updated_at"}


def _settings_of(names: Iterable[str]) -> set[str]:
    return set(names) - NOT_SETTINGS


@pytest.mark.parametrize(
    "model", [ClassControl, QueryClassCreate, ClassChange, QueryClassRead], ids=lambda m: m.__name__
)
def test_every_class_model_has_exactly_the_declared_settings(model: type[BaseModel]) -> None:
    assert _settings_of(model.model_fields) == set(SETTING_NAMES)


@pytest.mark.parametrize(
    "typed", [api.QueryClass, api.QueryClassCreate, api.ClassConfig], ids=lambda t: t.__name__
)
def test_the_dashboard_types_have_exactly_the_declared_settings(typed: type) -> None:
    assert _settings_of(get_type_hints(typed)) == set(SETTING_NAMES)


def test_the_table_has_a_column_per_setting_and_defaults_as_declared() -> None:
    """(The API always writes every setting; a column default serves rows written before
    the setting existed.)"""
    columns = QueryClassRow.__table__.columns
    assert _settings_of(columns.keys()) == set(SETTING_NAMES)
    for setting in CLASS_SETTINGS:
        if not setting.required and setting.type is not dict:
            assert columns[setting.name].default.arg == setting.default, setting.name


@pytest.mark.parametrize(
    "made",
    [
        ClassControl(priority=3.0, delay_target_s=1.5),
        QueryClassCreate.model_validate({"name": "c", "priority": 3.0, "delay_target_s": 1.5}),
    ],
    ids=lambda m: type(m).__name__,
)
def test_every_class_model_defaults_a_setting_as_declared(made: BaseModel) -> None:
    for setting in CLASS_SETTINGS:
        if not setting.required:
            assert getattr(made, setting.name) == default_of(setting.name), setting.name


def _spec_value(spec: ClassSpec, name: str) -> Any:
    if name in TAUS:
        return getattr(spec.thresholds, name)
    if name == "manager":
        return spec.manager_kind
    return getattr(spec, name)


def test_the_core_defaults_a_class_as_declared_and_reads_every_setting() -> None:
    spec = ClassSpec(name="c", priority=3.0, delay_target_s=1.5)
    assert {s.name: _spec_value(spec, s.name) for s in CLASS_SETTINGS if not s.required} == {
        s.name: default_of(s.name) for s in CLASS_SETTINGS if not s.required
    }
    control = ClassControl.model_validate(EVERY_SETTING_CHANGED)
    spec = control.spec("c")
    assert {s.name: _spec_value(spec, s.name) for s in CLASS_SETTINGS} == control.model_dump()


EVERY_SETTING_CHANGED: dict[str, Any] = {
    "priority": 3.0,
    "delay_target_s": 1.5,
    "tau0": 0.1,
    "manager": "ctrl",
    "manager_params": {"max_shed": 0.5},
    "reserve_fraction": 0.1,
    "max_lend_fraction": 0.5,
    "catch_up": True,
    "max_shed_fraction": 0.25,
}
"""A class with every setting off its default but τ1..τ3 (their order binds them)."""


def test_the_scenario_format_carries_every_setting_both_ways() -> None:
    control = ClassControl.model_validate(EVERY_SETTING_CHANGED)
    changed = {s.name for s in CLASS_SETTINGS if getattr(control, s.name) != default_of(s.name)}
    assert changed == set(SETTING_NAMES) - {"tau1", "tau2", "tau3"}
    doc = yaml.safe_load((ROOT / "scenarios" / "demo.yaml").read_text())
    doc["classes"][0] = scenario_class("c", control, doc["classes"][0]["queries"])
    loaded = scenario_from_dict(doc).classes[0]
    assert class_control(loaded) == control

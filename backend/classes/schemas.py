"""Request and response bodies. Ordering of τ0..τ3 is checked by the core's rule."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.api.body_limits import KIB
from spark_runner.contract.control import ClassControl
from spark_runner.contract.settings import setting_field
from spark_runner.core.class_settings import SETTING_NAMES, ClassSetting, default_of
from spark_runner.core.managers.registry import MANAGER_KINDS
from spark_runner.core.params import ParamValue
from spark_runner.scenario.models import (
    NAME_MAX_LENGTH,
    NAME_PATTERN,
)


class QueryClassCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "name": "fraud",
                    "priority": 6,
                    "delay_target_s": 1.5,
                    "tau0": 0.2,
                    "tau1": 0.4,
                    "tau2": 0.8,
                    "tau3": 0.95,
                }
            ]
        },
    )

    name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN)
    priority: float = setting_field("priority", bounded=True)
    delay_target_s: float = setting_field("delay_target_s", bounded=True)
    tau0: float = setting_field("tau0")
    tau1: float = setting_field("tau1")
    tau2: float = setting_field("tau2")
    tau3: float = setting_field("tau3")
    manager: str = setting_field(
        "manager", max_length=20, description=f"Load manager: {', '.join(MANAGER_KINDS)}."
    )
    manager_params: dict[str, ParamValue] = setting_field("manager_params", max_length=50)
    reserve_fraction: float = setting_field("reserve_fraction")
    max_lend_fraction: float = setting_field("max_lend_fraction")
    catch_up: bool = setting_field("catch_up")

    @model_validator(mode="after")
    def _core_rules(self) -> Self:
        control_of(self.model_dump()).spec(self.name)
        return self


MAX_CLASS_CHANGE_JSON_BYTES = 2 * KIB
"""The widest class change as JSON under its class's name: every field set, every number
at its widest (24 characters), every parameter of the manager with the most set, the name
and the manager at their maximum lengths with every character escaped, is 1.7 KB."""


class ClassChange(BaseModel):
    """The live-tunable fields of a class, all optional: what is left out keeps its value.

    Used for class updates and, per class, for live changes of a running job."""

    model_config = ConfigDict(extra="forbid")

    priority: float | None = setting_field("priority", optional=True, bounded=True)
    delay_target_s: float | None = setting_field("delay_target_s", optional=True, bounded=True)
    tau0: float | None = setting_field("tau0", optional=True)
    tau1: float | None = setting_field("tau1", optional=True)
    tau2: float | None = setting_field("tau2", optional=True)
    tau3: float | None = setting_field("tau3", optional=True)
    manager: str | None = setting_field("manager", optional=True, max_length=20)
    manager_params: dict[str, ParamValue] | None = setting_field(
        "manager_params", optional=True, max_length=50
    )
    reserve_fraction: float | None = setting_field("reserve_fraction", optional=True)
    max_lend_fraction: float | None = setting_field("max_lend_fraction", optional=True)
    catch_up: bool | None = setting_field("catch_up", optional=True)


class QueryClassUpdate(ClassChange):
    """Partial update; the merged result must still satisfy every rule."""

    name: str | None = Field(
        default=None, min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN
    )


class QueryClassRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    priority: float
    delay_target_s: float
    tau0: float
    tau1: float
    tau2: float
    tau3: float
    manager: str
    manager_params: dict[str, ParamValue]
    reserve_fraction: float
    max_lend_fraction: float
    catch_up: bool
    created_at: datetime
    updated_at: datetime


def control_of(values: Mapping[str, Any]) -> ClassControl:
    """The live-control view of a class's stored or requested values."""
    return ClassControl(**{field: values[field] for field in SETTING_NAMES})


class ClassSettingRead(BaseModel):
    """One setting of a query class, as it is declared once for every layer
    (``spark_runner.core.class_settings``)."""

    name: str
    type: Literal["float", "bool", "str", "object"]
    label: str
    description: str
    unit: str = Field(description="e.g. s; empty for a ratio or a name.")
    required: bool = Field(description="A new class must give it (no default).")
    default: Any = Field(description="What a new class gets when it gives none.")
    rule: str = Field(description="The bounds, worded as a 422 for a value outside states them.")
    minimum: float | None = Field(description="Smallest allowed value (inclusive).")
    exclusive_minimum: float | None = Field(description="Values must be greater than this.")
    maximum: float | None = Field(description="Largest allowed value (inclusive).")
    exclusive_maximum: float | None = Field(description="Values must be less than this.")
    live: bool = Field(description="A running job takes a change to it (live tuning).")

    @classmethod
    def of(cls, setting: ClassSetting) -> ClassSettingRead:
        low, high = setting.minimum, setting.maximum
        return cls(
            name=setting.name,
            type=_TYPE_NAMES[setting.type],
            label=setting.label,
            description=setting.description,
            unit=setting.unit,
            required=setting.required,
            default=default_of(setting.name),
            rule=setting.rule,
            minimum=None if setting.above else low,
            exclusive_minimum=low if setting.above else None,
            maximum=None if setting.below else high,
            exclusive_maximum=high if setting.below else None,
            live=setting.live,
        )


_TYPE_NAMES: dict[type, Literal["float", "bool", "str", "object"]] = {
    float: "float",
    bool: "bool",
    str: "str",
    dict: "object",
}

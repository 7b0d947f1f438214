"""Request and response bodies. Ordering of τ0..τ3 is checked by the core's rule."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.api.body_limits import KIB
from backend.api.schemas import request_config
from spark_runner.contract.control import ClassControl
from spark_runner.contract.settings import with_class_settings
from spark_runner.core.class_settings import SETTING_NAMES, ClassSetting, default_of
from spark_runner.scenario.models import (
    NAME_MAX_LENGTH,
    NAME_PATTERN,
)

_BOUNDED = ("priority", "delay_target_s")
"""The settings the API bounds in its schema (the core's rules judge the others)."""


@with_class_settings(bounded=_BOUNDED)
class QueryClassCreate(BaseModel):
    model_config = request_config(
        {
            "name": "fraud",
            "priority": 6,
            "delay_target_s": 1.5,
            "tau0": 0.2,
            "tau1": 0.4,
            "tau2": 0.8,
            "tau3": 0.95,
        }
    )

    name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN)

    @model_validator(mode="after")
    def _core_rules(self) -> Self:
        control_of(self.model_dump()).spec(self.name)
        return self


MAX_CLASS_CHANGE_JSON_BYTES = 2 * KIB
"""The widest class change as JSON under its class's name: every field set, every number
at its widest (24 characters), every parameter of the manager with the most set, the name
and the manager at their maximum lengths with every character escaped, is 1.7 KB."""


@with_class_settings(optional=True, bounded=_BOUNDED)
class ClassChange(BaseModel):
    """The live-tunable fields of a class, all optional: what is left out keeps its value.
    A field per class setting (``with_class_settings``).

    Used for class updates and, per class, for live changes of a running job."""

    model_config = ConfigDict(extra="forbid")


class QueryClassUpdate(ClassChange):
    """Partial update; the merged result must still satisfy every rule."""

    name: str | None = Field(
        default=None, min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN
    )


@with_class_settings(read=True)
class QueryClassRead(BaseModel):
    """A stored class: its name, stamps and a field per class setting."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
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
    max_length: int | None = Field(
        description="Most characters of a string, or entries of an object (None: no limit)."
    )
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
            max_length=setting.max_length,
            live=setting.live,
        )


_TYPE_NAMES: dict[type, Literal["float", "bool", "str", "object"]] = {
    float: "float",
    bool: "bool",
    str: "str",
    dict: "object",
}

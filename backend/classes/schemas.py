"""Request and response bodies. Ordering of τ0..τ3 is checked by the core's rule."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.api.body_limits import KIB
from spark_runner.contract.control import CLASS_FIELDS, ClassControl
from spark_runner.core.managers.registry import MANAGER_KINDS
from spark_runner.core.params import ParamValue
from spark_runner.core.thresholds import Thresholds
from spark_runner.scenario.models import (
    MAX_DELAY_TARGET_S,
    MAX_PRIORITY,
    MIN_DELAY_TARGET_S,
    NAME_MAX_LENGTH,
    NAME_PATTERN,
)

_DEFAULT = Thresholds()


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
    priority: float = Field(gt=0, le=MAX_PRIORITY, description="Larger means more important.")
    delay_target_s: float = Field(
        ge=MIN_DELAY_TARGET_S,
        le=MAX_DELAY_TARGET_S,
        description="Worst-case response time, s (the scenario format's bounds).",
    )
    tau0: float = Field(
        default=_DEFAULT.tau0,
        description="An elastic job (scenario control.elastic) releases executors once its "
        "usage has stayed at or below the lowest tau0 of its classes for its hold time.",
    )
    tau1: float = Field(
        default=_DEFAULT.tau1,
        description="An elastic job resizes its pool, in one step, to bring its usage to the "
        "lowest tau1 of its classes.",
    )
    tau2: float = Field(
        default=_DEFAULT.tau2,
        description="The linear manager sheds above this usage; while an elastic job adds "
        "executors it sheds only the load above the lowest tau2 of its classes.",
    )
    tau3: float = Field(
        default=_DEFAULT.tau3,
        description="An elastic job adds executors once its usage has stayed at or above the "
        "lowest tau3 of its classes for its hold time.",
    )
    manager: str = Field(
        default="aloma",
        max_length=20,
        description=f"Load manager: {', '.join(MANAGER_KINDS)}.",
    )
    manager_params: dict[str, ParamValue] = Field(
        default_factory=dict,
        max_length=50,
        description="The manager's parameters; spec defaults for the rest.",
    )
    reserve_fraction: float = Field(
        default=0.05, description="Share of its original quota a lending class keeps spare."
    )
    max_lend_fraction: float = Field(
        default=1.0, description="Largest share of its original quota the class may lend."
    )
    catch_up: bool = Field(
        default=False,
        description="At start, serve the backlog already in the log (Redis, files) instead "
        "of shedding first what is already past the target (a class whose every tuple "
        "matters more than its latency, e.g. billing).",
    )

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

    priority: float | None = Field(default=None, gt=0, le=MAX_PRIORITY)
    delay_target_s: float | None = Field(default=None, ge=MIN_DELAY_TARGET_S, le=MAX_DELAY_TARGET_S)
    tau0: float | None = None
    tau1: float | None = None
    tau2: float | None = None
    tau3: float | None = None
    manager: str | None = Field(default=None, max_length=20)
    manager_params: dict[str, ParamValue] | None = Field(default=None, max_length=50)
    reserve_fraction: float | None = None
    max_lend_fraction: float | None = None
    catch_up: bool | None = None


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
    return ClassControl(**{field: values[field] for field in CLASS_FIELDS})

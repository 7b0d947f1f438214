"""Request and response bodies. Ordering of τ0..τ3 is checked by the core's rule."""

from __future__ import annotations

from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spark_runner.core.thresholds import Thresholds, validate_thresholds

_DEFAULT = Thresholds()

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


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

    name: str = Field(min_length=1, max_length=100, pattern=NAME_PATTERN)
    priority: float = Field(gt=0, le=1e6, description="Larger means more important.")
    delay_target_s: float = Field(gt=0, le=86_400, description="Worst-case response time, s.")
    tau0: float = Field(default=_DEFAULT.tau0, description="Release workers below this usage.")
    tau1: float = Field(default=_DEFAULT.tau1, description="Expected initial usage.")
    tau2: float = Field(default=_DEFAULT.tau2, description="Start shedding above this usage.")
    tau3: float = Field(default=_DEFAULT.tau3, description="Add workers above this usage.")

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        validate_thresholds(self.tau0, self.tau1, self.tau2, self.tau3)
        return self


class QueryClassUpdate(BaseModel):
    """Partial update; the merged result must still satisfy every rule."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=100, pattern=NAME_PATTERN)
    priority: float | None = Field(default=None, gt=0, le=1e6)
    delay_target_s: float | None = Field(default=None, gt=0, le=86_400)
    tau0: float | None = None
    tau1: float | None = None
    tau2: float | None = None
    tau3: float | None = None


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
    created_at: datetime
    updated_at: datetime

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from spark_runner.core.params import ParamValue


class ManagerParamRead(BaseModel):
    """One parameter of a load manager, as the core defines and validates it."""

    model_config = ConfigDict(from_attributes=True)

    name: str
    type: Literal["float", "int", "bool", "str"]
    default: ParamValue
    description: str = Field(description="The core's own sentence for the parameter.")
    unit: str | None = Field(description="e.g. s/s; None when the rules name none.")
    rules: list[str] = Field(
        description="Every rule, worded as a 422 for a value that breaks it states it."
    )
    minimum: float | None = Field(description="Smallest allowed value (inclusive).")
    exclusive_minimum: float | None = Field(description="Values must be greater than this.")
    maximum: float | None = Field(description="Largest allowed value (inclusive).")
    exclusive_maximum: float | None = Field(description="Values must be less than this.")
    choices: list[str] | None = Field(description="The allowed values of a text parameter.")


class ManagerRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    kind: str = Field(description="What a class's ``manager`` field takes.")
    label: str
    summary: str
    default: bool = Field(description="The manager a new class gets when it names none.")
    parameters: list[ManagerParamRead] = Field(
        description="What ``manager_params`` accepts; defaults apply to what is left out. "
        "The delay target is the class's own field, not a manager parameter."
    )

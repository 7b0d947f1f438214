from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.api.schemas import request_config
from backend.scenarios.schemas import SCENARIO_BODY_BYTES
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.columns import MAX_COLUMNS, ColumnName, StreamColumn
from spark_runner.scenario.compose import RESERVED_STREAM_PREFIXES
from spark_runner.scenario.models import NAME_MAX_LENGTH, NAME_PATTERN, check_schema

STREAM_BODY_BYTES = SCENARIO_BODY_BYTES
"""The body limit of ``POST /streams`` and ``PUT /streams/{id}``: a stream declares what a
scenario's ``streams[]`` entry does, in no more than a scenario document may hold (the
schema's own maxima, 64 columns of 1,000 choices of 200 characters, multiply to 12.8
million characters, more than any scenario holds)."""


class StreamSpec(BaseModel):
    max_body_bytes: ClassVar[int] = STREAM_BODY_BYTES

    model_config = request_config(
        {
            "name": "trades",
            "columns": [
                {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 50}},
                {"name": "amount", "type": "double"},
                {
                    "name": "ts",
                    "type": "timestamp",
                    "generator": {"kind": "arrival", "lag_max_s": 1},
                },
            ],
            "event_time": "ts",
        }
    )

    name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN)
    columns: list[StreamColumn] = Field(
        min_length=1,
        max_length=MAX_COLUMNS,
        description="The columns its tuples carry (docs/scenario-format.md, streams[].columns).",
    )
    event_time: ColumnName | None = Field(
        default=None,
        description="The timestamp column windows and joins use; default: arrival time.",
    )
    description: str = Field(default="", max_length=1000)

    @model_validator(mode="after")
    def _schema(self) -> Self:
        for prefix in RESERVED_STREAM_PREFIXES:
            if self.name.startswith(prefix):
                raise ParameterError(
                    "name",
                    self.name,
                    f"names starting with {prefix!r} are the control plane's own; choose another",
                )
        check_schema(self.name, self.columns, self.event_time)
        return self


class StreamRead(StreamSpec):
    model_config = ConfigDict(from_attributes=True)

    id: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TypeChange:
    """A declared column's type as a change of its stream would change it."""

    path: str
    """Where in the request, e.g. ``columns[1].type``."""
    old: str
    new: str

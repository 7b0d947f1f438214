from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backend.api.body_limits import ENVELOPE_BYTES, json_text_bytes
from backend.api.schemas import request_config

EXAMPLE = """version: 1
name: two-classes
duration_s: 120
control: {period_s: 1.0}
streams:
  - {name: trades, arrival: {kind: constant, rate_per_s: 500}}
classes:
  - name: fraud
    priority: 6
    delay_target_s: 1.5
    queries:
      - {name: big, source: trades, operators: [{kind: filter, predicate: "value > 0.9"}]}
"""


MAX_SCENARIO_CHARS = 1_000_000
"""Longest scenario document (characters)."""
SCENARIO_BODY_BYTES = json_text_bytes(MAX_SCENARIO_CHARS) + ENVELOPE_BYTES
"""The body limit of ``POST /scenarios`` and ``PUT /scenarios/{id}``: the longest document,
every character escaped."""


class ScenarioUpload(BaseModel):
    max_body_bytes: ClassVar[int] = SCENARIO_BODY_BYTES

    model_config = request_config({"yaml": EXAMPLE})

    yaml: str = Field(
        min_length=1, max_length=MAX_SCENARIO_CHARS, description="The scenario document."
    )


class ScenarioRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    description: str
    document: dict[str, Any]
    created_by: str | None
    created_at: datetime
    updated_at: datetime


class ScenarioSummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    description: str
    updated_at: datetime

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backend.api.body_limits import ENVELOPE_BYTES, json_text_bytes
from backend.api.schemas import request_config
from backend.queries.models import ContinuousQuery
from spark_runner.scenario.compose import QueryPart
from spark_runner.scenario.models import NAME_MAX_LENGTH, NAME_PATTERN
from spark_runner.scenario.sql_allowlist import MAX_QUERY_CHARS

MAX_QUERY_OPERATORS = 100
"""Most operators of one stored query."""
QUERY_BODY_BYTES = MAX_QUERY_OPERATORS * json_text_bytes(MAX_QUERY_CHARS) + ENVELOPE_BYTES
"""The body limit of ``POST /classes/{class_id}/queries`` and ``PUT …/{query_id}``: every
operator holding the longest text any operator holds (a SQL statement), every character
escaped."""


class QuerySpec(BaseModel):
    max_body_bytes: ClassVar[int] = QUERY_BODY_BYTES

    model_config = request_config(
        {
            "name": "big-trades",
            "source": "trades",
            "operators": [
                {"kind": "filter", "predicate": "value > 0.9"},
                {
                    "kind": "window_aggregate",
                    "window": {"type": "tumbling", "size_s": 5},
                    "function": "count",
                },
            ],
        }
    )

    name: str = Field(min_length=1, max_length=NAME_MAX_LENGTH, pattern=NAME_PATTERN)
    source: str = Field(
        min_length=1,
        max_length=110,
        description="A stream name, or query:<name> to read a shared query's output.",
    )
    operators: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_QUERY_OPERATORS,
        description="Operators as in docs/scenario-format.md.",
    )
    shared: bool = Field(default=False, description="Other classes may read its output.")


class QueryRead(QuerySpec):
    model_config = ConfigDict(from_attributes=True)

    id: int
    class_id: int
    created_at: datetime
    updated_at: datetime


def query_part(query: ContinuousQuery | QuerySpec) -> QueryPart:
    """A stored query, or one about to be, as the scenario composer takes it."""
    return QueryPart(query.name, query.source, list(query.operators), query.shared)

"""Streams page: list the declared streams, declare one, delete one.

A declared stream names the columns its tuples carry (docs/scenario-format.md,
``streams[].columns``); queries reading it are checked against them. The API is the one
judge of a declaration (names, types, generators, the event-time column, unique names,
a stream still read by a query); this module only checks that the name and the columns
were filled in and that the columns are JSON, then puts each message the API returns
next to the field it is about.

Where a message goes: a 422 item's ``loc`` names its field (``["body", "columns", 0,
"type"]`` → the columns, ``["body", "event_time"]`` → the event-time column); a message
about no field of the form goes to the alert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from dash import html
from dash.development.base_component import Component

from frontend.api import ApiClient, ApiError, Stream, StreamColumn, StreamCreate, error_text
from frontend.components import (
    data_table,
    delete_button,
    deleted,
    error_alert,
    format_timestamp,
    loaded_table,
    no_rows_yet,
    success_alert,
)
from frontend.query_errors import error_items

STREAM_FIELDS: tuple[str, ...] = ("name", "event_time", "columns")
MISSING_MESSAGES: dict[str, str] = {
    "name": "Enter a name for the stream, e.g. trades.",
    "columns": 'Enter the columns as a JSON list, e.g. [{"name": "amount", "type": "double"}].',
}
DELETE_BUTTON_TYPE = "stream-delete"
COLUMNS_PLACEHOLDER = """[
  {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 50}},
  {"name": "amount", "type": "double"},
  {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 1}}
]"""


@dataclass(frozen=True)
class DeclareOutcome:
    """Result of submitting the form: a message per field of ``STREAM_FIELDS`` that is
    wrong (absent means fine), an alert above the form, the new stream on success."""

    feedback_by_field: dict[str, str] = field(default_factory=dict)
    alert: Component | None = None
    created: Stream | None = None


def build_stream_body(values: Mapping[str, Any]) -> tuple[StreamCreate | None, dict[str, str]]:
    """Form values → the ``POST /streams`` body, or ``None`` and a message for each field
    left empty and for columns that are not JSON. An empty event time is left out (the
    stream's event time is then the arrival instant)."""
    name = _text(values.get("name"))
    event_time = _text(values.get("event_time"))
    columns_text = _text(values.get("columns"))
    given = {"name": name, "columns": columns_text}
    feedback = {key: message for key, message in MISSING_MESSAGES.items() if not given[key]}
    columns: Any = None
    if columns_text:
        try:
            columns = json.loads(columns_text)
        except json.JSONDecodeError as err:
            feedback["columns"] = (
                f"The columns are not valid JSON: {err.msg} (line {err.lineno}, "
                f"column {err.colno})."
            )
    if feedback:
        return None, feedback
    body: StreamCreate = {"name": name, "columns": columns}
    if event_time:
        body["event_time"] = event_time
    return body, {}


def declare_stream(api: ApiClient, values: Mapping[str, Any]) -> DeclareOutcome:
    """Declare a stream from the form values; map every refusal to a field or an alert."""
    body, feedback = build_stream_body(values)
    if body is None:
        return DeclareOutcome(feedback_by_field=feedback)
    try:
        created = api.create_stream(body)
    except ApiError as err:
        return _rejected(err)
    return DeclareOutcome(
        alert=success_alert(
            f"Declared stream {created['name']} ({len(created['columns'])} columns)."
        ),
        created=created,
    )


def _rejected(err: ApiError) -> DeclareOutcome:
    if err.status_code != httpx.codes.UNPROCESSABLE_ENTITY:  # 409: the name is taken; 403
        return DeclareOutcome(alert=error_alert(f"Could not declare the stream: {error_text(err)}"))
    on_form, elsewhere = place_errors(err.detail)
    alert = None
    if elsewhere or not on_form:
        text = "; ".join(elsewhere) or error_text(err)
        alert = error_alert(f"The API refused the stream: {text}")
    return DeclareOutcome(feedback_by_field=on_form, alert=alert)


def place_errors(detail: Any) -> tuple[dict[str, str], list[str]]:
    """A 422 ``detail`` → ``({form field: messages joined by "; "}, [messages about no
    field of the form])``."""
    on_form: dict[str, list[str]] = {}
    elsewhere: list[str] = []
    for path, message in error_items(detail):
        target = stream_field(path)
        if target is None:
            elsewhere.append(message)
        else:
            on_form.setdefault(target, []).append(message)
    return {key: "; ".join(messages) for key, messages in on_form.items()}, elsewhere


def stream_field(path: str) -> str | None:
    """The form field a message is about: the top of its path (``columns[0].type`` →
    ``columns``); ``None`` when that is no field of the form (``description``, none)."""
    top = re.split(r"[.\[]", path, maxsplit=1)[0]
    return top if top in STREAM_FIELDS else None


def delete_stream(api: ApiClient, stream_id: int) -> Component:
    """Delete one declared stream; returns the alert to show (the API refuses while a
    query reads it, and says which)."""
    return deleted(f"stream #{stream_id}", lambda: api.delete_stream(stream_id))


def load_streams_table(
    api: ApiClient, *, can_delete: bool = True
) -> tuple[Component, Component | None]:
    """``(table, alert)``: the streams table, or a placeholder and an error alert.

    ``can_delete`` (the user's role may change streams) adds a Delete button per row.
    """
    return loaded_table(
        api.list_streams, lambda s: render_streams_table(s, can_delete=can_delete), "Streams"
    )


def render_streams_table(streams: Sequence[Stream], *, can_delete: bool = True) -> Component:
    if not streams:
        return no_rows_yet(
            "No streams declared yet.",
            can_delete,
            "Declare one below.",
            "An operator can declare them.",
        )
    rows = [
        html.Tr(
            [
                html.Td(str(stream["id"])),
                html.Td(stream["name"]),
                html.Td(format_columns(stream["columns"]), className="font-monospace small"),
                html.Td(stream["event_time"] or html.Span("arrival", className="text-muted")),
                html.Td(format_timestamp(stream["updated_at"]), className="text-nowrap"),
                html.Td(
                    delete_button(DELETE_BUTTON_TYPE, stream["id"]) if can_delete else None,
                    className="text-nowrap",
                ),
            ],
            id=f"stream-row-{stream['id']}",
        )
        for stream in sorted(streams, key=lambda s: s["id"])
    ]
    heads = ("ID", "Name", "Columns", "Event time", "Updated (UTC)", "")
    return data_table(heads, rows, "streams-table-grid")


def format_columns(columns: Sequence[StreamColumn]) -> str:
    """``account:long, amount:double``."""
    return ", ".join(f"{column['name']}:{column['type']}" for column in columns)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""

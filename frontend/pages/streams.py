"""Streams page (``/streams``): the declared streams and a form to declare one.

Everyone signed in sees the streams; the form and the Delete buttons are only offered
to operators and admins (a viewer sees a hint instead). Callbacks only collect values
and hand over to ``frontend.actions.streams``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, dcc, html
from dash.development.base_component import Component

from frontend import session
from frontend.actions import streams as actions
from frontend.api import Role
from frontend.auth import can_change
from frontend.components import (
    change_section,
    clicked_index,
    labelled_field,
    role_layouts,
    table_page_head,
)
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/streams", name="Streams", title="headroom · streams"
)


def _id(field: str) -> str:
    return f"stream-{field}"


def _form() -> dbc.Form:
    return dbc.Form(
        [
            dbc.Row(
                [
                    labelled_field(
                        "stream",
                        "name",
                        "Name",
                        dbc.Input(id=_id("name"), type="text", placeholder="trades"),
                    ),
                    labelled_field(
                        "stream",
                        "event_time",
                        "Event-time column",
                        dbc.Input(id=_id("event_time"), type="text", placeholder="ts"),
                        hint="Optional: a timestamp column; empty means the arrival time.",
                    ),
                ],
                class_name="g-3 mb-3",
            ),
            dbc.Row(
                labelled_field(
                    "stream",
                    "columns",
                    "Columns (JSON)",
                    dbc.Textarea(
                        id=_id("columns"),
                        placeholder=actions.COLUMNS_PLACEHOLDER,
                        rows=6,
                        class_name="font-monospace",
                    ),
                    hint="A JSON list of {name, type, generator}, as streams[].columns in "
                    "docs/scenario-format.md; types: long, double, string, boolean, timestamp.",
                ),
            ),
            html.Div(
                dbc.Button("Declare stream", id="stream-submit", type="submit", color="primary"),
                className="mt-3",
            ),
        ],
        id="stream-form",
    )


def layout_for(role: Role | None) -> html.Div:
    declare = change_section(
        role,
        "Declare a stream",
        [html.Div(id="stream-form-alert"), _form()],
        "Declaring and deleting streams",
        "streams-role-hint",
    )
    return html.Div(
        [
            *table_page_head(
                "Streams",
                "streams",
                html.P(
                    "The columns a stream's tuples carry; queries reading it by name are "
                    "checked against them. A stream declared nowhere has key (long) and value "
                    "(double).",
                    className="text-muted",
                ),
            ),
            dcc.Store(id="streams-changed", data=0),
            *declare,
        ]
    )


layout, validation_layout = role_layouts(layout_for)


@callback(
    Output("streams-table", "children"),
    Output("streams-load-alert", "children"),
    Input("streams-changed", "data"),
)
def _load_table(_changed: int) -> tuple[Component, Component | None]:
    with api_client() as api:
        return actions.load_streams_table(api, can_delete=can_change(session.current_role()))


@callback(
    output={
        "invalid": {f: Output(_id(f), "invalid") for f in actions.STREAM_FIELDS},
        "feedback": {f: Output(f"{_id(f)}-feedback", "children") for f in actions.STREAM_FIELDS},
        "alert": Output("stream-form-alert", "children"),
        "changed": Output("streams-changed", "data", allow_duplicate=True),
    },
    inputs={
        "n_submit": Input("stream-form", "n_submit"),
        "values": {f: State(_id(f), "value") for f in actions.STREAM_FIELDS},
        "changed": State("streams-changed", "data"),
    },
    prevent_initial_call=True,
)
def _declare(n_submit: int | None, values: dict[str, Any], changed: int) -> dict[str, Any]:
    with api_client() as api:
        outcome = actions.declare_stream(api, values)
    feedback = outcome.feedback_by_field
    return {
        "invalid": {f: f in feedback for f in actions.STREAM_FIELDS},
        "feedback": {f: feedback.get(f) for f in actions.STREAM_FIELDS},
        "alert": outcome.alert,
        "changed": changed + 1 if outcome.created is not None else dash.no_update,
    }


@callback(
    Output("streams-alert", "children"),
    Output("streams-changed", "data", allow_duplicate=True),
    Input({"type": actions.DELETE_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("streams-changed", "data"),
    prevent_initial_call=True,
)
def _delete(_n_clicks: list[int | None], changed: int) -> tuple[Component, int]:
    with api_client() as api:
        alert = actions.delete_stream(api, clicked_index())
    return alert, changed + 1

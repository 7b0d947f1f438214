"""Classes page: the registered query classes and a form to create one.

Everyone signed in sees the classes; the create form and the Delete buttons are only
offered to operators and admins (a viewer sees a hint instead). Callbacks only collect
values and hand over to ``frontend.actions.classes``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate

from frontend import session
from frontend.actions import classes as actions
from frontend.api import Role
from frontend.auth import CHANGE_ROLE, can_change, needs_role_hint
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/", redirect_from=["/classes"], name="Classes", title="headroom · classes"
)

TAU_LABELS = {"tau0": "τ0", "tau1": "τ1", "tau2": "τ2", "tau3": "τ3"}


def _input_id(field: str) -> str:
    return f"class-{field}"


def _feedback_id(field: str) -> str:
    return f"class-{field}-feedback"


def _field(field: str, label: str, **input_props: Any) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=_input_id(field)),
            dbc.Input(id=_input_id(field), **input_props),
            dbc.FormFeedback(id=_feedback_id(field), type="invalid"),
        ]
    )


def _form() -> dbc.Form:
    # No min/max on the inputs: the API owns the rules, and a browser tooltip would
    # hide its message (which names the field, the value and the rule).
    return dbc.Form(
        [
            dbc.Row(
                [
                    _field("name", "Name", type="text", placeholder="fraud"),
                    _field("priority", "Priority", type="number", step="any", placeholder="6"),
                    _field(
                        "delay_target_s",
                        "Delay target (s)",
                        type="number",
                        step="any",
                        placeholder="1.5",
                    ),
                ],
                class_name="g-3 mb-3",
            ),
            dbc.Row(
                [
                    _field(tau, label, type="number", step="any", placeholder="default")
                    for tau, label in TAU_LABELS.items()
                ],
                class_name="g-3",
            ),
            dbc.FormText(
                "Thresholds are optional (empty means the default) and must satisfy "
                "0 < τ0 < τ1 < τ2 < τ3 ≤ 1.",
                id="class-tau-rule",
            ),
            html.Div(dbc.Button("Create class", type="submit", color="primary"), className="mt-3"),
        ],
        id="class-form",
    )


def layout(**_query: str) -> html.Div:
    """The page for the signed-in user's role (a function: read per request)."""
    return layout_for(session.current_role())


def validation_layout() -> html.Div:
    """Every component any role sees (``frontend.app`` validates callbacks against it)."""
    return layout_for("admin")


def layout_for(role: Role | None) -> html.Div:
    if can_change(role):
        create: list[Component] = [
            html.H4("New class", className="mt-4"),
            html.Div(id="class-form-alert"),
            _form(),
        ]
    else:
        create = [
            dbc.Alert(
                needs_role_hint(CHANGE_ROLE, role, "Creating and deleting classes"),
                color="info",
                id="classes-role-hint",
                class_name="mt-4",
            )
        ]
    return html.Div(
        [
            html.H2("Query classes"),
            html.Div(id="classes-alert"),
            html.Div(id="classes-load-alert"),
            html.Div(id="classes-table"),
            dcc.Store(id="classes-created", data=0),
            dcc.Store(id="classes-deleted", data=0),
            *create,
        ]
    )


@callback(
    Output("classes-table", "children"),
    Output("classes-load-alert", "children"),
    Input("classes-created", "data"),
    Input("classes-deleted", "data"),
)
def _load_table(_created: int, _deleted: int) -> tuple[Component, Component | None]:
    with api_client() as api:
        return actions.load_classes_table(api, can_delete=can_change(session.current_role()))


@callback(
    output={
        "invalid": {f: Output(_input_id(f), "invalid") for f in actions.CLASS_FIELDS},
        "feedback": {f: Output(_feedback_id(f), "children") for f in actions.CLASS_FIELDS},
        "alert": Output("class-form-alert", "children"),
        "created": Output("classes-created", "data"),
    },
    inputs={
        "n_submit": Input("class-form", "n_submit"),
        "values": {f: State(_input_id(f), "value") for f in actions.CLASS_FIELDS},
        "created": State("classes-created", "data"),
    },
    prevent_initial_call=True,
)
def _submit(n_submit: int | None, values: dict[str, Any], created: int) -> dict[str, Any]:
    with api_client() as api:
        outcome = actions.submit_class(api, values)
    return {
        "invalid": {f: f in outcome.feedback_by_field for f in actions.CLASS_FIELDS},
        "feedback": {f: outcome.feedback_by_field.get(f) for f in actions.CLASS_FIELDS},
        "alert": outcome.alert,
        "created": created + 1 if outcome.created is not None else dash.no_update,
    }


@callback(
    Output("classes-alert", "children"),
    Output("classes-deleted", "data"),
    Input({"type": actions.DELETE_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("classes-deleted", "data"),
    prevent_initial_call=True,
)
def _delete(_n_clicks: list[int | None], deleted: int) -> tuple[Component, int]:
    # Re-rendering the table re-creates the buttons and fires this with n_clicks None.
    if not isinstance(ctx.triggered_id, dict) or not ctx.triggered[0]["value"]:
        raise PreventUpdate
    with api_client() as api:
        alert = actions.delete_class(api, int(ctx.triggered_id["index"]))
    return alert, deleted + 1

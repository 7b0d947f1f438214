"""Classes page: the registered query classes and a form to create one.

Everyone signed in sees the classes; the create form and the Delete buttons are only
offered to operators and admins (a viewer sees a hint instead). Callbacks only collect
values and hand over to ``frontend.actions.classes``. Below the classes, each class's
continuous queries and their editor (``frontend.query_panel``).
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html
from dash.development.base_component import Component

from frontend import query_panel, session
from frontend.actions import classes as actions
from frontend.actions.tuning import FLAG_FIELDS, setting_label
from frontend.api import Manager, Role
from frontend.auth import can_change
from frontend.components import (
    change_section,
    clicked_index,
    error_alert,
    role_layouts,
    table_page_head,
)
from frontend.context import api_client
from frontend.managers import default_manager, manager_options, params_hint, read_catalogue
from spark_runner.core.class_settings import SETTINGS
from spark_runner.core.thresholds import TAUS

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/", redirect_from=["/classes"], name="Classes", title="headroom · classes"
)

# The form fields come from the settings' one declaration (labels, units, defaults).
TAU_LABELS = {tau: SETTINGS[tau].label for tau in TAUS}
FLAG_HINTS = {
    "catch_up": "Serve the backlog already in the log when a job starts, instead of shedding "
    "first what is already past the target: for a class whose every tuple matters (billing)."
}
"""The forms' shorter wording of a yes/no setting's meaning (else the declaration's)."""


def _label(field: str) -> str:
    return setting_label(SETTINGS[field])


def _default_text(field: str) -> str:
    default = SETTINGS[field].default
    return f"{default:g}" if isinstance(default, float) else str(default)


def _flag(field: str, **props: Any) -> dbc.Checkbox:
    return dbc.Checkbox(label=SETTINGS[field].label, **props)


def _input_id(field: str) -> str:
    return f"class-{field}"


def _feedback_id(field: str) -> str:
    return f"class-{field}-feedback"


def _field(field: str, label: str, *, width: int | None = None, **input_props: Any) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=_input_id(field)),
            dbc.Input(id=_input_id(field), **input_props),
            dbc.FormFeedback(id=_feedback_id(field), type="invalid"),
        ],
        md=width,
    )


def _manager_row() -> dbc.Row:
    return dbc.Row(
        [
            dbc.Col(
                [
                    dbc.Label("Manager", html_for=_input_id("manager")),
                    dbc.Select(id=_input_id("manager"), options=[]),  # from the API
                    dbc.FormFeedback(id=_feedback_id("manager"), type="invalid"),
                ],
                md=3,
            ),
            dbc.Col(
                [
                    dbc.Label("Manager parameters", html_for=_input_id("manager_params")),
                    dbc.Input(
                        id=_input_id("manager_params"),
                        type="text",
                        placeholder="defaults, or e.g. initial_headroom=0.7, max_shed=0.9",
                    ),
                    dbc.FormFeedback(id=_feedback_id("manager_params"), type="invalid"),
                    dbc.FormText(id="class-manager-hint"),
                ],
                md=5,
            ),
            *(
                _field(
                    field,
                    _label(field),
                    width=2,
                    type="number",
                    step="any",
                    placeholder=_default_text(field),
                )
                for field in actions.SHARING_FIELDS
            ),
            *(
                dbc.Col(
                    [
                        _flag(field, id=_input_id(field), value=False),
                        dbc.FormText(FLAG_HINTS.get(field, SETTINGS[field].description)),
                    ],
                    md=12,
                )
                for field in FLAG_FIELDS
            ),
        ],
        class_name="g-3 mt-1",
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
            _manager_row(),
            html.Div(dbc.Button("Create class", type="submit", color="primary"), className="mt-3"),
        ],
        id="class-form",
    )


def _edit_id(field: str) -> str:
    return f"class-edit-{field}"


def _edit_field(field: str, label: str, width: int, **props: Any) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=_edit_id(field), class_name="small mb-0"),
            dbc.Input(id=_edit_id(field), size="sm", **props),
            dbc.FormFeedback(id=f"{_edit_id(field)}-feedback", type="invalid"),
        ],
        width=width,
    )


def _edit_modal() -> dbc.Modal:
    """Edit a class's priority, target, thresholds, manager and sharing limits."""
    number = {"type": "number", "step": "any"}
    return dbc.Modal(
        [
            dbc.ModalHeader(dbc.ModalTitle(id="class-edit-title")),
            dbc.ModalBody(
                [
                    html.Div(id="class-edit-alert"),
                    dbc.Row(
                        [
                            _edit_field("priority", "Priority", 6, **number),
                            _edit_field("delay_target_s", "Delay target (s)", 6, **number),
                        ],
                        class_name="g-2 mb-2",
                    ),
                    dbc.Row(
                        [_edit_field(tau, TAU_LABELS[tau], 3, **number) for tau in TAU_LABELS],
                        class_name="g-2 mb-2",
                    ),
                    dbc.Row(
                        [
                            dbc.Col(
                                [
                                    dbc.Label(
                                        "Manager",
                                        html_for=_edit_id("manager"),
                                        class_name="small mb-0",
                                    ),
                                    dbc.Select(id=_edit_id("manager"), options=[], size="sm"),
                                    dbc.FormFeedback(
                                        id=f"{_edit_id('manager')}-feedback", type="invalid"
                                    ),
                                ],
                                width=5,
                            ),
                            _edit_field(
                                "manager_params",
                                "Manager parameters",
                                7,
                                type="text",
                                placeholder="defaults",
                            ),
                        ],
                        class_name="g-2 mb-2",
                    ),
                    dbc.Row(
                        [
                            _edit_field(field, _label(field), 6, **number)
                            for field in actions.SHARING_FIELDS
                        ],
                        class_name="g-2",
                    ),
                    *(
                        _flag(field, id=_edit_id(field), class_name="small mt-2")
                        for field in FLAG_FIELDS
                    ),
                    dbc.FormText(
                        "Running jobs of the class get the change as a new configuration "
                        "version (see their live view)."
                    ),
                    dcc.Store(id="class-edit-id", data=None),
                    dcc.Store(id="class-edit-confirm", data=None),
                ]
            ),
            dbc.ModalFooter(
                [
                    dbc.Button("Cancel", id="class-edit-cancel", color="secondary"),
                    dbc.Button("Save", id="class-edit-save", color="primary"),
                ]
            ),
        ],
        id="class-edit-modal",
        is_open=False,
    )


def layout_for(role: Role | None) -> html.Div:
    create = change_section(
        role,
        "New class",
        [
            html.Div(id="class-form-alert"),
            html.Div(id="class-managers-alert"),
            _form(),
            _edit_modal(),
            # The API's load managers (GET /managers), read when the page is shown.
            dcc.Store(id="class-managers", data=None),
            dcc.Store(id="class-managers-reload", data=0),
        ],
        "Creating and deleting classes",
        "classes-role-hint",
    )
    return html.Div(
        [
            *table_page_head("Query classes", "classes"),
            dcc.Store(id="classes-created", data=0),
            dcc.Store(id="classes-deleted", data=0),
            *create,
            query_panel.section_for(role),
        ]
    )


layout, validation_layout = role_layouts(layout_for)


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
        "values": {f: State(_input_id(f), "value") for f in actions.FORM_FIELDS},
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
    Output("class-managers", "data"),
    Output(_input_id("manager"), "options"),
    Output(_input_id("manager"), "value"),
    Output(_edit_id("manager"), "options"),
    Output("class-managers-alert", "children"),
    Input("class-managers-reload", "data"),  # fires when the page is shown
)
def _load_managers(_reload: int) -> tuple[Any, ...]:
    """The manager choices of both forms, the create form's set to the API's default."""
    with api_client() as api:
        catalogue = read_catalogue(api)
    options = manager_options(catalogue.managers)
    alert = error_alert(catalogue.error) if catalogue.error else None
    return catalogue.managers, options, default_manager(catalogue.managers), options, alert


@callback(
    Output("class-manager-hint", "children"),
    Input(_input_id("manager"), "value"),
    Input("class-managers", "data"),
)
def _manager_hint(kind: str | None, managers: list[Manager] | None) -> str:
    if not managers:
        return ""
    chosen = kind or default_manager(managers)
    return params_hint(chosen, managers) if chosen else ""


@callback(
    Output("classes-alert", "children"),
    Output("classes-deleted", "data"),
    Input({"type": actions.DELETE_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("classes-deleted", "data"),
    prevent_initial_call=True,
)
def _delete(_n_clicks: list[int | None], deleted: int) -> tuple[Component, int]:
    with api_client() as api:
        alert = actions.delete_class(api, clicked_index())
    return alert, deleted + 1


@callback(
    output={
        "open": Output("class-edit-modal", "is_open"),
        "title": Output("class-edit-title", "children"),
        "class_id": Output("class-edit-id", "data"),
        "values": {f: Output(_edit_id(f), "value") for f in actions.EDIT_FORM_FIELDS},
        "alert": Output("classes-alert", "children", allow_duplicate=True),
    },
    inputs={"clicks": Input({"type": actions.EDIT_BUTTON_TYPE, "index": ALL}, "n_clicks")},
    prevent_initial_call=True,
)
def _open_edit(clicks: list[int | None]) -> dict[str, Any]:
    class_id = clicked_index()
    with api_client() as api:
        values, alert = actions.load_edit_values(api, class_id)
    if alert is not None:
        return {
            "open": False,
            "title": dash.no_update,
            "class_id": dash.no_update,
            "values": {f: dash.no_update for f in actions.EDIT_FORM_FIELDS},
            "alert": alert,
        }
    return {
        "open": True,
        "title": f"Edit class #{class_id}",
        "class_id": class_id,
        "values": {f: values.get(f) for f in actions.EDIT_FORM_FIELDS},
        "alert": None,
    }


_EDIT_MARKABLE = actions.EDIT_FIELDS


@callback(
    output={
        "open": Output("class-edit-modal", "is_open", allow_duplicate=True),
        "invalid": {f: Output(_edit_id(f), "invalid") for f in _EDIT_MARKABLE},
        "feedback": {f: Output(f"{_edit_id(f)}-feedback", "children") for f in _EDIT_MARKABLE},
        "dialog_alert": Output("class-edit-alert", "children"),
        "alert": Output("classes-alert", "children", allow_duplicate=True),
        "changed": Output("classes-created", "data", allow_duplicate=True),
        "confirm": Output("class-edit-confirm", "data"),
    },
    inputs={
        "save": Input("class-edit-save", "n_clicks"),
        "cancel": Input("class-edit-cancel", "n_clicks"),
        "class_id": State("class-edit-id", "data"),
        "values": {f: State(_edit_id(f), "value") for f in actions.EDIT_FORM_FIELDS},
        "created": State("classes-created", "data"),
        "confirmed": State("class-edit-confirm", "data"),
    },
    prevent_initial_call=True,
)
def _save_edit(
    save: int | None,
    cancel: int | None,
    class_id: int | None,
    values: dict[str, Any],
    created: int,
    confirmed: dict[str, Any] | None,
) -> dict[str, Any]:
    clean: dict[str, Any] = {
        "confirm": None,
        "open": False,
        "invalid": {f: False for f in _EDIT_MARKABLE},
        "feedback": {f: None for f in _EDIT_MARKABLE},
        "dialog_alert": None,
        "alert": dash.no_update,
        "changed": dash.no_update,
    }
    if ctx.triggered_id != "class-edit-save" or class_id is None:
        return clean
    with api_client() as api:
        outcome = actions.save_edit(api, class_id, values, confirmed)
    if outcome.unchanged:
        return clean
    if outcome.confirm is not None:  # shown first: saved again unchanged, it goes through
        return {**clean, "open": True, "dialog_alert": outcome.alert, "confirm": outcome.confirm}
    if outcome.updated is None:
        feedback = outcome.feedback_by_field
        return {
            **clean,
            "open": True,
            "invalid": {f: f in feedback for f in _EDIT_MARKABLE},
            "feedback": {f: feedback.get(f) for f in _EDIT_MARKABLE},
            "dialog_alert": outcome.alert,
        }
    return {**clean, "alert": outcome.alert, "changed": created + 1}

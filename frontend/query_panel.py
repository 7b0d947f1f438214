"""Classes page, continuous queries: a class's queries and the editor (layout, callbacks).

Everyone signed in sees the chosen class's queries (each with its spec); operators and
admins also get Edit/Delete buttons and the editor. The editor shows one query twice:
as a form (name, source, one row of controls per operator) and as its YAML spec. Every
change in the form rewrites the spec; "Spec → form" fills the form from edited spec
text; "Save query" sends the spec text, which is what is saved, and the API's messages
appear under the spec and next to the controls they name. Callbacks collect values and
hand over to ``frontend.actions.queries``; the pure parts are ``frontend.query_spec``,
``frontend.query_errors`` and ``frontend.query_editor``. Imported by the Classes page.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, MATCH, Input, Output, State, callback, ctx, dcc, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate

from frontend import session
from frontend.actions import queries as actions
from frontend.api import Role
from frontend.auth import CHANGE_ROLE, can_change, needs_role_hint
from frontend.components import clicked_index
from frontend.context import api_client
from frontend.operators import DEFAULT_KIND
from frontend.query_editor import (
    EXTRA_TYPE,
    FIELD_TYPE,
    GROUP_TYPE,
    KIND_TYPE,
    REMOVE_TYPE,
    group_styles,
    operator_rows,
)
from frontend.query_errors import QueryFeedback
from frontend.query_spec import OperatorRow, QueryForm, blank_form, form_yaml, rows_from_controls

SPEC_HELP = (
    "name, source (a stream, or query:<name> of a shared query), shared, and operators "
    "as in the scenario format (docs/scenario-format.md). This text is what Save sends."
)


def section_for(role: Role | None) -> html.Div:
    """The queries section of the Classes page for ``role``."""
    return html.Div(
        [
            html.H4("Continuous queries", className="mt-4"),
            dbc.Row(
                dbc.Col(
                    [
                        dbc.Label("Class", html_for="queries-class"),
                        dbc.Select(id="queries-class", options=[]),
                    ],
                    md=3,
                ),
                class_name="mb-2",
            ),
            html.Div(id="queries-alert"),
            html.Div(id="queries-load-alert"),
            html.Div(id="queries-table"),
            dcc.Store(id="queries-changed", data=0),
            _editor() if can_change(role) else _role_hint(role),
        ],
        id="queries-section",
    )


def _role_hint(role: Role | None) -> Component:
    hint: Component = dbc.Alert(
        needs_role_hint(CHANGE_ROLE, role, "Writing and deleting continuous queries"),
        color="info",
        id="queries-role-hint",
    )
    return hint


def _top_field(field: str, label: str, placeholder: str) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"query-{field}"),
            dbc.Input(id=f"query-{field}", type="text", placeholder=placeholder, value=""),
            dbc.FormFeedback(id=f"query-{field}-feedback", type="invalid"),
        ],
        md=5,
    )


def _editor() -> html.Div:
    form = blank_form()
    return html.Div(
        [
            html.H5(actions.NEW_TITLE, id="query-editor-title", className="mt-3"),
            html.Div(id="query-editor-alert"),
            dcc.Store(id="query-editing", data=None),
            dcc.Store(id="query-extra", data={}),
            dbc.Row(
                [
                    dbc.Col(_form_column(form), lg=7),
                    dbc.Col(_spec_column(form), lg=5),
                ],
                class_name="g-3",
            ),
        ],
        id="query-editor",
    )


def _form_column(form: QueryForm) -> list[Component]:
    return [
        dbc.Row(
            [
                _top_field("name", "Name", "big-trades"),
                _top_field("source", "Source", "trades, or query:<name>"),
                dbc.Col(
                    dbc.Checkbox(id="query-shared", label="shared", value=False),
                    md=2,
                    class_name="align-self-end pb-2",
                ),
            ],
            class_name="g-2 mb-2",
        ),
        html.Div(operator_rows(form.operators), id="query-operators"),
        html.Div(id="query-operators-feedback", className="text-danger small mb-2"),
        dbc.Button("Add operator", id="query-add-op", color="outline-secondary", size="sm"),
    ]


def _spec_column(form: QueryForm) -> list[Component]:
    return [
        dbc.Label("Spec (YAML)", html_for="query-spec"),
        dbc.Textarea(
            id="query-spec",
            value=form_yaml(form),
            rows=18,
            spellcheck=False,
            submit_on_enter=False,  # Enter is a new line in YAML
            style={"fontFamily": "monospace", "fontSize": "0.85rem"},
        ),
        dbc.FormFeedback(id="query-spec-feedback", type="invalid"),
        dbc.FormText(SPEC_HELP),
        html.Div(
            [
                dbc.Button("Save query", id="query-save", color="primary", class_name="me-2"),
                dbc.Button(
                    "Spec → form", id="query-apply", color="outline-secondary", class_name="me-2"
                ),
                dbc.Button("New query", id="query-new", color="outline-secondary"),
            ],
            className="mt-2",
        ),
    ]


# --- the class choice, the table, delete -----------------------------------------------------


@callback(
    Output("queries-class", "options"),
    Output("queries-class", "value"),
    Output("queries-load-alert", "children", allow_duplicate=True),
    Input("classes-created", "data"),
    Input("classes-deleted", "data"),
    State("queries-class", "value"),
    prevent_initial_call="initial_duplicate",
)
def _class_choices(
    _created: int, _deleted: int, current: str | None
) -> tuple[list[dict[str, str]], str | None, Component | None]:
    with api_client() as api:
        options, alert = actions.class_choices(api)
    return options, actions.chosen_class(options, current), alert


@callback(
    Output("queries-table", "children"),
    Output("queries-load-alert", "children"),
    Input("queries-class", "value"),
    Input("queries-changed", "data"),
)
def _load_table(class_value: str | None, _changed: int) -> tuple[Component, Component | None]:
    with api_client() as api:
        return actions.load_queries_table(
            api,
            actions.as_class_id(class_value),
            can_change=can_change(session.current_role()),
        )


@callback(
    Output("queries-alert", "children"),
    Output("queries-changed", "data"),
    Input({"type": actions.DELETE_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("queries-class", "value"),
    State("queries-changed", "data"),
    prevent_initial_call=True,
)
def _delete(_clicks: list[int | None], class_value: str | None, changed: int) -> tuple[Any, int]:
    query_id = clicked_index()
    class_id = actions.as_class_id(class_value)
    if class_id is None:
        raise PreventUpdate
    with api_client() as api:
        alert = actions.delete_query(api, class_id, query_id)
    return alert, changed + 1


# --- the editor ----------------------------------------------------------------------------


@callback(
    Output({"type": GROUP_TYPE, "index": MATCH, "field": ALL}, "style"),
    Input({"type": KIND_TYPE, "index": MATCH}, "value"),
    prevent_initial_call=True,
)
def _show_kind_fields(kind: str | None) -> list[dict[str, str] | None]:
    return group_styles(kind)


def _rows(
    kinds: list[Any], field_ids: list[Any], values: list[Any], extras: list[Any]
) -> tuple[OperatorRow, ...]:
    """The operator rows the form's controls hold (``field_ids[i]`` names ``values[i]``)."""
    fields = [
        (int(fid["index"]), str(fid["field"]), value)
        for fid, value in zip(field_ids, values, strict=False)
        if isinstance(fid, dict)
    ]
    return rows_from_controls(kinds, fields, extras)


def _form(
    name: Any,
    source: Any,
    shared: Any,
    rows: tuple[OperatorRow, ...],
    extra: Any,
) -> QueryForm:
    return QueryForm(
        name=name if isinstance(name, str) else "",
        source=source if isinstance(source, str) else "",
        shared=bool(shared),
        operators=rows,
        extra=dict(extra) if isinstance(extra, dict) else {},
    )


@callback(
    Output("query-spec", "value", allow_duplicate=True),
    Input("query-name", "value"),
    Input("query-source", "value"),
    Input("query-shared", "value"),
    Input({"type": KIND_TYPE, "index": ALL}, "value"),
    Input({"type": FIELD_TYPE, "index": ALL, "field": ALL}, "value"),
    State({"type": FIELD_TYPE, "index": ALL, "field": ALL}, "id"),
    State({"type": EXTRA_TYPE, "index": ALL}, "data"),
    State("query-extra", "data"),
    prevent_initial_call=True,
)
def _form_to_spec(
    name: Any,
    source: Any,
    shared: Any,
    kinds: list[Any],
    values: list[Any],
    field_ids: list[Any],
    extras: list[Any],
    extra: Any,
) -> str:
    rows = _rows(kinds, field_ids, values, extras)
    return form_yaml(_form(name, source, shared, rows, extra))


_EDITOR_BUTTONS = ("query-add-op", "query-apply", "query-save", "query-new")


@callback(
    output={
        "rows": Output("query-operators", "children"),
        "name": Output("query-name", "value"),
        "source": Output("query-source", "value"),
        "shared": Output("query-shared", "value"),
        "extra": Output("query-extra", "data"),
        "spec": Output("query-spec", "value"),
        "editing": Output("query-editing", "data"),
        "title": Output("query-editor-title", "children"),
        "name_invalid": Output("query-name", "invalid"),
        "name_feedback": Output("query-name-feedback", "children"),
        "source_invalid": Output("query-source", "invalid"),
        "source_feedback": Output("query-source-feedback", "children"),
        "operators_feedback": Output("query-operators-feedback", "children"),
        "spec_invalid": Output("query-spec", "invalid"),
        "spec_feedback": Output("query-spec-feedback", "children"),
        "alert": Output("query-editor-alert", "children"),
        "changed": Output("queries-changed", "data", allow_duplicate=True),
    },
    inputs={
        "buttons": {b: Input(b, "n_clicks") for b in _EDITOR_BUTTONS},
        "remove": Input({"type": REMOVE_TYPE, "index": ALL}, "n_clicks"),
        "edit": Input({"type": actions.EDIT_BUTTON_TYPE, "index": ALL}, "n_clicks"),
        "class_value": State("queries-class", "value"),
        "editing": State("query-editing", "data"),
        "text": State("query-spec", "value"),
        "name": State("query-name", "value"),
        "source": State("query-source", "value"),
        "shared": State("query-shared", "value"),
        "kinds": State({"type": KIND_TYPE, "index": ALL}, "value"),
        "fields": State({"type": FIELD_TYPE, "index": ALL, "field": ALL}, "value"),
        "field_ids": State({"type": FIELD_TYPE, "index": ALL, "field": ALL}, "id"),
        "extras": State({"type": EXTRA_TYPE, "index": ALL}, "data"),
        "extra": State("query-extra", "data"),
        "changed": State("queries-changed", "data"),
    },
    prevent_initial_call=True,
)
def _editor_action(
    buttons: dict[str, int | None],
    remove: list[int | None],
    edit: list[int | None],
    class_value: str | None,
    editing: Any,
    text: str | None,
    name: Any,
    source: Any,
    shared: Any,
    kinds: list[Any],
    fields: list[Any],
    field_ids: list[Any],
    extras: list[Any],
    extra: Any,
    changed: int,
) -> dict[str, Any]:
    # Re-rendering rows or the table re-creates buttons and fires this with n_clicks None.
    if not ctx.triggered or not ctx.triggered[0]["value"]:
        raise PreventUpdate
    trigger = ctx.triggered_id
    current = actions.as_editing(editing)
    form = _form(name, source, shared, _rows(kinds, field_ids, fields, extras), extra)
    class_id = actions.as_class_id(class_value)
    if trigger == "query-new":
        view = actions.new_query()
    elif trigger == "query-add-op":
        view = actions.with_form(
            QueryForm(
                form.name,
                form.source,
                form.shared,
                (*form.operators, OperatorRow(DEFAULT_KIND)),
                form.extra,
            ),
            current,
        )
    elif isinstance(trigger, dict) and trigger.get("type") == REMOVE_TYPE:
        index = int(trigger["index"])
        rows = tuple(row for i, row in enumerate(form.operators) if i != index)
        view = actions.with_form(
            QueryForm(form.name, form.source, form.shared, rows, form.extra), current
        )
    elif isinstance(trigger, dict) and trigger.get("type") == actions.EDIT_BUTTON_TYPE:
        if class_id is None:
            raise PreventUpdate
        with api_client() as api:
            loaded = actions.load_for_edit(api, class_id, int(trigger["index"]))
        if not isinstance(loaded, actions.EditorView):
            return {**_unchanged(), "alert": loaded}
        view = loaded
    elif trigger == "query-apply":
        view = actions.apply_spec(text, form, current)
    elif trigger == "query-save":
        with api_client() as api:
            view = actions.save_query(api, class_id, current, text)
    else:
        raise PreventUpdate
    return _render(view, changed)


def _unchanged() -> dict[str, Any]:
    return {
        key: dash.no_update
        for key in (
            "rows",
            "name",
            "source",
            "shared",
            "extra",
            "spec",
            "editing",
            "title",
            "name_invalid",
            "name_feedback",
            "source_invalid",
            "source_feedback",
            "operators_feedback",
            "spec_invalid",
            "spec_feedback",
            "alert",
            "changed",
        )
    }


def _render(view: actions.EditorView, changed: int) -> dict[str, Any]:
    feedback: QueryFeedback = view.feedback
    top = feedback.top
    out = {
        **_unchanged(),
        "spec": view.spec_text,
        "editing": view.editing,
        "title": view.title,
        "name_invalid": "name" in top,
        "name_feedback": top.get("name"),
        "source_invalid": "source" in top,
        "source_feedback": top.get("source"),
        "operators_feedback": top.get("operators"),
        "spec_invalid": not feedback.empty,
        "spec_feedback": html.Ul([html.Li(message) for message in feedback.spec], className="mb-0")
        if feedback.spec
        else None,
        "alert": view.alert,
        "changed": changed + 1 if view.saved is not None else dash.no_update,
    }
    if not view.keep_form:
        form = view.form
        out |= {
            "rows": operator_rows(form.operators, feedback),
            "name": form.name,
            "source": form.source,
            "shared": form.shared,
            "extra": form.extra,
        }
    return out

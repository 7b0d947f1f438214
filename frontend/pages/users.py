"""Users page (``/users``, admins only): accounts, their roles, and new accounts.

Callbacks only collect values and hand over to ``frontend.actions.users``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, dcc, html
from dash.development.base_component import Component

from frontend import session
from frontend.actions import users as actions
from frontend.api import ROLES, Role
from frontend.auth import ADMIN_ROLE, is_admin, needs_role_hint
from frontend.components import clicked_button, labelled_field, role_layouts, table_page_head
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/users", name="Users", title="headroom · users"
)


def _form() -> dbc.Form:
    return dbc.Form(
        [
            dbc.Row(
                [
                    labelled_field(
                        "user", "username", "Username", dbc.Input(id="user-username", type="text")
                    ),
                    labelled_field(
                        "user",
                        "password",
                        "Password",
                        dbc.Input(id="user-password", type="password", autocomplete="new-password"),
                    ),
                    labelled_field(
                        "user",
                        "role",
                        "Role",
                        dbc.Select(
                            id="user-role",
                            options=[{"label": role, "value": role} for role in ROLES],
                            value="viewer",
                        ),
                    ),
                ],
                class_name="g-3",
            ),
            dbc.FormText(
                "Viewers read; operators also change classes and jobs; admins also "
                "manage users. Passwords need at least 8 characters."
            ),
            html.Div(dbc.Button("Create user", type="submit", color="primary"), className="mt-3"),
        ],
        id="user-form",
    )


def layout_for(role: Role | None) -> html.Div:
    if not is_admin(role):
        return html.Div(
            [
                html.H2("Users"),
                dbc.Alert(
                    needs_role_hint(ADMIN_ROLE, role, "Managing users"),
                    color="info",
                    id="users-role-hint",
                ),
            ]
        )
    return html.Div(
        [
            *table_page_head("Users", "users"),
            dcc.Store(id="users-changed", data=0),
            html.H4("New user", className="mt-4"),
            html.Div(id="user-form-alert"),
            _form(),
        ]
    )


layout, validation_layout = role_layouts(layout_for)


@callback(
    Output("users-table", "children"),
    Output("users-load-alert", "children"),
    Input("users-changed", "data"),
)
def _load_table(_changed: int) -> tuple[Component, Component | None]:
    user = session.current_user()
    with api_client() as api:
        return actions.load_users_table(api, user["username"] if user else None)


@callback(
    Output("user-username-feedback", "children"),
    Output("user-password-feedback", "children"),
    Output("user-role-feedback", "children"),
    Output("user-username", "invalid"),
    Output("user-password", "invalid"),
    Output("user-password", "value"),
    Output("user-form-alert", "children"),
    Output("users-changed", "data", allow_duplicate=True),
    Input("user-form", "n_submit"),
    State("user-username", "value"),
    State("user-password", "value"),
    State("user-role", "value"),
    State("users-changed", "data"),
    prevent_initial_call=True,
)
def _create(
    _n_submit: int | None, username: Any, password: Any, role: Any, changed: int
) -> tuple[Any, ...]:
    with api_client() as api:
        outcome = actions.create_user(
            api, {"username": username, "password": password, "role": role}
        )
    feedback = outcome.feedback_by_field
    created = outcome.created is not None
    return (
        feedback.get("username"),
        feedback.get("password"),
        feedback.get("role"),
        "username" in feedback,
        "password" in feedback,
        "" if created else dash.no_update,  # the password is not kept on screen
        outcome.alert,
        changed + 1 if created else dash.no_update,
    )


@callback(
    Output("users-alert", "children"),
    Output("users-changed", "data", allow_duplicate=True),
    Input({"type": actions.ROLE_ITEM_TYPE, "index": ALL, "role": ALL}, "n_clicks"),
    Input({"type": actions.ACTIVE_BUTTON_TYPE, "index": ALL, "active": ALL}, "n_clicks"),
    State("users-changed", "data"),
    prevent_initial_call=True,
)
def _change(_roles: list[int | None], _actives: list[int | None], changed: int) -> tuple[Any, int]:
    target = clicked_button()
    with api_client() as api:
        if target["type"] == actions.ROLE_ITEM_TYPE:
            alert = actions.change_role(api, int(target["index"]), str(target["role"]))
        else:
            alert = actions.set_active(api, int(target["index"]), bool(target["active"]))
    return alert, changed + 1

"""Login page (``/login?next=/jobs``): sign in with a username and password.

The credentials go to the API (``POST /auth/login``) from this server, never from page
scripts; the token that comes back is kept in the signed session cookie and the browser
is sent on to ``next`` (a local path) or the classes page. Callbacks hand over to
``frontend.actions.auth``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html

from frontend import session
from frontend.actions import auth as actions
from frontend.auth import safe_next
from frontend.context import public_client, redirect

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/login", name="Sign in", title="headroom · sign in"
)


def _field(field: str, label: str, **input_props: Any) -> html.Div:
    return html.Div(
        [
            dbc.Label(label, html_for=f"login-{field}"),
            dbc.Input(id=f"login-{field}", **input_props),
            dbc.FormFeedback(id=f"login-{field}-feedback", type="invalid"),
        ],
        className="mb-3",
    )


def layout(next: str | None = None, **_query: str) -> html.Div:
    """``next`` (from the query string) is where to go after signing in."""
    page: html.Div = dbc.Row(
        dbc.Col(
            dbc.Card(
                dbc.CardBody(
                    [
                        html.H3("Sign in", className="card-title mb-3"),
                        html.Div(id="login-error"),
                        dbc.Form(
                            [
                                _field(
                                    "username",
                                    "Username",
                                    type="text",
                                    autocomplete="username",
                                    autofocus=True,
                                ),
                                _field(
                                    "password",
                                    "Password",
                                    type="password",
                                    autocomplete="current-password",
                                ),
                                dbc.Button(
                                    "Sign in",
                                    id="login-submit",
                                    type="submit",
                                    color="primary",
                                    class_name="w-100",
                                ),
                            ],
                            id="login-form",
                        ),
                        dcc.Store(id="login-next", data=safe_next(next)),
                    ]
                ),
                class_name="shadow-sm",
            ),
            md=6,
            lg=4,
        ),
        justify="center",
        class_name="mt-5",
    )
    return page


@callback(
    Output("login-username", "invalid"),
    Output("login-username-feedback", "children"),
    Output("login-password", "invalid"),
    Output("login-password-feedback", "children"),
    Output("login-password", "value"),
    Output("login-error", "children"),
    Input("login-form", "n_submit"),
    State("login-username", "value"),
    State("login-password", "value"),
    State("login-next", "data"),
    prevent_initial_call=True,
)
def _login(_n_submit: int | None, username: Any, password: Any, next_path: Any) -> tuple[Any, ...]:
    with public_client() as api:
        outcome = actions.login(api, username, password)
    if outcome.login is not None:
        session.start_session(outcome.login)
        redirect(safe_next(next_path))  # a full load: the navbar shows the user
        return False, None, False, None, dash.no_update, None
    feedback = outcome.feedback_by_field
    error = (
        dbc.Alert(outcome.error, color="danger", id="login-error-text") if outcome.error else None
    )
    return (
        "username" in feedback,
        feedback.get("username"),
        "password" in feedback,
        feedback.get("password"),
        "",  # never leave a rejected password in the field
        error,
    )

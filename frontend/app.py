"""The dashboard app: a navbar shell around the pages in ``frontend/pages``.

``create_app`` builds the app for one API base URL, which it stores in the Flask config
(see ``frontend.context``); ``main`` serves it on the configured host and port. Dash
keeps its page registry and ``dash.callback`` list in module globals, so build one app
per process.

Sign-in: every page but ``/login`` needs a session (``frontend.session``); a page load
without one is redirected to ``/login?next=<page>`` before Dash sees it. The session
cookie holds only an opaque session id (the API token stays on the server, in
``frontend.session_store``); it is signed with the key from ``frontend.secret_key``, is
HttpOnly and SameSite=Lax, and Secure when ``Settings.dashboard_secure_cookies`` says
the dashboard is served over TLS. ``main`` serves the app with waitress, a production
WSGI server (not Werkzeug's development server).

The shell's interval checks the API's health and, when signed in, asks the API who the
user is: a 401 there (token expired or revoked, account deactivated)
sends the browser back to the login page even on a page that polls nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import dash
import dash_bootstrap_components as dbc
import flask
import waitress
from dash import Input, Output, dcc, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate
from werkzeug.wrappers import Response as WerkzeugResponse

from backend.settings import Settings, get_settings
from frontend import session
from frontend.actions.auth import check_me, logout
from frontend.actions.shell import health_badge, role_badge
from frontend.auth import LOGIN_PATH, is_admin, login_redirect
from frontend.context import API_URL_KEY, AUTH_LOCATION_ID, api_client, public_client, redirect
from frontend.secret_key import load_or_create_secret_key
from frontend.session_store import SessionStore

PAGES_DIR = Path(__file__).resolve().parent / "pages"
HEALTH_INTERVAL_MS = 5_000
SERVER_THREADS = 16  # concurrent callbacks; a live view's long poll holds one ~1 s
SERVER_IDENT = "waitress"  # the Server header
SESSION_COOKIE_NAME = "headroom_session"

NAV_LINKS: tuple[tuple[str, str], ...] = (
    ("Classes", "/"),
    ("Streams", "/streams"),
    ("Jobs", "/jobs"),
    ("Live", "/live"),
    ("History", "/history"),
    ("Cluster", "/cluster"),
)
ADMIN_NAV_LINKS: tuple[tuple[str, str], ...] = (("Users", "/users"),)


def create_app(api_url: str | None = None, *, settings: Settings | None = None) -> dash.Dash:
    """The dashboard for the API at ``api_url`` (default: ``settings.public_api_url``).

    ``settings`` (default: the process's) also gives the session-signing key.
    """
    settings = settings or get_settings()
    app = dash.Dash(
        "frontend",  # the package, so pages are imported as ``frontend.pages.<name>``
        use_pages=True,
        pages_folder=str(PAGES_DIR),
        # Bootstrap 5.3.6 is served from frontend/assets, not a CDN: works offline.
        title="headroom",
        update_title="",  # no "Updating..." tab title on every 1 s refresh
    )
    server: flask.Flask = app.server
    server.config[API_URL_KEY] = (api_url or settings.public_api_url).rstrip("/")
    server.secret_key = load_or_create_secret_key(settings)
    server.config.update(
        SESSION_COOKIE_NAME=SESSION_COOKIE_NAME,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.dashboard_secure_cookies,
    )
    server.config[session.STORE_KEY] = SessionStore.under(
        settings.data_dir, max_age_s=settings.token_ttl_s
    )
    server.before_request(_require_login)
    app.layout = shell  # a function: the navbar shows who is signed in
    _validate_against_complete_layouts(app)

    @app.callback(
        Output("api-health", "children"),
        Output("nav-role", "children"),
        Input("api-health-interval", "n_intervals"),
    )
    def _refresh_shell(_n_intervals: int | None) -> tuple[Component, Any]:
        with public_client() as api:
            badge = health_badge(api)
        user = session.current_user()
        if user is None:
            return badge, dash.no_update
        with api_client() as api:
            me = check_me(api)
        if me is None:
            return badge, dash.no_update
        session.update_role(me["role"])
        return badge, role_badge(me["role"])

    @app.callback(
        Output("logout-button", "disabled"),
        Input("logout-button", "n_clicks"),
        prevent_initial_call=True,
    )
    def _logout(n_clicks: int | None) -> bool:
        if not n_clicks:
            raise PreventUpdate
        with api_client() as api:
            logout(api)
        session.end_session()
        redirect(LOGIN_PATH)
        return True

    return app


def resolve_api_url(api_url: str | None) -> str:
    """The given URL, else ``Settings.public_api_url``; without a trailing slash."""
    return (api_url or get_settings().public_api_url).rstrip("/")


def _validate_against_complete_layouts(app: dash.Dash) -> None:
    """Give the browser's callback validation every component any role can see.

    Pages differ by role (a viewer gets no create form), but Dash builds the layout it
    validates callbacks against once, from the first request's session, so a first
    visitor who is signed out would leave the operators' forms out and the browser
    would report "ID not found in layout". This hook runs after Dash's own first-request
    hook and replaces that layout with the complete one: each page's
    ``validation_layout()`` when it has one, and the shell of a signed-in admin.
    """
    done = False

    def _replace() -> None:
        nonlocal done
        if done:
            return
        done = True
        layouts: list[Any] = []
        for page in dash.page_registry.values():
            module = sys.modules.get(str(page["module"]))
            full = getattr(module, "validation_layout", None) or page["layout"]
            layouts.append(full() if callable(full) else full)
        admin: session.SessionUser = {
            "username": "",
            "role": "admin",
            "token": "",
            "expires_at": None,
        }
        # dash annotates the attribute as None, though it holds a layout once set.
        app.validation_layout = html.Div([*layouts, shell_for(admin)])  # type: ignore[assignment]

    app.server.before_request(_replace)


def _require_login() -> WerkzeugResponse | None:
    request = flask.request
    target = login_redirect(
        request.method,
        request.path,
        request.query_string.decode("latin-1"),
        signed_in=session.current_user() is not None,
    )
    return flask.redirect(target) if target else None


def shell() -> html.Div:
    """Navbar and page container, for whoever is signed in (the layout function)."""
    return shell_for(session.current_user())


def shell_for(user: session.SessionUser | None) -> html.Div:
    links = NAV_LINKS + (ADMIN_NAV_LINKS if user and is_admin(user["role"]) else ())
    navbar = dbc.Navbar(
        dbc.Container(
            [
                dbc.NavbarBrand("headroom", href="/"),
                dbc.Nav(
                    [
                        dbc.NavItem(dbc.NavLink(label, href=href, active="exact"))
                        for label, href in (links if user else ())
                    ],
                    navbar=True,
                    class_name="me-auto",
                ),
                html.Div(id="api-health", className="me-3"),
                _user_menu(user),
                dcc.Interval(id="api-health-interval", interval=HEALTH_INTERVAL_MS),
            ],
            fluid=True,
        ),
        color="dark",
        dark=True,
        class_name="mb-3",
    )
    return html.Div(
        [
            dcc.Location(id=AUTH_LOCATION_ID, refresh=True),
            navbar,
            dbc.Container(dash.page_container, fluid=True),
        ]
    )


def _user_menu(user: session.SessionUser | None) -> html.Div:
    # Always rendered, so the shell's callbacks find their components on every page.
    return html.Div(
        [
            html.Span(user["username"] if user else "", id="nav-user", className="text-light"),
            html.Span(role_badge(user["role"]) if user else None, id="nav-role", className="ms-2"),
            dbc.Button(
                "Log out",
                id="logout-button",
                color="outline-light",
                size="sm",
                class_name="ms-3",
                style=None if user else {"display": "none"},
            ),
        ],
        className="d-flex align-items-center",
    )


def main() -> None:
    """Serve the dashboard on ``dashboard_host:dashboard_port`` (``python -m frontend``)
    with waitress: a production WSGI server, threaded, one process (its sessions are on
    disk, so more processes on the same data directory would share them)."""
    settings = get_settings()
    app = create_app(settings.public_api_url, settings=settings)
    waitress.serve(
        app.server,
        host=settings.dashboard_host,
        port=settings.dashboard_port,
        threads=SERVER_THREADS,
        ident=SERVER_IDENT,
    )

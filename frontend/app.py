"""The dashboard app: a navbar shell around the pages in ``frontend/pages``.

``create_app`` builds the app for one API base URL, which it stores in the Flask config
(see ``frontend.context``); ``main`` serves it on the configured host and port. Dash
keeps its page registry and ``dash.callback`` list in module globals, so build one app
per process.
"""

from __future__ import annotations

from pathlib import Path

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, dcc, html
from dash.development.base_component import Component

from backend.settings import get_settings
from frontend.actions.shell import health_badge
from frontend.context import API_URL_KEY, api_client

PAGES_DIR = Path(__file__).resolve().parent / "pages"
HEALTH_INTERVAL_MS = 5_000

NAV_LINKS: tuple[tuple[str, str], ...] = (("Classes", "/"), ("Jobs", "/jobs"), ("Live", "/live"))


def create_app(api_url: str | None = None) -> dash.Dash:
    """The dashboard for the API at ``api_url`` (default: ``Settings.public_api_url``)."""
    app = dash.Dash(
        "frontend",  # the package, so pages are imported as ``frontend.pages.<name>``
        use_pages=True,
        pages_folder=str(PAGES_DIR),
        # Bootstrap 5.3.6 is served from frontend/assets, not a CDN: works offline.
        title="headroom",
        update_title="",  # no "Updating..." tab title on every 1 s refresh
    )
    app.server.config[API_URL_KEY] = resolve_api_url(api_url)
    app.layout = _shell()

    @app.callback(
        Output("api-health", "children"),
        Input("api-health-interval", "n_intervals"),
    )
    def _refresh_health(_n_intervals: int | None) -> Component:
        with api_client() as api:
            return health_badge(api)

    return app


def resolve_api_url(api_url: str | None) -> str:
    """The given URL, else ``Settings.public_api_url``; without a trailing slash."""
    return (api_url or get_settings().public_api_url).rstrip("/")


def _shell() -> html.Div:
    navbar = dbc.Navbar(
        dbc.Container(
            [
                dbc.NavbarBrand("headroom", href="/"),
                dbc.Nav(
                    [
                        dbc.NavItem(dbc.NavLink(label, href=href, active="exact"))
                        for label, href in NAV_LINKS
                    ],
                    navbar=True,
                    class_name="me-auto",
                ),
                html.Div(id="api-health"),
                dcc.Interval(id="api-health-interval", interval=HEALTH_INTERVAL_MS),
            ],
            fluid=True,
        ),
        color="dark",
        dark=True,
        class_name="mb-3",
    )
    return html.Div([navbar, dbc.Container(dash.page_container, fluid=True)])


def main() -> None:
    """Serve the dashboard on ``dashboard_host:dashboard_port`` (``python -m frontend``)."""
    settings = get_settings()
    app = create_app(settings.public_api_url)
    app.run(host=settings.dashboard_host, port=settings.dashboard_port, debug=False)

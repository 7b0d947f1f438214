"""Where callbacks find the API: the base URL is stored on the app that serves them.

``create_app`` puts the URL in the Flask config under ``API_URL_KEY``; a callback calls
``api_client()``, which reads it from ``dash.get_app()`` (the app handling the request),
so nothing is kept in module-level mutable state.
"""

from __future__ import annotations

import dash

from frontend.api import ApiClient

API_URL_KEY = "HEADROOM_API_URL"


def api_url() -> str:
    """Base URL of the API for the app handling the current request."""
    app = dash.get_app()  # type: ignore[no-untyped-call]  # dash leaves it unannotated
    return str(app.server.config[API_URL_KEY])


def api_client() -> ApiClient:
    """A new client for the current app's API; use it in a ``with`` block."""
    return ApiClient(api_url())

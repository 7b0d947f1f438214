"""Where callbacks find the API, and with whose token they call it.

``create_app`` puts the API's base URL in the Flask config under ``API_URL_KEY``; a
callback calls ``api_client()``, which reads it from ``dash.get_app()`` (the app
handling the request) and the token from the signed-in session, so nothing is kept in
module-level mutable state.

A 401 means the session is over (token expired or revoked, or never signed in): once
the ``with`` block ends, ``api_client`` clears the session and points the shell's
``AUTH_LOCATION_ID`` at the login page, which reloads the browser there. The callback's
own outputs (an alert saying why) still arrive, for the instant before the reload.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

import dash
import flask
from dash.exceptions import MissingCallbackContextException

from frontend import session
from frontend.api import ApiClient
from frontend.auth import LOGIN_PATH, login_href

API_URL_KEY = "HEADROOM_API_URL"
AUTH_LOCATION_ID = "auth-location"  # a refreshing dcc.Location in the shell


def api_url() -> str:
    """Base URL of the API for the app handling the current request."""
    app = dash.get_app()  # type: ignore[no-untyped-call]  # dash leaves it unannotated
    return str(app.server.config[API_URL_KEY])


@contextmanager
def api_client() -> Iterator[ApiClient]:
    """A client for the current app's API with the signed-in user's token."""
    client = ApiClient(api_url(), token=session.current_token())
    try:
        yield client
    finally:
        client.close()
        if client.unauthorized:
            session.end_session()
            page = _current_page()
            if urlsplit(page or "/").path != LOGIN_PATH:  # already there: no reload loop
                redirect(login_href(page))


def public_client() -> ApiClient:
    """A client without a token, for the login and the health check."""
    return ApiClient(api_url())


def redirect(href: str) -> None:
    """Send the browser to ``href`` (a full page load) from inside a callback; outside
    one (an action called by a test) there is no browser to send, so nothing happens."""
    with suppress(MissingCallbackContextException):
        dash.set_props(AUTH_LOCATION_ID, {"href": href})


def _current_page() -> str | None:
    """The page the callback came from (its Referer), as a local path with query."""
    if not flask.has_request_context() or not flask.request.referrer:
        return None
    parts = urlsplit(flask.request.referrer)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path

"""The signed-in user of the current request, kept in Flask's session.

Flask's session is a cookie signed with the app's secret key (see
``frontend.secret_key``), sent HttpOnly and SameSite=Lax (``frontend.app``): page
scripts cannot read it and other sites' forms do not carry it. It holds the API token,
the username and the role. Only the username and role are ever put into a page; the
token never reaches the browser's JavaScript-visible state and is never logged.
"""

from __future__ import annotations

from typing import TypedDict

import flask

from frontend.api import LoginResult, Role
from frontend.auth import as_role

SESSION_KEY = "headroom_user"


class SessionUser(TypedDict):
    username: str
    role: Role
    token: str
    expires_at: str | None


def current_user() -> SessionUser | None:
    """The signed-in user, or ``None`` (no session, or outside a request)."""
    if not flask.has_request_context():
        return None
    data = flask.session.get(SESSION_KEY)
    if not isinstance(data, dict):
        return None
    token, username, role = data.get("token"), data.get("username"), as_role(data.get("role"))
    if not isinstance(token, str) or not token or not isinstance(username, str) or not role:
        return None
    expires_at = data.get("expires_at")
    return {
        "username": username,
        "role": role,
        "token": token,
        "expires_at": expires_at if isinstance(expires_at, str) else None,
    }


def current_token() -> str | None:
    user = current_user()
    return user["token"] if user else None


def current_role() -> Role | None:
    user = current_user()
    return user["role"] if user else None


def start_session(login: LoginResult) -> SessionUser:
    """Sign in: forget any previous session, keep the new token, name and role."""
    user: SessionUser = {
        "username": login["username"],
        "role": login["role"],
        "token": login["access_token"],
        "expires_at": login["expires_at"],
    }
    flask.session.clear()
    flask.session[SESSION_KEY] = dict(user)
    return user


def update_role(role: Role) -> None:
    """The API says the role changed (an admin changed it): keep the new one."""
    data = flask.session.get(SESSION_KEY)
    if isinstance(data, dict) and data.get("role") != role:
        flask.session[SESSION_KEY] = {**data, "role": role}


def end_session() -> None:
    if flask.has_request_context():
        flask.session.clear()

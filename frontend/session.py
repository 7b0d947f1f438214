"""The signed-in user of the current request.

The browser keeps only an opaque, random session id in Flask's session cookie (signed
with the key from ``frontend.secret_key``; HttpOnly, SameSite=Lax, and Secure when
``Settings.dashboard_secure_cookies`` is set: see ``frontend.app``). The API token, the
username and the role live on the server, in the ``frontend.session_store`` record of
that id: a stolen or decoded cookie carries no token, and signing out deletes the
record. Only the username and role are ever put into a page; the token never reaches
the browser and is never logged.
"""

from __future__ import annotations

from typing import TypedDict

import flask

from frontend.api import LoginResult, Role
from frontend.auth import as_role
from frontend.session_store import SessionStore, new_session_id

SESSION_KEY = "headroom_sid"  # the only thing in the cookie: the session's id
STORE_KEY = "HEADROOM_SESSION_STORE"  # Flask config: the app's SessionStore


class SessionUser(TypedDict):
    username: str
    role: Role
    token: str
    expires_at: str | None


def store_of(app: flask.Flask) -> SessionStore:
    store = app.config[STORE_KEY]
    assert isinstance(store, SessionStore), STORE_KEY
    return store


def _session_id() -> str | None:
    if not flask.has_request_context():
        return None
    session_id = flask.session.get(SESSION_KEY)
    return session_id if isinstance(session_id, str) and session_id else None


def current_user() -> SessionUser | None:
    """The signed-in user, or ``None`` (no session, a session signed out, or outside a
    request)."""
    session_id = _session_id()
    if session_id is None:
        return None
    data = store_of(flask.current_app).load(session_id)
    if data is None:
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
    """Sign in: end any previous session, keep the new token, name and role on the
    server under a new id, and give the browser that id."""
    end_session()
    user: SessionUser = {
        "username": login["username"],
        "role": login["role"],
        "token": login["access_token"],
        "expires_at": login["expires_at"],
    }
    session_id = new_session_id()
    store = store_of(flask.current_app)
    store.prune()
    store.save(session_id, dict(user))
    flask.session[SESSION_KEY] = session_id
    return user


def update_role(role: Role) -> None:
    """The API says the role changed (an admin changed it): keep the new one."""
    user = current_user()
    session_id = _session_id()
    if user is not None and session_id is not None and user["role"] != role:
        store_of(flask.current_app).save(session_id, dict({**user, "role": role}))


def end_session() -> None:
    """Forget the session: its server-side record, and the id in the cookie."""
    session_id = _session_id()
    if session_id is not None:
        store_of(flask.current_app).delete(session_id)
    if flask.has_request_context():
        flask.session.clear()

"""Who may do what in the dashboard, and where an anonymous visitor is sent.

Pure functions: no Flask, no I/O. The API is the judge of every permission (it answers
403 when a role is too low); these only decide which controls to offer, so a viewer is
not shown buttons that would be refused.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from frontend.api import ROLES, Role

LOGIN_PATH = "/login"
HOME_PATH = "/"
# Served to anyone: Dash's own endpoints (layout, callbacks, scripts), static assets,
# the favicon and the login page. Everything else needs a signed-in session.
PUBLIC_PREFIXES: tuple[str, ...] = ("/_dash-", "/assets/", "/_favicon", "/_reload-hash")
CHANGE_ROLE: Role = "operator"  # creating/deleting classes, starting/stopping jobs
ADMIN_ROLE: Role = "admin"  # managing users


def as_role(value: object) -> Role | None:
    """``value`` if it names a role, else ``None``."""
    for role in ROLES:
        if value == role:
            return role
    return None


def role_allows(role: str | None, needed: Role) -> bool:
    """Whether ``role`` is ``needed`` or higher (viewer < operator < admin)."""
    have = as_role(role)
    return have is not None and ROLES.index(have) >= ROLES.index(needed)


def can_change(role: str | None) -> bool:
    return role_allows(role, CHANGE_ROLE)


def is_admin(role: str | None) -> bool:
    return role_allows(role, ADMIN_ROLE)


def needs_role_hint(needed: Role, role: str | None, what: str) -> str:
    """The sentence shown where a control is withheld, e.g. for a viewer."""
    return f"{what} needs the {needed} role or higher; you are signed in as {role or 'nobody'}."


def is_public_path(path: str) -> bool:
    return path == LOGIN_PATH or path.startswith(PUBLIC_PREFIXES)


def safe_next(value: object) -> str:
    """A local path to return to after login; anything else (another site, ``//host``,
    a backslash trick, the login page itself, junk) gives the home page."""
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//"):
        return HOME_PATH
    if "\\" in value or any(ord(char) < 32 for char in value):
        return HOME_PATH
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or parts.path == LOGIN_PATH:
        return HOME_PATH
    return value


def login_href(next_path: str | None = None) -> str:
    """``/login``, with ``?next=`` when there is somewhere other than home to go back to."""
    target = safe_next(next_path) if next_path else HOME_PATH
    if target == HOME_PATH:
        return LOGIN_PATH
    return f"{LOGIN_PATH}?{urlencode({'next': target})}"


def login_redirect(method: str, path: str, query: str, signed_in: bool) -> str | None:
    """Where to send a request before serving it: ``None`` to serve it, else the login
    page (remembering the page asked for). Only page loads (GET, HEAD) are redirected; a
    callback without a session reaches the API without a token, gets 401 and is sent to
    the login page by ``frontend.context.api_client``."""
    if signed_in or method not in ("GET", "HEAD") or is_public_path(path):
        return None
    return login_href(f"{path}?{query}" if query else path)

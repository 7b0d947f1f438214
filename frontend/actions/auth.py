"""Login page and navbar: sign in, sign out, and notice a changed role.

The API checks the password and issues the token; these functions only pass the
credentials on and turn each answer into something to show. A password is never put
into an outcome, a message or a log line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from frontend.api import ApiClient, ApiError, LoginResult, User, detail_text

LOGIN_FIELDS: tuple[str, ...] = ("username", "password")
MISSING_MESSAGES: dict[str, str] = {
    "username": "Enter your username.",
    "password": "Enter your password.",
}


@dataclass(frozen=True)
class LoginOutcome:
    """``login`` is set on success; otherwise ``error`` (above the form) and/or
    ``feedback_by_field`` (keyed by ``LOGIN_FIELDS``) say what went wrong."""

    feedback_by_field: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    login: LoginResult | None = None


def login(api: ApiClient, username: object, password: object) -> LoginOutcome:
    """Exchange a username and password for a token at ``POST /auth/login``."""
    name = username.strip() if isinstance(username, str) else ""
    secret = password if isinstance(password, str) else ""
    missing = {
        key: message
        for key, message in MISSING_MESSAGES.items()
        if not (name if key == "username" else secret)
    }
    if missing:
        return LoginOutcome(feedback_by_field=missing)
    try:
        result = api.login(name, secret)
    except ApiError as err:
        if err.status_code in (
            httpx.codes.UNAUTHORIZED,
            httpx.codes.UNPROCESSABLE_ENTITY,
            httpx.codes.TOO_MANY_REQUESTS,
        ):
            # 401: "username or password is wrong" (the same for an unknown user); 429:
            # too many failed logins, and how many seconds until the next try.
            return LoginOutcome(error=detail_text(err.detail) or err.message)
        return LoginOutcome(error=f"Could not sign in: {err.message}")
    return LoginOutcome(login=result)


def logout(api: ApiClient) -> str | None:
    """Revoke the token at the API; ``None`` when done, else why it could not be.

    A token that is already expired or revoked (401) counts as signed out.
    """
    try:
        api.logout()
    except ApiError as err:
        if err.status_code == httpx.codes.UNAUTHORIZED:
            return None
        return f"The API could not revoke the session token: {err.message}"
    return None


def check_me(api: ApiClient) -> User | None:
    """The signed-in account as the API sees it now, or ``None`` when it could not say
    (a 401 ends the session through ``api.unauthorized``; other errors are transient)."""
    try:
        return api.me()
    except ApiError:
        return None

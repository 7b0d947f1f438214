"""Navbar shell: whether the API (and its database) answer, and the signed-in role."""

from __future__ import annotations

import dash_bootstrap_components as dbc
from dash.development.base_component import Component

from frontend.api import ApiClient, ApiError


def health_badge(api: ApiClient) -> Component:
    """Green when the API and its database are ok, amber when the API answers but not
    "ok", red when it cannot be reached or answers with an error; the title says why."""
    try:
        health = api.health()
    except ApiError as err:
        text = "API down" if err.status_code is None else f"API error {err.status_code}"
        failed: Component = dbc.Badge(text, color="danger", title=err.message)
        return failed
    if health.get("status") == "ok" and health.get("database") == "ok":
        ok: Component = dbc.Badge("API ok", color="success", title=api.base_url)
        return ok
    degraded: Component = dbc.Badge(
        f"API {health.get('status', '?')}, database {health.get('database', '?')}",
        color="warning",
        title=api.base_url,
    )
    return degraded


ROLE_COLORS: dict[str, str] = {"viewer": "secondary", "operator": "info", "admin": "warning"}


def role_badge(role: str) -> Component:
    """The signed-in role, as shown next to the username in the navbar."""
    badge: Component = dbc.Badge(role, color=ROLE_COLORS.get(role, "light"), id="nav-role-badge")
    return badge

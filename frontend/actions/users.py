"""Users page (admins): list accounts, create one with a role, change a role, deactivate.

The API is the judge of the rules (unique usernames, password length, the username
pattern); this module only checks that the fields were filled in and puts each message
the API returns next to its field. An admin is not offered controls on their own
account here: demoting or deactivating yourself by a slip would lock you out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dash_bootstrap_components as dbc
import httpx
from dash import html
from dash.development.base_component import Component

from frontend.api import ROLES, ApiClient, ApiError, User, UserCreate, detail_text, error_text
from frontend.auth import as_role
from frontend.components import (
    data_table,
    error_alert,
    format_timestamp,
    loaded_table,
    success_alert,
)

USER_FIELDS: tuple[str, ...] = ("username", "password", "role")
MISSING_MESSAGES: dict[str, str] = {
    "username": "Enter a username.",
    "password": "Enter a password (at least 8 characters).",
    "role": "Choose a role.",
}
ROLE_ITEM_TYPE = "user-role"  # {"type", "index": user id, "role": the new role}
ACTIVE_BUTTON_TYPE = "user-active"  # {"type", "index": user id, "active": 1 or 0 to set}


@dataclass(frozen=True)
class CreateOutcome:
    feedback_by_field: dict[str, str] = field(default_factory=dict)
    alert: Component | None = None
    created: User | None = None


def create_user(api: ApiClient, values: Mapping[str, Any]) -> CreateOutcome:
    """Create an account from the form; the password is sent once and never shown."""
    username = values.get("username")
    username = username.strip() if isinstance(username, str) else ""
    password = values.get("password") if isinstance(values.get("password"), str) else ""
    role = as_role(values.get("role"))
    given = {"username": username, "password": password, "role": role}
    missing = {key: message for key, message in MISSING_MESSAGES.items() if not given[key]}
    if missing or role is None:
        return CreateOutcome(feedback_by_field=missing)
    body: UserCreate = {"username": username, "password": str(password), "role": role}
    try:
        created = api.create_user(body)
    except ApiError as err:
        if err.status_code == httpx.codes.CONFLICT:
            return CreateOutcome(feedback_by_field={"username": detail_text(err.detail)})
        on_form = {k: v for k, v in err.field_errors.items() if k in USER_FIELDS}
        if on_form and len(on_form) == len(err.field_errors):
            return CreateOutcome(feedback_by_field=on_form)
        return CreateOutcome(
            feedback_by_field=on_form,
            alert=error_alert(f"Could not create the user: {error_text(err)}"),
        )
    return CreateOutcome(
        alert=success_alert(f"Created {created['role']} {created['username']}."), created=created
    )


def change_role(api: ApiClient, user_id: int, role: str) -> Component:
    new_role = as_role(role)
    if new_role is None:
        return error_alert(f"role={role!r} is not one of {', '.join(ROLES)}.")
    try:
        user = api.update_user(user_id, {"role": new_role})
    except ApiError as err:
        return error_alert(f"Could not change the role of user #{user_id}: {error_text(err)}")
    return success_alert(f"{user['username']} is now {user['role']}.")


def set_active(api: ApiClient, user_id: int, active: bool) -> Component:
    try:
        user = api.update_user(user_id, {"active": active})
    except ApiError as err:
        verb = "activate" if active else "deactivate"
        return error_alert(f"Could not {verb} user #{user_id}: {error_text(err)}")
    state = "active again" if user["active"] else "deactivated: they can no longer sign in"
    return success_alert(f"{user['username']} is {state}.")


def load_users_table(api: ApiClient, me: str | None) -> tuple[Component, Component | None]:
    """``(table, alert)``; ``me`` is the signed-in admin, whose row has no controls."""
    return loaded_table(api.list_users, lambda users: render_users_table(users, me), "Users")


def render_users_table(users: Sequence[User], me: str | None) -> Component:
    rows = [
        html.Tr(
            [
                html.Td(str(user["id"])),
                html.Td(user["username"]),
                html.Td(user["role"]),
                html.Td(
                    dbc.Badge(
                        "active" if user["active"] else "deactivated",
                        color="success" if user["active"] else "secondary",
                    )
                ),
                html.Td(format_timestamp(user["created_at"])),
                html.Td(
                    _controls(user)
                    if user["username"] != me
                    else html.Span("you", className="text-muted"),
                    className="text-nowrap",
                ),
            ],
            id=f"user-row-{user['id']}",
        )
        for user in sorted(users, key=lambda u: u["id"])
    ]
    heads = ("ID", "Username", "Role", "Status", "Created (UTC)", "")
    return data_table(heads, rows, "users-table-grid")


def _controls(user: User) -> list[Component]:
    return [
        dbc.DropdownMenu(
            [
                dbc.DropdownMenuItem(
                    f"Make {role}",
                    id={"type": ROLE_ITEM_TYPE, "index": user["id"], "role": role},
                )
                for role in ROLES
                if role != user["role"]
            ],
            label="Change role",
            size="sm",
            color="outline-primary",
            class_name="d-inline-block me-2",
        ),
        dbc.Button(
            "Deactivate" if user["active"] else "Activate",
            id={
                "type": ACTIVE_BUTTON_TYPE,
                "index": user["id"],
                "active": 0 if user["active"] else 1,
            },
            size="sm",
            color="outline-danger" if user["active"] else "outline-success",
        ),
    ]

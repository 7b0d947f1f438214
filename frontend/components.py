"""Small view helpers shared by the pages: alerts, status badges, timestamps, form
fields and table buttons."""

from __future__ import annotations

from datetime import UTC, datetime

import dash_bootstrap_components as dbc
from dash import html
from dash.development.base_component import Component

from frontend.api import Role
from frontend.auth import CHANGE_ROLE, needs_role_hint

STATUS_COLORS: dict[str, str] = {
    "pending": "secondary",
    "starting": "info",
    "running": "success",
    "stopping": "warning",
    "stopped": "dark",
    "failed": "danger",
}


# dash_bootstrap_components has no type information; the typed locals below keep
# callers working with dash's own ``Component`` type rather than ``Any``.


def error_alert(message: str) -> Component:
    alert: Component = dbc.Alert(message, color="danger", dismissable=True, class_name="mb-2")
    return alert


def success_alert(children: str | Component | list[str | Component]) -> Component:
    alert: Component = dbc.Alert(children, color="success", dismissable=True, class_name="mb-2")
    return alert


def status_badge(status: str) -> Component:
    badge: Component = dbc.Badge(status, color=STATUS_COLORS.get(status, "light"))
    return badge


def format_timestamp(value: str | None) -> str:
    """ISO-8601 from the API → ``YYYY-MM-DD HH:MM:SS`` in UTC; unparsable text as is.

    A timestamp without an offset is taken to be UTC already (the API stores UTC).
    """
    if not value:
        return "—"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC)
    return parsed.strftime("%Y-%m-%d %H:%M:%S")


def format_number(value: float | None) -> str:
    """Compact number for tables: ``6.0`` → ``6``, ``0.95`` → ``0.95``."""
    return "—" if value is None else f"{value:g}"


def labelled_field(
    prefix: str, field: str, label: str, control: Component, hint: str | None = None
) -> dbc.Col:
    """A form column: the label, ``control`` (whose id must be ``<prefix>-<field>``), the
    message about the field (``<prefix>-<field>-feedback``) and an optional hint.

    The message is always displayed ("d-block"): a select or a textarea is not always
    marked invalid by Bootstrap, and an empty message takes no room.
    """
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"{prefix}-{field}"),
            control,
            html.Div(id=f"{prefix}-{field}-feedback", className="invalid-feedback d-block"),
            *([dbc.FormText(hint, id=f"{prefix}-{field}-hint")] if hint else []),
        ]
    )


def delete_button(delete_type: str, index: int) -> Component:
    """A table row's Delete button (pattern-matching id ``{type, index}``)."""
    button: Component = dbc.Button(
        "Delete", id={"type": delete_type, "index": index}, color="outline-danger", size="sm"
    )
    return button


def edit_delete_buttons(edit_type: str, delete_type: str, index: int) -> list[Component]:
    """A table row's Edit and Delete buttons (pattern-matching ids ``{type, index}``)."""
    return [
        dbc.Button(
            "Edit",
            id={"type": edit_type, "index": index},
            color="outline-primary",
            size="sm",
            class_name="me-2",
        ),
        delete_button(delete_type, index),
    ]


def role_hint_alert(
    role: Role | None, action: str, component_id: str, class_name: str = "mt-4"
) -> dbc.Alert:
    """What a user whose role may not change things sees instead of a form: ``action``
    ("Creating and deleting classes") needs an operator."""
    return dbc.Alert(
        needs_role_hint(CHANGE_ROLE, role, action),
        color="info",
        id=component_id,
        class_name=class_name,
    )

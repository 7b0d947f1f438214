"""Small view helpers shared by the pages: alerts, status badges, timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

import dash_bootstrap_components as dbc
from dash.development.base_component import Component

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
        dbc.Button(
            "Delete",
            id={"type": delete_type, "index": index},
            color="outline-danger",
            size="sm",
        ),
    ]

"""Small view helpers shared by the pages: alerts, status badges, timestamps, form
fields, tables and their buttons, and the parts of a page that depend on the role."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import dash_bootstrap_components as dbc
from dash import ctx, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate

from frontend import session
from frontend.api import ApiError, Role, error_text
from frontend.auth import CHANGE_ROLE, can_change, needs_role_hint

T = TypeVar("T")

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


def is_blank(value: Any) -> bool:
    """A form value left empty (``None``, or only white space)."""
    return value is None or (isinstance(value, str) and not value.strip())


def form_number(value: Any) -> float | None:
    """A finite form number, else ``None`` (bools are not numbers)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def labelled_field(
    prefix: str,
    field: str,
    label: str,
    control: Component,
    hint: str | None = None,
    **column: Any,
) -> dbc.Col:
    """A form column: the label, ``control`` (whose id must be ``<prefix>-<field>``), the
    message about the field (``<prefix>-<field>-feedback``) and an optional hint;
    ``column`` goes to the ``dbc.Col`` (its width, e.g. ``md=3``).

    The message is always displayed ("d-block"): a select or a textarea is not always
    marked invalid by Bootstrap, and an empty message takes no room.
    """
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"{prefix}-{field}"),
            control,
            html.Div(id=f"{prefix}-{field}-feedback", className="invalid-feedback d-block"),
            *([dbc.FormText(hint, id=f"{prefix}-{field}-hint")] if hint else []),
        ],
        **column,
    )


def row_button(label: str, button_type: str, index: int, color: str, **props: Any) -> Component:
    """A small button of one table or form row (pattern-matching id ``{type, index}``)."""
    button: Component = dbc.Button(
        label, id={"type": button_type, "index": index}, color=color, size="sm", **props
    )
    return button


def delete_button(delete_type: str, index: int) -> Component:
    """A table row's Delete button (pattern-matching id ``{type, index}``)."""
    return row_button("Delete", delete_type, index, "outline-danger")


def edit_delete_buttons(edit_type: str, delete_type: str, index: int) -> list[Component]:
    """A table row's Edit and Delete buttons (pattern-matching ids ``{type, index}``)."""
    return [
        row_button("Edit", edit_type, index, "outline-primary", class_name="me-2"),
        delete_button(delete_type, index),
    ]


def clicked_button() -> dict[str, Any]:
    """The pattern-matching id (``{type, index, …}``) of the table button whose click
    fired the running callback.

    Every re-render of a table re-creates its buttons, which fires their callbacks with
    ``n_clicks`` None: that is not a click, and the callback stops (``PreventUpdate``).
    """
    if not isinstance(ctx.triggered_id, dict) or not ctx.triggered[0]["value"]:
        raise PreventUpdate
    return dict(ctx.triggered_id)


def clicked_index() -> int:
    """The ``index`` (the row's id) of the button ``clicked_button`` names."""
    return int(clicked_button()["index"])


def table_page_head(title: str, prefix: str, *intro: Component) -> list[Component]:
    """The top of a page built around one table: its heading, any ``intro``, the places of
    the alerts about its actions (``<prefix>-alert``) and about loading it
    (``<prefix>-load-alert``), and the table's (``<prefix>-table``)."""
    return [
        html.H2(title),
        *intro,
        html.Div(id=f"{prefix}-alert"),
        html.Div(id=f"{prefix}-load-alert"),
        html.Div(id=f"{prefix}-table"),
    ]


def no_rows_yet(nothing: str, can_add: bool, add_hint: str, operator_hint: str) -> Component:
    """What a table with no rows shows: ``nothing`` ("No classes yet."), then how to add
    one: ``add_hint`` for a user whose role may, else ``operator_hint`` (who can)."""
    hint = add_hint if can_add else operator_hint
    return html.P(f"{nothing} {hint}", className="text-muted")


def data_table(headings: Sequence[str], rows: Sequence[Component], table_id: str) -> Component:
    """A small hover table: one heading row, then ``rows``."""
    header = html.Thead(html.Tr([html.Th(text) for text in headings]))
    table: Component = dbc.Table(
        [header, html.Tbody(list(rows))], hover=True, size="sm", id=table_id
    )
    return table


def loaded_table(
    read: Callable[[], T], render: Callable[[T], Component], what: str
) -> tuple[Component, Component | None]:
    """``(table, alert)``: ``render`` of what ``read`` asks the API for, or a placeholder
    saying the ``what`` ("Classes") could not be loaded and an alert saying why."""
    try:
        items = read()
    except ApiError as err:
        placeholder = html.P(f"{what} could not be loaded.", className="text-muted")
        return placeholder, error_alert(error_text(err))
    return render(items), None


def deleted(what: str, delete: Callable[[], object]) -> Component:
    """The alert after ``delete`` asked the API to delete ``what`` ("class #3")."""
    try:
        delete()
    except ApiError as err:
        return error_alert(f"Could not delete {what}: {error_text(err)}")
    return success_alert(f"Deleted {what}.")


def role_layouts(
    layout_for: Callable[[Role | None], Component],
) -> tuple[Callable[..., Component], Callable[[], Component]]:
    """A page's ``layout`` and ``validation_layout`` when it differs only by role.

    ``layout`` is read per request for the signed-in user's role (query parameters are
    ignored); ``validation_layout`` has every component any role sees (an admin's page),
    which ``frontend.app`` validates callbacks against."""

    def layout(**_query: str) -> Component:
        return layout_for(session.current_role())

    def validation_layout() -> Component:
        return layout_for("admin")

    return layout, validation_layout


def change_section(
    role: Role | None, title: str, parts: Sequence[Component], action: str, hint_id: str
) -> list[Component]:
    """The part of a page that changes things: its heading and ``parts`` for a role that
    may change them, else the hint that ``action`` needs an operator."""
    if can_change(role):
        return [html.H4(title, className="mt-4"), *parts]
    return [role_hint_alert(role, action, hint_id)]


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

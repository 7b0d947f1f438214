"""The query form's operator rows as Dash components (pure: values in, components out).

Row ``i`` has a kind dropdown, one control per field of the vocabulary (only those of its
kind shown: switching the kind keeps what was typed into a shared field such as the
window size), a Remove button and a store of the keys no control holds (see
``frontend.query_spec``). Every control's id carries the row and the field key, which
is also how the API names a field (``operators[1].window.size_s``), so a message lands
next to its control.
"""

from __future__ import annotations

import json
from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc
from dash.development.base_component import Component

from frontend.components import row_button
from frontend.operators import (
    KIND_FIELD,
    OPERATOR_FIELDS,
    OperatorField,
    choice_options,
    fields_for,
    kind_options,
)
from frontend.query_errors import QueryFeedback
from frontend.query_spec import FormValue, OperatorRow

KIND_TYPE = "query-op-kind"
FIELD_TYPE = "query-op-field"
FEEDBACK_TYPE = "query-op-feedback"
GROUP_TYPE = "query-op-group"
EXTRA_TYPE = "query-op-extra"
REMOVE_TYPE = "query-op-remove"
HIDDEN: dict[str, str] = {"display": "none"}


def field_id(row: int, key: str) -> dict[str, Any]:
    return {"type": FIELD_TYPE, "index": row, "field": key}


def feedback_id(row: int, key: str) -> dict[str, Any]:
    return {"type": FEEDBACK_TYPE, "index": row, "field": key}


def group_id(row: int, key: str) -> dict[str, Any]:
    return {"type": GROUP_TYPE, "index": row, "field": key}


def shown_style(kind: str | None, form_field: OperatorField) -> dict[str, str] | None:
    """``None`` (shown) when operators of ``kind`` have the field, else hidden."""
    return None if kind in form_field.kinds else HIDDEN


def group_styles(kind: str | None) -> list[dict[str, str] | None]:
    """The style of every field group of a row, in ``OPERATOR_FIELDS`` order."""
    return [shown_style(kind, form_field) for form_field in OPERATOR_FIELDS]


def operator_rows(
    rows: tuple[OperatorRow, ...], feedback: QueryFeedback | None = None
) -> list[Component]:
    """A card per row, with the messages of ``feedback`` next to their controls."""
    placed = feedback.operators if feedback is not None else {}
    return [
        _row_card(i, row, {key: msg for (r, key), msg in placed.items() if r == i})
        for i, row in enumerate(rows)
    ]


def _row_card(index: int, row: OperatorRow, messages: dict[str, str]) -> Component:
    kind_message = messages.get(KIND_FIELD)
    head = dbc.Row(
        [
            dbc.Col(
                [
                    dbc.Label(f"Operator {index + 1}", class_name="small mb-0 fw-semibold"),
                    dbc.Select(
                        id={"type": KIND_TYPE, "index": index},
                        options=kind_options(row.kind),
                        value=row.kind,
                        size="sm",
                        invalid=kind_message is not None,
                    ),
                    dbc.FormFeedback(
                        kind_message, id=feedback_id(index, KIND_FIELD), type="invalid"
                    ),
                ],
                md=5,
            ),
            dbc.Col(
                row_button("Remove", REMOVE_TYPE, index, "outline-danger"),
                width="auto",
                class_name="ms-auto align-self-end",
            ),
        ],
        class_name="g-2 mb-2",
    )
    groups = [
        _group(index, form_field, row.kind, row.values.get(form_field.key), messages)
        for form_field in OPERATOR_FIELDS
    ]
    card: Component = dbc.Card(
        dbc.CardBody(
            [
                head,
                dbc.Row(groups, class_name="g-2"),
                dcc.Store(id={"type": EXTRA_TYPE, "index": index}, data=row.extra),
            ],
            class_name="p-2",
        ),
        class_name="mb-2",
        id=f"query-op-{index}",
    )
    return card


def _group(
    index: int,
    form_field: OperatorField,
    kind: str,
    value: FormValue,
    messages: dict[str, str],
) -> Component:
    message = messages.get(form_field.key) if form_field in fields_for(kind) else None
    group: Component = dbc.Col(
        [
            dbc.Label(
                form_field.label, html_for=_html_id(index, form_field.key), class_name="small mb-0"
            ),
            _control(index, form_field, value, invalid=message is not None),
            dbc.FormFeedback(message, id=feedback_id(index, form_field.key), type="invalid"),
        ],
        md=4,
        id=group_id(index, form_field.key),
        style=shown_style(kind, form_field),
    )
    return group


def _control(index: int, form_field: OperatorField, value: FormValue, *, invalid: bool) -> Any:
    control_id = field_id(index, form_field.key)
    if form_field.type == "choice":
        return dbc.Select(
            id=control_id,
            options=choice_options(form_field),
            value=value if isinstance(value, str) else "",
            size="sm",
            invalid=invalid,
        )
    return dbc.Input(
        id=control_id,
        type="number" if form_field.type == "number" else "text",
        step="any" if form_field.type == "number" else None,
        value=value,
        placeholder=form_field.placeholder or None,
        size="sm",
        invalid=invalid,
    )


def dom_id(component_id: dict[str, Any]) -> str:
    """The ``id`` attribute Dash gives a component with a dict id (its JSON, keys sorted)."""
    return json.dumps(component_id, sort_keys=True, separators=(",", ":"))


def _html_id(index: int, key: str) -> str:
    return dom_id(field_id(index, key))

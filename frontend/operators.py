"""The scenario format's operators as the query form offers them: each kind and its fields.

The kinds and the choices of the enumerated fields come from the scenario format's own
models (``spark_runner.scenario.models``: pure pydantic, no Spark, the models the API
validates a query with), so the form cannot offer a kind or a choice the API does not
know; ``tests/frontend`` checks that every field of every kind's model has a form field.
Nothing here validates a value: the API is the judge.

A field is named by its path inside the operator (``window.size_s``, ``sim.selectivity``),
which is also how the API names it in an error (``operators[1].window.size_s``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from spark_runner.scenario.models import OPERATOR_KINDS as _FORMAT_KINDS
from spark_runner.scenario.models import Window, WindowAggregateOp

FieldType = Literal["text", "number", "list", "choice"]
"""``text``: a string; ``number``: a number (s or a ratio); ``list``: names separated by
commas (``key, value``); ``choice``: one of ``choices`` or empty for the format's default."""

KIND_FIELD = "kind"
OPERATOR_KINDS: tuple[str, ...] = tuple(_FORMAT_KINDS)
DEFAULT_KIND = "filter"
KIND_LABELS: dict[str, str] = {
    "filter": "filter (keep matching tuples)",
    "project": "project (keep columns)",
    "map": "map (compute a column)",
    "window_aggregate": "window aggregate",
    "window_join": "window join",
    "sql": "SQL query (the query's only operator)",
}


@dataclass(frozen=True)
class OperatorField:
    """One form control of an operator row.

    Attributes:
        key: path inside the operator, dots between levels (``window.size_s``).
        label: what the form calls it (units in parentheses).
        kinds: the operator kinds that have this field.
        type: how the control reads and writes the value (see ``FieldType``).
        choices: the values of a ``choice`` field.
        default_label: what an empty ``choice`` means (the format's default).
        placeholder: the hint in an empty ``text``/``number``/``list`` control.
    """

    key: str
    label: str
    kinds: frozenset[str]
    type: FieldType = "text"
    choices: tuple[str, ...] = ()
    default_label: str = ""
    placeholder: str = ""


def _format_choice(
    key: str,
    label: str,
    kinds: frozenset[str],
    model: type[Window] | type[WindowAggregateOp],
    name: str,
) -> OperatorField:
    """A ``choice`` field offering the values of the format's field ``name`` of ``model``
    (a ``Literal``), empty meaning that field's default: the form then offers no choice
    the API does not know, and names the default the API applies."""
    field = model.model_fields[name]
    return OperatorField(
        key,
        label,
        kinds,
        "choice",
        choices=tuple(str(value) for value in get_args(field.annotation)),
        default_label=f"{field.default} (default)",
    )


def _kinds(*kinds: str) -> frozenset[str]:
    return frozenset(kinds)


_EVERY_KIND = frozenset(OPERATOR_KINDS)

OPERATOR_FIELDS: tuple[OperatorField, ...] = (
    OperatorField(
        "predicate", "Predicate", _kinds("filter"), placeholder="key < 50 and value >= 0.2"
    ),
    OperatorField("columns", "Columns", _kinds("project"), "list", placeholder="key, value"),
    OperatorField("expression", "Expression (SQL)", _kinds("map"), placeholder="value (default)"),
    OperatorField("output", "Output column", _kinds("map"), placeholder="value (default)"),
    OperatorField(
        "cpu_cost_per_tuple_s", "CPU cost per tuple (s)", _kinds("map"), "number", placeholder="0"
    ),
    OperatorField(
        "right", "Right input", _kinds("window_join"), placeholder="stream or query:name"
    ),
    _format_choice("window.type", "Window", _kinds("window_aggregate"), Window, "type"),
    OperatorField(
        "window.size_s", "Window size (s)", _kinds("window_aggregate", "window_join"), "number"
    ),
    OperatorField(
        "window.slide_s",
        "Slide (s)",
        _kinds("window_aggregate"),
        "number",
        placeholder="sliding windows",
    ),
    _format_choice(
        "function", "Function", _kinds("window_aggregate"), WindowAggregateOp, "function"
    ),
    OperatorField("column", "Column", _kinds("window_aggregate"), placeholder="value (default)"),
    OperatorField(
        "group_by", "Group by", _kinds("window_aggregate"), "list", placeholder="key (default)"
    ),
    OperatorField("on_column", "Join column", _kinds("window_join"), placeholder="key (default)"),
    OperatorField(
        "statement",
        "SQL statement",
        _kinds("sql"),
        placeholder="SELECT window(event_time, '10 seconds') AS w, key, avg(value) FROM <source> "
        "GROUP BY 1, key",
    ),
    OperatorField(
        "sim.selectivity",
        "Selectivity (simulation)",
        _EVERY_KIND,
        "number",
        placeholder="required for a join",
    ),
    OperatorField(
        "sim.cost_per_tuple_s",
        "Cost per tuple (simulation, s)",
        _EVERY_KIND,
        "number",
        placeholder="engine default",
    ),
    OperatorField("name", "Operator name", _EVERY_KIND, placeholder="optional, unique"),
)
FIELD_KEYS: tuple[str, ...] = tuple(field.key for field in OPERATOR_FIELDS)


def fields_for(kind: str) -> tuple[OperatorField, ...]:
    """The fields an operator of ``kind`` has, in form order (none for an unknown kind)."""
    return tuple(field for field in OPERATOR_FIELDS if kind in field.kinds)


def kind_options(current: str | None = None) -> list[dict[str, str]]:
    """Dropdown options for every kind; a ``current`` kind the format does not know (typed
    into the spec) is offered too, so the form can show it and the API can refuse it."""
    options = [{"label": KIND_LABELS.get(kind, kind), "value": kind} for kind in OPERATOR_KINDS]
    if current is not None and current not in OPERATOR_KINDS:
        label = f"{current} (unknown kind)" if current else "(no kind)"
        options.append({"label": label, "value": current})
    return options


def choice_options(field: OperatorField) -> list[dict[str, str]]:
    """Dropdown options of a ``choice`` field: its default (empty value) first."""
    return [
        {"label": field.default_label or "default", "value": ""},
        *({"label": choice, "value": choice} for choice in field.choices),
    ]

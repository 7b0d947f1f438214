"""A continuous query two ways: the form's fields and rows, and the YAML spec the API takes.

The spec is the body of ``POST /classes/{id}/queries``: ``name``, ``source``, ``shared``
and ``operators`` in the scenario format's vocabulary (docs/scenario-format.md). The form
holds the same query as three fields and one row per operator (``frontend.operators``
names each row's fields). Pure functions, no Dash and no I/O.

Nothing is lost on the way spec → form → spec: what no visible control can hold (a key
the format does not know, another kind's field, a value of the wrong type such as
``size_s: big``) stays in the row's or the query's ``extra`` and goes back into the spec,
so the API sees it and names it in its answer. The form's own values win over ``extra``;
an empty control adds nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from frontend.operators import DEFAULT_KIND, KIND_FIELD, OperatorField, fields_for

FormValue = str | int | float | None
"""What a control holds: text (``text``, ``list``, ``choice``) or a number."""

QUERY_FIELDS: tuple[str, ...] = ("name", "source", "shared", "operators")


class SpecError(ValueError):
    """The spec text cannot become a query the form shows (not YAML, not a mapping, ...).

    The message is a sentence for the user, with the line when YAML gives one."""


@dataclass(frozen=True)
class OperatorRow:
    """One operator in the form: its kind, a value per field of that kind, and ``extra``
    (the operator's keys no field of the kind holds, nested as in the spec)."""

    kind: str
    values: dict[str, FormValue] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryForm:
    """A query as the form holds it; ``extra`` keeps top-level keys the form has no field
    for (or values of the wrong type)."""

    name: str = ""
    source: str = ""
    shared: bool = False
    operators: tuple[OperatorRow, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


def blank_form() -> QueryForm:
    """A new query: no name or source yet, one empty filter."""
    return QueryForm(operators=(OperatorRow(DEFAULT_KIND),))


# --- spec → form ---------------------------------------------------------------------------


def query_form(spec: Any) -> QueryForm:
    """The form of a parsed spec; ``SpecError`` when the form cannot show its shape (not
    a mapping, operators not a list of mappings)."""
    if not isinstance(spec, Mapping):
        raise SpecError(
            "the spec must be a mapping with name, source, shared and operators, "
            f"got {type(spec).__name__}"
        )
    extra = {str(key): copy.deepcopy(value) for key, value in spec.items()}
    name = extra.pop("name", "")
    source = extra.pop("source", "")
    shared = extra.pop("shared", False)
    operators = extra.pop("operators", [])
    if not isinstance(operators, list):
        raise SpecError(f"operators must be a list of operators, got {type(operators).__name__}")
    rows = []
    for index, operator in enumerate(operators):
        if not isinstance(operator, Mapping):
            raise SpecError(
                f"operators[{index}] must be a mapping (kind: ..., ...), "
                f"got {type(operator).__name__}"
            )
        rows.append(operator_row(operator))
    for key, value in (("name", name), ("source", source), ("shared", shared)):
        if not _fits(key, value):
            extra[key] = value
    return QueryForm(
        name=name if isinstance(name, str) else "",
        source=source if isinstance(source, str) else "",
        shared=shared if isinstance(shared, bool) else False,
        operators=tuple(rows),
        extra=extra,
    )


def _fits(key: str, value: Any) -> bool:
    return isinstance(value, bool) if key == "shared" else isinstance(value, str)


def operator_row(operator: Mapping[str, Any]) -> OperatorRow:
    """The row of one operator of the spec (a mapping)."""
    rest: dict[str, Any] = {str(k): copy.deepcopy(v) for k, v in operator.items()}
    kind = rest.pop(KIND_FIELD, "")
    if not isinstance(kind, str):
        rest[KIND_FIELD] = kind
        kind = ""
    values: dict[str, FormValue] = {}
    for form_field in fields_for(kind):
        found, value = _take(rest, form_field.key)
        if not found:
            continue
        shown = to_control(form_field, value)
        if shown is None:
            _put(rest, form_field.key, value)  # the control cannot hold it: keep as is
        else:
            values[form_field.key] = shown
    return OperatorRow(kind, values, rest)


def to_control(form_field: OperatorField, value: Any) -> FormValue:
    """``value`` as ``form_field``'s control holds it, or ``None`` when it cannot."""
    if form_field.type == "number":
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        return value if is_number else None
    if form_field.type == "list":
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return ", ".join(value)
        return None
    if form_field.type == "choice":
        return value if isinstance(value, str) and value in form_field.choices else None
    return value if isinstance(value, str) else None


# --- form → spec ---------------------------------------------------------------------------


def query_spec(form: QueryForm) -> dict[str, Any]:
    """The spec of the form: its values first, then ``extra`` for what they leave out.

    ``name`` and ``source`` are always there (empty when not filled in), so the spec
    shows the user what to write; the API says what an empty one breaks."""
    spec: dict[str, Any] = {}
    if form.name or "name" not in form.extra:
        spec["name"] = form.name
    if form.source or "source" not in form.extra:
        spec["source"] = form.source
    if form.shared or "shared" not in form.extra:
        spec["shared"] = form.shared
    spec["operators"] = [operator_spec(row) for row in form.operators]
    return _merged(spec, form.extra)


def operator_spec(row: OperatorRow) -> dict[str, Any]:
    """The operator of a row: ``kind``, each field of the kind that is filled in, then
    the row's ``extra``. A field of another kind is left out (its control is hidden)."""
    operator: dict[str, Any] = {KIND_FIELD: row.kind} if row.kind else {}
    for form_field in fields_for(row.kind):
        value = from_control(form_field, row.values.get(form_field.key))
        if value is not None:
            _put(operator, form_field.key, value)
    return _merged(operator, row.extra)


def from_control(form_field: OperatorField, value: Any) -> Any:
    """What a control's value means in the spec; ``None`` for an empty control.

    A number field that holds text which is not a number passes the text on, so the
    API can say what is wrong with it."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value if form_field.type == "number" else str(value)
    text = str(value).strip()
    if not text:
        return None
    if form_field.type == "number":
        return _number(text)
    if form_field.type == "list":
        items = [item.strip() for item in text.split(",")]
        return [item for item in items if item] or None
    return text


def _number(text: str) -> int | float | str:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


# --- YAML ----------------------------------------------------------------------------------


class _SpecDumper(yaml.SafeDumper):
    """Block style, except lists of plain values inline: ``columns: [key, value]``."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    inline = all(isinstance(item, str | int | float | bool) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=inline)


_SpecDumper.add_representer(list, _represent_list)


def spec_yaml(spec: Mapping[str, Any]) -> str:
    """The spec as YAML text, keys in the spec's order."""
    return yaml.dump(dict(spec), Dumper=_SpecDumper, sort_keys=False, allow_unicode=True)


def parse_spec(text: str | None) -> Any:
    """The YAML text parsed (any YAML value); ``SpecError`` when it is empty or not YAML."""
    if text is None or not text.strip():
        raise SpecError("the spec is empty: write name, source and operators")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SpecError(f"the spec is not valid YAML{where}: {problem}") from None


def form_yaml(form: QueryForm) -> str:
    return spec_yaml(query_spec(form))


# --- nested keys ---------------------------------------------------------------------------


def _take(data: dict[str, Any], path: str) -> tuple[bool, Any]:
    """Remove ``path`` (dots between levels) from ``data``; drop mappings left empty."""
    head, _, rest = path.partition(".")
    if head not in data:
        return False, None
    if not rest:
        return True, data.pop(head)
    inner = data[head]
    if not isinstance(inner, dict):
        return False, None
    found, value = _take(inner, rest)
    if found and not inner:
        del data[head]
    return found, value


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    head, _, rest = path.partition(".")
    if not rest:
        data[head] = value
        return
    inner = data.get(head)
    if not isinstance(inner, dict):
        inner = {}
        data[head] = inner
    _put(inner, rest, value)


def _merged(primary: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``primary`` with ``extra``'s keys added where ``primary`` has none (recursively)."""
    out = dict(primary)
    for key, value in extra.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
        elif isinstance(out[key], dict) and isinstance(value, Mapping):
            out[key] = _merged(out[key], value)
    return out


def rows_from_controls(
    kinds: Sequence[Any],
    fields: Sequence[tuple[int, str, Any]],
    extras: Sequence[Any],
) -> tuple[OperatorRow, ...]:
    """The rows the form's controls hold: the kind of row ``i`` is ``kinds[i]``, each
    ``(row, field key, value)`` of ``fields`` a control's value, ``extras[i]`` the row's
    kept keys (a mapping, or anything else for none)."""
    values: list[dict[str, FormValue]] = [{} for _ in kinds]
    for row, key, value in fields:
        if 0 <= row < len(values) and (value is None or isinstance(value, str | int | float)):
            values[row][key] = value
    return tuple(
        OperatorRow(
            kind=kind if isinstance(kind, str) else "",
            values=values[i],
            extra=dict(extras[i]) if i < len(extras) and isinstance(extras[i], Mapping) else {},
        )
        for i, kind in enumerate(kinds)
    )

"""Where each message the API returns about a query spec is shown.

The API names the place in the spec of everything it refuses: its 422 ``detail`` items
have ``loc`` ``["body", "operators[1].window.size_s"]`` (the scenario format's rules) or
``["body", "name"]``, ``["body", "operators", "0"]`` (the request schema). Every message
goes under the spec text, which is what was submitted; a message about ``name`` or
``source`` also goes next to that field, and one about an operator next to the control of
its row that shows the field (``window`` → the window control the message names), or next
to the row's kind when no visible control shows it (an unknown key, a whole operator).
Pure functions of the ``detail`` and the rows' kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frontend.operators import KIND_FIELD, fields_for

TOP_FIELDS: tuple[str, ...] = ("name", "source", "operators")
"""Top-level spec fields the form shows a message next to (``operators``: under the rows)."""

_OPERATOR_PATH = re.compile(r"^operators\[(\d+)\](?:\.(.+))?$")
_INDEX = re.compile(r"^\d+$")


@dataclass(frozen=True)
class QueryFeedback:
    """Messages placed for the form.

    Attributes:
        spec: every message, each naming its path, shown under the spec text.
        top: ``name``/``source``/``operators`` → message (joined with "; ").
        operators: ``(row index, field key or "kind")`` → message.
    """

    spec: tuple[str, ...] = ()
    top: dict[str, str] = field(default_factory=dict)
    operators: dict[tuple[int, str], str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.spec


def spec_path(loc: Any) -> str:
    """A 422 item's ``loc`` as a path in the spec: ``["body", "operators", "0", "kind"]``
    → ``operators[0].kind``; ``["body", "operators[1].on_column"]`` stays as it is."""
    if not isinstance(loc, Sequence) or isinstance(loc, str):
        return ""
    parts = [str(part) for part in loc]
    if parts[:1] == ["body"]:
        parts = parts[1:]
    path = ""
    for part in parts:
        if _INDEX.match(part):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else part
    return path


def error_items(detail: Any) -> list[tuple[str, str]]:
    """``(path, message)`` per item of a 422 ``detail``; a message that does not name its
    path gets it in front (``operators[0]: ...``). A plain-text detail is one item with
    no path."""
    if isinstance(detail, str):
        return [("", detail)]
    if not isinstance(detail, list):
        return [] if detail is None else [("", str(detail))]
    items: list[tuple[str, str]] = []
    for item in detail:
        if not isinstance(item, Mapping):
            continue
        path = spec_path(item.get("loc"))
        message = str(item.get("msg", "invalid value"))
        if path and not message.startswith(path.split("[")[0]):
            message = f"{path}: {message}"
        items.append((path, message))
    return items


def place(items: Sequence[tuple[str, str]], kinds: Sequence[str]) -> QueryFeedback:
    """Place ``(path, message)`` items; ``kinds[i]`` is the kind of row ``i`` of the form
    (it decides which controls the row shows)."""
    spec: list[str] = []
    top: dict[str, list[str]] = {}
    operators: dict[tuple[int, str], list[str]] = {}
    for path, message in items:
        spec.append(message)
        if path in TOP_FIELDS:
            top.setdefault(path, []).append(message)
            continue
        target = operator_target(path, message, kinds)
        if target is not None:
            operators.setdefault(target, []).append(message)
    return QueryFeedback(
        spec=tuple(spec),
        top={key: "; ".join(messages) for key, messages in top.items()},
        operators={key: "; ".join(messages) for key, messages in operators.items()},
    )


def operator_target(path: str, message: str, kinds: Sequence[str]) -> tuple[int, str] | None:
    """``(row, control)`` of an operator path, or ``None`` when it is not about a row the
    form has."""
    match = _OPERATOR_PATH.match(path)
    if match is None:
        return None
    row = int(match.group(1))
    if row >= len(kinds):
        return None
    rest = match.group(2) or ""
    shown = [f.key for f in fields_for(kinds[row])]
    if rest in shown or rest == KIND_FIELD:
        return row, rest
    inside = [key for key in shown if key.startswith(rest + ".")] if rest else []
    if inside:
        return row, _named_first(inside, message)
    for key in shown:  # deeper than a control: columns[0] → columns
        if rest.startswith((key + ".", key + "[")):
            return row, key
    return row, KIND_FIELD


def _named_first(keys: Sequence[str], message: str) -> str:
    """The key whose last part the message names first (``slide_s (9) must be <= size_s``
    → ``window.slide_s``); the first key when it names none."""
    named = [(message.find(key.rsplit(".", 1)[-1]), key) for key in keys]
    found = [(at, key) for at, key in named if at >= 0]
    return min(found)[1] if found else keys[0]

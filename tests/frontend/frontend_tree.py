"""Helpers to look inside Dash component trees returned by the action functions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dash.development.base_component import Component


def walk(node: Any) -> Iterator[Component]:
    """Every component in ``node`` (a component, a list of them, or text), depth first."""
    if isinstance(node, Component):
        yield node
        yield from walk(getattr(node, "children", None))
    elif isinstance(node, list | tuple):
        for child in node:
            yield from walk(child)


def text(node: Any) -> str:
    """All text in ``node``, space-joined."""
    if isinstance(node, str | int | float):
        return str(node)
    if isinstance(node, Component):
        return text(getattr(node, "children", None))
    if isinstance(node, list | tuple):
        return " ".join(t for t in (text(child) for child in node) if t)
    return ""


def ids(node: Any) -> list[Any]:
    return [i for c in walk(node) if (i := getattr(c, "id", None)) is not None]


def find(node: Any, component_id: Any) -> Component:
    for component in walk(node):
        if getattr(component, "id", None) == component_id:
            return component
    raise LookupError(f"no component with id {component_id!r}")


def prop(component: Component | None, name: str) -> Any:
    """The Dash property ``name`` of ``component``, which must be there. Dash sets the
    properties as attributes at run time, so its types do not declare them."""
    assert component is not None
    return getattr(component, name)


def of_type(node: Any, type_name: str) -> list[Component]:
    return [c for c in walk(node) if type(c).__name__ == type_name]

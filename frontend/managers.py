"""Load managers and DILoS policies as the forms offer them, and manager parameters as text.

The managers, their parameters, defaults and rules are the API's answer to
``GET /managers`` (:func:`read_catalogue`, through ``ApiClient.list_managers``): every
function here that needs them takes that answer as ``managers``, which a page reads once
when it is shown and keeps in a ``dcc.Store``. The API stays the judge: nothing here
validates a value, it only turns the answer into form fields and form text into a
mapping and back.

Parameters are written ``name=value`` separated by commas or new lines, e.g.
``headroom=0.7, max_shed=0.9``; ``true``/``false`` are booleans, numbers are numbers,
anything else is a string (an enumerated option such as ``response_statistic=max``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from frontend.api import ApiClient, ApiError, Manager, ManagerParam, ParamValue, error_text
from spark_runner.core.redistribution import POLICIES as _CORE_POLICIES

POLICIES: tuple[str, ...] = tuple(_CORE_POLICIES)
_SEPARATORS = re.compile(r"[,\n;]+")


@dataclass(frozen=True)
class Catalogue:
    """The API's load managers, or why they could not be read (``managers`` empty)."""

    managers: list[Manager] = field(default_factory=list)
    error: str | None = None


def read_catalogue(api: ApiClient) -> Catalogue:
    """``GET /managers``: the managers a class may use, in the API's order."""
    try:
        return Catalogue(api.list_managers())
    except ApiError as err:
        return Catalogue(error=f"The load managers could not be read: {error_text(err)}")


class ParamField(TypedDict):
    """One form field for a manager parameter (what a page renders as an input)."""

    name: str
    label: str
    input: Literal["number", "switch", "select", "text"]
    value: ParamValue  # the default
    min: float | None  # the API's inclusive or exclusive lower bound (the API judges)
    max: float | None
    step: float | Literal["any"]
    options: list[dict[str, str]] | None  # for "select"
    unit: str | None
    help: str  # the description, then the rules


def find_manager(kind: str | None, managers: Sequence[Manager]) -> Manager | None:
    """The manager of ``kind`` in ``managers``."""
    return next((m for m in managers if m["kind"] == kind), None)


def default_manager(managers: Sequence[Manager]) -> str | None:
    """The kind a new class gets when it names none (None: no catalogue)."""
    return next((m["kind"] for m in managers if m["default"]), None)


def manager_options(managers: Sequence[Manager]) -> list[dict[str, str]]:
    """Dropdown options for every manager kind, in the API's order."""
    return [{"label": m["label"] or m["kind"], "value": m["kind"]} for m in managers]


def default_params(kind: str, managers: Sequence[Manager]) -> dict[str, ParamValue]:
    """The parameters ``kind`` uses when none are given (``{}`` for an unknown kind)."""
    manager = find_manager(kind, managers)
    return {p["name"]: p["default"] for p in manager["parameters"]} if manager else {}


def effective_params(
    kind: str, params: Mapping[str, ParamValue], managers: Sequence[Manager]
) -> dict[str, ParamValue]:
    """The defaults of ``kind`` with ``params`` on top (what the manager runs with)."""
    return {**default_params(kind, managers), **params}


def params_hint(kind: str, managers: Sequence[Manager]) -> str:
    """A line naming the parameters of ``kind`` and their defaults."""
    defaults = default_params(kind, managers)
    if not defaults:
        return f"{kind} has no parameters."
    return f"{kind} parameters (defaults): {format_params(defaults)}"


def param_fields(manager: Manager) -> list[ParamField]:
    """The API's description of one manager → one form field per parameter, in order.

    Numbers get their bounds (an exclusive bound is given as the input's ``min``/``max``;
    the API refuses the bound itself and says so), integers a step of 1; a text
    parameter with choices becomes a select, a boolean a switch. The help text is the
    core's description followed by every rule.
    """
    return [_field(param) for param in manager["parameters"]]


def _field(param: ManagerParam) -> ParamField:
    numeric = param["type"] in ("float", "int")
    choices = param["choices"]
    kind: Literal["number", "switch", "select", "text"] = "text"
    if numeric:
        kind = "number"
    elif param["type"] == "bool":
        kind = "switch"
    elif choices:
        kind = "select"
    rules = "; ".join(param["rules"])
    help_parts = [param["description"].strip(), f"Rules: {rules}." if rules else ""]
    return ParamField(
        name=param["name"],
        label=param["name"].replace("_", " "),
        input=kind,
        value=param["default"],
        min=_first(param["minimum"], param["exclusive_minimum"]) if numeric else None,
        max=_first(param["maximum"], param["exclusive_maximum"]) if numeric else None,
        step=1 if param["type"] == "int" else "any",
        options=[{"label": c, "value": c} for c in choices or []] if kind == "select" else None,
        unit=param["unit"],
        help=" ".join(part for part in help_parts if part),
    )


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def format_params(params: Mapping[str, ParamValue]) -> str:
    """``{"headroom": 0.7, "max_shed": 0.9}`` → ``headroom=0.7, max_shed=0.9``."""
    return ", ".join(f"{name}={_format_value(value)}" for name, value in params.items())


def parse_params(text: object) -> tuple[dict[str, ParamValue], str | None]:
    """Form text → ``(parameters, error)``; ``error`` names the piece that is not
    ``name=value``. Empty text gives ``{}`` (the manager's defaults)."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}, None
    if not isinstance(text, str):
        return {}, "Write the parameters as name=value pairs, e.g. headroom=0.7, max_shed=0.9."
    params: dict[str, ParamValue] = {}
    for raw_piece in _SEPARATORS.split(text):
        piece = raw_piece.strip()
        if not piece:
            continue
        name, equals, raw = piece.partition("=")
        name, raw = name.strip(), raw.strip()
        if not equals or not name or not raw:
            return {}, (
                f"{piece!r} is not name=value: write the parameters as name=value pairs, "
                "e.g. headroom=0.7, max_shed=0.9."
            )
        params[name] = parse_value(raw)
    return params, None


def parse_value(raw: str) -> ParamValue:
    """``"true"`` → True, ``"3"`` → 3, ``"0.7"`` → 0.7, anything else stays text."""
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        number = float(raw)
    except ValueError:
        return raw
    return number if math.isfinite(number) else raw


def delay_band(
    delay_target_s: float,
    kind: str | None,
    params: Mapping[str, ParamValue],
    managers: Sequence[Manager],
) -> tuple[float, float, float]:
    """``(low, target, high)`` seconds: the band around the delay target D within which
    the manager counts the response time as on target. ALoMa's response-time monitor
    calls it significantly below under ``(1 − below_margin) D`` and critically above over
    ``(1 + above_margin) D``; a manager without those margins has a band of width 0."""
    values = effective_params(kind or "", params, managers)
    above = _fraction(values.get("above_margin"))
    below = _fraction(values.get("below_margin"))
    return (delay_target_s * (1.0 - below), delay_target_s, delay_target_s * (1.0 + above))


def _fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return min(max(float(value), 0.0), 1.0)


def _format_value(value: ParamValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)

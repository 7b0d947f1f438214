"""Load managers and DILoS policies as the forms offer them, and manager parameters as text.

The kinds, the policies and each kind's default parameters come from the pure QoS core
(``spark_runner.core``: no Spark, no I/O), the same code the API validates with, so the
forms cannot offer a choice the API would not know. The API stays the judge: nothing
here validates a value, it only turns form text into a mapping and back.

Parameters are written ``name=value`` separated by commas or new lines, e.g.
``headroom=0.7, max_shed=0.9``; ``true``/``false`` are booleans, numbers are numbers,
anything else is a string (an enumerated option such as ``response_statistic=max``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from frontend.api import ParamValue
from spark_runner.core.managers.registry import MANAGER_KINDS as _CORE_KINDS
from spark_runner.core.managers.registry import MANAGER_TYPES
from spark_runner.core.params import params_as_dict
from spark_runner.core.redistribution import POLICIES as _CORE_POLICIES

MANAGER_KINDS: tuple[str, ...] = tuple(_CORE_KINDS)
POLICIES: tuple[str, ...] = tuple(_CORE_POLICIES)
DEFAULT_MANAGER = "aloma"
DEFAULT_POLICY = "relative"
MANAGER_LABELS: dict[str, str] = {
    "aloma": "ALoMa (adaptive, default)",
    "seamless": "SEaMLeSS",
    "ctrl": "CTRL (feedback control)",
    "aurora": "Aurora",
    "none": "none (never sheds)",
    "linear": "linear (threshold based)",
}
# The delay target belongs to the class, not to its manager's parameters.
CLASS_LEVEL_PARAMS = frozenset({"delay_target_s"})
_SEPARATORS = re.compile(r"[,\n;]+")


def manager_options() -> list[dict[str, str]]:
    """Dropdown options for every manager kind."""
    return [{"label": MANAGER_LABELS.get(kind, kind), "value": kind} for kind in MANAGER_KINDS]


def default_params(kind: str) -> dict[str, ParamValue]:
    """The parameters ``kind`` uses when none are given (``{}`` for an unknown kind)."""
    manager = MANAGER_TYPES.get(kind)
    if manager is None:
        return {}
    values = params_as_dict(manager.params_type())
    return {
        name: value
        for name, value in values.items()
        if name not in CLASS_LEVEL_PARAMS and isinstance(value, float | int | str | bool)
    }


def effective_params(kind: str, params: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """The defaults of ``kind`` with ``params`` on top (what the manager runs with)."""
    return {**default_params(kind), **params}


def params_hint(kind: str) -> str:
    """A line naming the parameters of ``kind`` and their defaults."""
    defaults = default_params(kind)
    if not defaults:
        return f"{kind} has no parameters."
    return f"{kind} parameters (defaults): {format_params(defaults)}"


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
    delay_target_s: float, kind: str | None, params: Mapping[str, ParamValue]
) -> tuple[float, float, float]:
    """``(low, target, high)`` seconds: the band around the delay target D within which
    the manager counts the response time as on target. ALoMa's response-time monitor
    calls it significantly below under ``(1 − below_margin) D`` and critically above over
    ``(1 + above_margin) D``; a manager without those margins has a band of width 0."""
    values = effective_params(kind or "", params)
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

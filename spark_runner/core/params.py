"""Typed, validated parameter sets: built from a plain mapping, replaced atomically on live update.

Every tunable of the core lives in a frozen dataclass whose ``__post_init__`` validates it
and raises :class:`ParameterError` naming the field, the value and the rule. This module
turns user input (a JSON-ish ``Mapping[str, ParamValue]``) into such a dataclass and back,
checking names and types first, so a typo or a string where a number belongs is reported
the same way as an out-of-range value. A live update builds a whole new instance (so it is
validated as a whole) and only then replaces the old one: a rejected update changes nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TypeVar

from spark_runner.core.errors import ParameterError

ParamValue = float | int | str | bool
"""What a parameter mapping may hold: numbers, strings for enumerated options, booleans."""

T = TypeVar("T")

_SCALARS: Mapping[str, type] = MappingProxyType(
    {"float": float, "int": int, "bool": bool, "str": str}
)


def _field_type(field: dataclasses.Field[object]) -> type | None:
    """The scalar type of a field; annotations are strings under ``from __future__``."""
    declared = field.type
    if isinstance(declared, str):
        return _SCALARS.get(declared)
    return declared if declared in _SCALARS.values() else None


def param_names(cls: type) -> tuple[str, ...]:
    """Names of the init fields of the parameter dataclass ``cls``."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def _coerce(cls_name: str, name: str, hint: type | None, value: object) -> object:
    """Convert ``value`` to the field's declared type or raise ``ParameterError``."""
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParameterError(name, value, f"must be a number ({cls_name})")
        return float(value)
    if hint is int:
        if isinstance(value, bool):
            raise ParameterError(name, value, f"must be a whole number ({cls_name})")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        raise ParameterError(name, value, f"must be a whole number ({cls_name})")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        raise ParameterError(name, value, f"must be true or false ({cls_name})")
    if hint is str:
        if not isinstance(value, str):
            raise ParameterError(name, value, f"must be a string ({cls_name})")
        return value
    return value


def build_params(cls: type[T], values: Mapping[str, object], *, base: T | None = None) -> T:
    """Return a new ``cls`` from ``values``, starting from ``base`` (or the defaults).

    Unknown names, wrong types and values that break a rule all raise ``ParameterError``;
    nothing is partly applied.
    """
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a parameter dataclass")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    known = tuple(fields)
    changes: dict[str, object] = {}
    for name, value in values.items():
        if name not in known:
            raise ParameterError(
                name, value, f"unknown parameter for {cls.__name__}; known: {', '.join(known)}"
            )
        changes[name] = _coerce(cls.__name__, name, _field_type(fields[name]), value)
    if base is None:
        return cls(**changes)
    return dataclasses.replace(base, **changes)  # type: ignore[type-var]


def params_as_dict(params: object) -> dict[str, object]:
    """The init fields of a parameter dataclass as a plain dict (for display and storage)."""
    return {name: getattr(params, name) for name in param_names(type(params))}


# --- rules ------------------------------------------------------------------------------
# Each helper raises ParameterError(field, value, rule) with a sentence a user can act on.


def require_finite(field: str, value: float) -> None:
    if not math.isfinite(value):
        raise ParameterError(field, value, "must be a finite number")


def require_positive(field: str, value: float, unit: str = "") -> None:
    require_finite(field, value)
    if not value > 0:
        raise ParameterError(field, value, f"must be > 0{unit}")


def require_non_negative(field: str, value: float, unit: str = "") -> None:
    require_finite(field, value)
    if not value >= 0:
        raise ParameterError(field, value, f"must be >= 0{unit}")


def require_in_closed(field: str, value: float, low: float, high: float) -> None:
    require_finite(field, value)
    if not low <= value <= high:
        raise ParameterError(field, value, f"must be within [{low}, {high}]")


def require_in_half_open(field: str, value: float, low: float, high: float) -> None:
    """``low <= value < high``."""
    require_finite(field, value)
    if not low <= value < high:
        raise ParameterError(field, value, f"must be within [{low}, {high})")


def require_greater(field: str, value: float, bound: float) -> None:
    require_finite(field, value)
    if not value > bound:
        raise ParameterError(field, value, f"must be > {bound}")


def require_at_least(field: str, value: int, bound: int) -> None:
    if not value >= bound:
        raise ParameterError(field, value, f"must be an integer >= {bound}")


def require_choice(field: str, value: str, choices: Iterable[str]) -> None:
    options = tuple(choices)
    if value not in options:
        raise ParameterError(field, value, f"must be one of {', '.join(options)}")

"""What each load manager offers, as plain data: its parameters, defaults and rules.

Built from the registry and the parameter dataclasses themselves (field types and
defaults, the declared ``RULES``, the ``Attributes:`` docstrings), so the API's manager
list and the forms built from it cannot disagree with the validation the core runs.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Collection
from dataclasses import dataclass

from spark_runner.core.managers.registry import MANAGER_TYPES
from spark_runner.core.params import (
    ParamValue,
    param_descriptions,
    param_names,
    param_rules,
    rule_bounds,
)

CLASS_LEVEL_PARAMS = frozenset({"delay_target_s"})
"""Set by the class, not by its manager's parameters (the class's value always wins)."""

_TYPE_NAMES = {"float": "float", "int": "int", "bool": "bool", "str": "str"}


@dataclass(frozen=True)
class ParamInfo:
    """One parameter of a manager. Bounds are ``None`` where the rules set none."""

    name: str
    type: str  # "float", "int", "bool" or "str"
    default: ParamValue
    description: str
    unit: str | None
    rules: tuple[str, ...]  # each as the error message states it, e.g. "must be > 0 s/s"
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: float | None = None
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ManagerInfo:
    kind: str
    label: str
    summary: str
    parameters: tuple[ParamInfo, ...]


def describe_managers() -> tuple[ManagerInfo, ...]:
    """Every registered manager in registry order, with its manager-level parameters."""
    return tuple(describe_manager(kind) for kind in MANAGER_TYPES)


def describe_manager(kind: str) -> ManagerInfo:
    """``kind``'s description (``KeyError`` for an unknown kind)."""
    cls = MANAGER_TYPES[kind]
    return ManagerInfo(
        kind=kind,
        label=cls.label or kind,
        summary=_first_sentence(sys.modules[cls.__module__].__doc__ or cls.__doc__ or ""),
        parameters=describe_params(cls.params_type, skip=CLASS_LEVEL_PARAMS),
    )


def describe_params(
    params_type: type, skip: Collection[str] = frozenset()
) -> tuple[ParamInfo, ...]:
    """Every parameter of the dataclass ``params_type`` but ``skip``: type, default,
    the docstring's sentence, unit, rules and the bounds they allow."""
    defaults = params_type()
    rules = param_rules(params_type)
    descriptions = param_descriptions(params_type)
    fields = {f.name: f for f in dataclasses.fields(params_type)}
    parameters = []
    for name in param_names(params_type):
        if name in skip:
            continue
        field_rules = rules.get(name, ())
        bounds = rule_bounds(field_rules)
        choices = next((r.choices for r in field_rules if r.kind == "choice"), None)
        unit = next((r.unit.strip() for r in field_rules if r.unit.strip()), None)
        parameters.append(
            ParamInfo(
                name=name,
                type=_type_name(fields[name]),
                default=getattr(defaults, name),
                description=descriptions.get(name, ""),
                unit=unit,
                rules=tuple(r.text for r in field_rules),
                minimum=bounds.minimum,
                exclusive_minimum=bounds.exclusive_minimum,
                maximum=bounds.maximum,
                exclusive_maximum=bounds.exclusive_maximum,
                choices=choices,
            )
        )
    return tuple(parameters)


def _type_name(field: dataclasses.Field[object]) -> str:
    declared = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
    return _TYPE_NAMES.get(declared, "str")


def _first_sentence(doc: str) -> str:
    """The docstring's first paragraph on one line."""
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())

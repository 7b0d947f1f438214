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
import inspect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Literal, TypeVar, cast

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


# --- declared rules ---------------------------------------------------------------------
# A parameter dataclass may declare its per-field rules as data (``RULES``, a ClassVar
# mapping field name → rules); ``check_rules`` applies them through the helpers above, so
# the same declaration validates values and describes them (the API's manager catalogue,
# the dashboard's forms). Rules across fields (threshold ordering) stay in code and are
# declared as notes.

RuleKind = Literal[
    "positive", "non_negative", "greater", "at_least", "closed", "half_open", "choice", "note"
]


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule a parameter must satisfy; ``text`` is the sentence a broken rule reports."""

    kind: RuleKind
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    note: str = ""

    @classmethod
    def positive(cls, unit: str = "") -> Rule:
        return cls("positive", low=0.0, unit=unit)

    @classmethod
    def non_negative(cls, unit: str = "") -> Rule:
        return cls("non_negative", low=0.0, unit=unit)

    @classmethod
    def greater(cls, bound: float) -> Rule:
        return cls("greater", low=bound)

    @classmethod
    def at_least(cls, bound: int) -> Rule:
        return cls("at_least", low=bound)

    @classmethod
    def closed(cls, low: float, high: float) -> Rule:
        """``low <= value <= high``."""
        return cls("closed", low=low, high=high)

    @classmethod
    def half_open(cls, low: float, high: float) -> Rule:
        """``low <= value < high``."""
        return cls("half_open", low=low, high=high)

    @classmethod
    def one_of(cls, choices: Iterable[str]) -> Rule:
        return cls("choice", choices=tuple(choices))

    @classmethod
    def checked_elsewhere(cls, note: str) -> Rule:
        """A rule across fields, checked by the dataclass's own code; described only."""
        return cls("note", note=note)

    def check(self, field: str, value: object) -> None:
        """Raise ``ParameterError`` when ``value`` breaks this rule."""
        number = cast(float, value)  # the dataclass field's declared type
        if self.kind == "positive":
            require_positive(field, number, self.unit)
        elif self.kind == "non_negative":
            require_non_negative(field, number, self.unit)
        elif self.kind == "greater":
            require_greater(field, number, self._low)
        elif self.kind == "at_least":
            require_at_least(field, cast(int, value), int(self._low))
        elif self.kind == "closed":
            require_in_closed(field, number, self._low, self._high)
        elif self.kind == "half_open":
            require_in_half_open(field, number, self._low, self._high)
        elif self.kind == "choice":
            require_choice(field, cast(str, value), self.choices)

    @property
    def text(self) -> str:
        """The rule as the error message states it (without the field and value)."""
        texts = {
            "positive": f"must be > 0{self.unit}",
            "non_negative": f"must be >= 0{self.unit}",
            "greater": f"must be > {self.low}",
            "at_least": f"must be an integer >= {self.low}",
            "closed": f"must be within [{self.low}, {self.high}]",
            "half_open": f"must be within [{self.low}, {self.high})",
            "choice": f"must be one of {', '.join(self.choices)}",
            "note": self.note,
        }
        return texts[self.kind]

    @property
    def _low(self) -> float:
        return self.low if self.low is not None else -math.inf

    @property
    def _high(self) -> float:
        return self.high if self.high is not None else math.inf


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The numeric range a field's rules allow (``None``: unbounded on that side)."""

    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: float | None = None


def rule_bounds(rules: Iterable[Rule]) -> Bounds:
    """The tightest range the numeric ``rules`` allow together."""
    lows: list[tuple[float, bool]] = []  # (bound, inclusive)
    highs: list[tuple[float, bool]] = []
    for rule in rules:
        if rule.low is not None and rule.kind != "note":
            lows.append((rule.low, rule.kind not in ("positive", "greater")))
        if rule.high is not None:
            highs.append((rule.high, rule.kind == "closed"))
    # Tightest: the largest low (exclusive wins a tie), the smallest high (exclusive wins).
    low = max(lows, key=lambda b: (b[0], not b[1]), default=None)
    high = min(highs, key=lambda b: (b[0], b[1]), default=None)
    return Bounds(
        minimum=low[0] if low and low[1] else None,
        exclusive_minimum=low[0] if low and not low[1] else None,
        maximum=high[0] if high and high[1] else None,
        exclusive_maximum=high[0] if high and not high[1] else None,
    )


def param_rules(cls: type) -> dict[str, tuple[Rule, ...]]:
    """Every field's declared rules, from the base classes' ``RULES`` down to ``cls``'s."""
    rules: dict[str, tuple[Rule, ...]] = {}
    for klass in reversed(cls.__mro__):
        for name, declared in vars(klass).get("RULES", {}).items():
            rules[name] = (*rules.get(name, ()), *declared)
    return rules


def check_rules(params: object) -> None:
    """Apply the declared rules of a parameter dataclass, field by field in field order."""
    rules = param_rules(type(params))
    for name in param_names(type(params)):
        for rule in rules.get(name, ()):
            rule.check(name, getattr(params, name))


_ENTRY = re.compile(r"^(?P<names>[A-Za-z_][\w ,.]*?):\s+(?P<text>.*)$")


def param_descriptions(cls: type) -> dict[str, str]:
    """Each field's sentence from the ``Attributes:`` sections of ``cls`` and its bases.

    An entry is ``name: text`` (continued on more deeply indented lines); ``a, b: text``
    describes both, ``tau0..tau3: text`` every field from ``tau0`` to ``tau3``.
    """
    names = param_names(cls)
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = vars(klass).get("__doc__")
        if isinstance(doc, str):
            found.update(_attribute_entries(doc, names))
    return {name: found[name] for name in names if name in found}


def _attribute_entries(doc: str, names: Sequence[str]) -> dict[str, str]:
    lines = inspect.cleandoc(doc).splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes:")
    except StopIteration:
        return {}
    entries: list[tuple[str, list[str]]] = []
    indent: int | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            if entries:
                break
            continue
        depth = len(line) - len(line.lstrip())
        if indent is None:
            indent = depth
        match = _ENTRY.match(line.strip()) if depth == indent else None
        if match:
            entries.append((match["names"], [match["text"]]))
        elif entries and indent is not None and depth > indent:
            entries[-1][1].append(line.strip())
        else:
            break
    out: dict[str, str] = {}
    for raw_names, text in entries:
        for name in _expand(raw_names, names):
            out[name] = " ".join(text)
    return out


def _expand(raw: str, names: Sequence[str]) -> list[str]:
    if ".." in raw:
        first, _, last = raw.partition("..")
        first, last = first.strip(), last.strip()
        if first in names and last in names:
            return list(names[names.index(first) : names.index(last) + 1])
        return []
    return [part.strip() for part in raw.split(",") if part.strip() in names]

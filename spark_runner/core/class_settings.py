"""A query class's settings, declared once.

Each :class:`ClassSetting` says a setting's name, type, default, bounds, unit, label and
meaning, and whether a running job takes a change to it. The core's class spec
(:class:`~spark_runner.core.dilos.ClassSpec`), the live configuration
(``spark_runner.contract.control.ClassControl``), the scenario format, the API's class
schemas, the database's column defaults and the dashboard's class forms derive what
they say about a setting from :data:`CLASS_SETTINGS`. Adding a setting is a line here, a
migration, the code that uses it and a test.

Bounds are checked by :meth:`ClassSetting.check` (the core's rule, with a message naming
the setting, the value and the rule); the ordering of τ0..τ3 is a rule between settings
(:func:`spark_runner.core.thresholds.validate_thresholds`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from spark_runner.core.errors import ParameterError

MIN_DELAY_TARGET_S = 0.001
"""Smallest delay target, s (one millisecond)."""
MAX_DELAY_TARGET_S = 86_400.0
"""Largest delay target, s (one day)."""
MAX_PRIORITY = 1e6
"""Largest class priority."""

SettingValue = float | bool | str | Mapping[str, Any]


@dataclass(frozen=True)
class ClassSetting:
    """One setting of a query class (see the module docstring).

    ``default`` None: the setting is required. ``minimum``/``maximum`` bound a number,
    exclusive where ``above``/``below`` say so.
    """

    name: str
    type: type
    label: str
    description: str
    default: SettingValue | None = None
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False
    """The minimum is exclusive (value > minimum)."""
    below: bool = False
    """The maximum is exclusive (value < maximum)."""
    max_length: int | None = None
    """Most characters of a string, or entries of a mapping."""
    unit: str = ""
    live: bool = True
    """A running job takes a change to it at its next control period."""

    @property
    def required(self) -> bool:
        return self.default is None

    @property
    def rule(self) -> str:
        """The bounds as a reader states them ("" for a setting without bounds)."""
        low, high = self.minimum, self.maximum
        if low is None and high is None:
            return ""
        if high is None:
            return f"must be {'>' if self.above else '>='} {low:g}"
        if low is None:
            return f"must be {'<' if self.below else '<='} {high:g}"
        return (
            f"must be within {'(' if self.above else '['}{low:g}, {high:g}"
            f"{')' if self.below else ']'}"
        )

    def check(self, value: Any) -> None:
        """Raise ``ParameterError`` when ``value`` is not of the setting's type or breaks
        its bounds."""
        if self.type is bool:
            if not isinstance(value, bool):
                raise ParameterError(self.name, value, "must be true or false")
            return
        if self.type is not float:
            if self.max_length is not None and len(value) > self.max_length:
                raise ParameterError(
                    self.name,
                    value,
                    f"must have at most {self.max_length} "
                    + ("characters" if self.type is str else "entries"),
                )
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParameterError(self.name, value, "must be a number")
        if not math.isfinite(value) or not self._within(float(value)):
            raise ParameterError(self.name, value, self.rule or "must be finite")

    def _within(self, value: float) -> bool:
        low, high = self.minimum, self.maximum
        if low is not None and (value <= low if self.above else value < low):
            return False
        return not (high is not None and (value >= high if self.below else value > high))


def _tau(name: str, default: float, label: str, meaning: str) -> ClassSetting:
    return ClassSetting(
        name, float, label, meaning, default=default, minimum=0.0, maximum=1.0, above=True
    )


CLASS_SETTINGS: tuple[ClassSetting, ...] = (
    ClassSetting(
        "priority",
        float,
        "Priority",
        "Larger means more important.",
        minimum=0.0,
        maximum=MAX_PRIORITY,
        above=True,
    ),
    ClassSetting(
        "delay_target_s",
        float,
        "Delay target",
        "Worst-case response time the class tolerates.",
        minimum=MIN_DELAY_TARGET_S,
        maximum=MAX_DELAY_TARGET_S,
        unit="s",
    ),
    _tau(
        "tau0",
        0.2,
        "τ0",
        "An elastic job (scenario control.elastic) releases executors once its usage has "
        "stayed at or below the lowest tau0 of its classes for its hold time.",
    ),
    _tau(
        "tau1",
        0.4,
        "τ1",
        "An elastic job resizes its pool, in one step, to bring its usage to the lowest "
        "tau1 of its classes.",
    ),
    _tau(
        "tau2",
        0.8,
        "τ2",
        "The linear manager sheds above this usage; while an elastic job adds executors it "
        "sheds only the load above the lowest tau2 of its classes.",
    ),
    _tau(
        "tau3",
        0.95,
        "τ3",
        "An elastic job adds executors once its usage has stayed at or above the lowest "
        "tau3 of its classes for its hold time.",
    ),
    ClassSetting(
        "manager",
        str,
        "Load manager",
        "The class's load manager: one of the kinds the manager catalogue lists.",
        default="aloma",
        max_length=20,
    ),
    ClassSetting(
        "manager_params",
        dict,
        "Manager parameters",
        "The manager's parameters; spec defaults for the rest.",
        default=MappingProxyType({}),
        max_length=50,
    ),
    ClassSetting(
        "reserve_fraction",
        float,
        "Reserve fraction",
        "Share of its original quota a lending class keeps spare.",
        default=0.05,
        minimum=0.0,
        maximum=1.0,
        below=True,
    ),
    ClassSetting(
        "max_lend_fraction",
        float,
        "Max lend fraction",
        "Largest share of its original quota the class may lend.",
        default=1.0,
        minimum=0.0,
        maximum=1.0,
    ),
    ClassSetting(
        "catch_up",
        bool,
        "Catch up at start",
        "At start, serve the backlog already in the log (Redis, files) instead of shedding "
        "first what is already past the target (a class whose every tuple matters more "
        "than its latency, e.g. billing).",
        default=False,
    ),
    ClassSetting(
        "max_shed_fraction",
        float,
        "Max shed fraction",
        "Largest share of its arrivals the class sheds in a control period, whatever its "
        "manager decides (1: no cap). Below 1 it also keeps the tuples already past its "
        "target and answers them late: for a class that would rather answer late than "
        "lose more (audit, billing), at the cost of its latency and the classes below's "
        "capacity.",
        default=1.0,
        minimum=0.0,
        maximum=1.0,
    ),
)
SETTINGS: Mapping[str, ClassSetting] = MappingProxyType({s.name: s for s in CLASS_SETTINGS})
SETTING_NAMES: tuple[str, ...] = tuple(s.name for s in CLASS_SETTINGS)
MANAGER_SETTINGS = ("manager", "manager_params")
"""The settings that choose and parameterise the class's load manager."""


def default_of(name: str) -> Any:
    """The default of setting ``name`` (a fresh dict for ``manager_params``)."""
    value = SETTINGS[name].default
    return dict(value) if isinstance(value, Mapping) else value

"""The one error type the core raises for a bad parameter."""

from __future__ import annotations

from typing import Any


class ParameterError(ValueError):
    """A parameter broke a rule. Carries the field, the offending value and the rule."""

    def __init__(self, field: str, value: Any, rule: str) -> None:
        self.field = field
        self.value = value
        self.rule = rule
        super().__init__(f"{field}={value!r} is invalid: {rule}")

    def __reduce__(self) -> tuple[type[ParameterError], tuple[str, Any, str]]:
        # Pickled whole (a preview's replay raises it in a worker process): the default
        # would rebuild it from the message alone, which ``__init__`` does not take.
        return type(self), (self.field, self.value, self.rule)

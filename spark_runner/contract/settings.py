"""A class setting as a pydantic field: the live configuration, the scenario format and
the API's class schemas declare their class fields with :func:`setting_field`, so a
setting's default and meaning (and, where a layer checks them, its bounds) come from
its one declaration (:mod:`spark_runner.core.class_settings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from spark_runner.core.class_settings import SETTINGS


def setting_field(name: str, *, optional: bool = False, bounded: bool = False, **extra: Any) -> Any:
    """The pydantic field of class setting ``name``.

    ``optional``: part of a partial change (default None: left as it is). ``bounded``:
    the declared bounds as the field's constraints (where the layer checks them before
    the core's rule). ``extra``: further ``Field`` arguments.
    """
    setting = SETTINGS[name]
    kwargs: dict[str, Any] = {"description": setting.description, **extra}
    if bounded:
        kwargs.update(_bounds(setting.minimum, setting.maximum, setting.above, setting.below))
    if optional:
        return Field(default=None, **kwargs)
    if setting.required:
        return Field(**kwargs)
    if isinstance(setting.default, Mapping):
        return Field(default_factory=dict, **kwargs)
    return Field(default=setting.default, **kwargs)


def _bounds(low: float | None, high: float | None, above: bool, below: bool) -> dict[str, float]:
    bounds: dict[str, float] = {}
    if low is not None:
        bounds["gt" if above else "ge"] = low
    if high is not None:
        bounds["lt" if below else "le"] = high
    return bounds

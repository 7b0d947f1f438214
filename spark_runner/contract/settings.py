"""Class settings as pydantic fields: the live configuration, the scenario format and the
API's class schemas get their class fields from :func:`with_class_settings` (or, for a
field read by name in code, :func:`setting_field`), so a setting's type, default, meaning
and bounds come from its one declaration (:mod:`spark_runner.core.class_settings`), and
a setting added there reaches every layer without a line in any of them."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, Field, create_model

from spark_runner.core.class_settings import CLASS_SETTINGS, SETTINGS, ClassSetting
from spark_runner.core.params import ParamValue

M = TypeVar("M", bound=BaseModel)


def setting_field(
    name: str, *, optional: bool = False, bounded: bool = False, read: bool = False, **extra: Any
) -> Any:
    """The pydantic field of class setting ``name``.

    ``optional``: part of a partial change (default None: left as it is). ``bounded``:
    the declared bounds as the field's constraints (where the layer checks them before
    the core's rule). ``read``: a response's field, always present (no default).
    ``extra``: further ``Field`` arguments.
    """
    setting = SETTINGS[name]
    kwargs: dict[str, Any] = {"description": setting.description, **extra}
    if setting.max_length is not None:
        kwargs.setdefault("max_length", setting.max_length)
    if bounded:
        kwargs.update(_bounds(setting.minimum, setting.maximum, setting.above, setting.below))
    if optional:
        return Field(default=None, **kwargs)
    if setting.required or read:
        return Field(**kwargs)
    if isinstance(setting.default, Mapping):
        return Field(default_factory=dict, **kwargs)
    return Field(default=setting.default, **kwargs)


def with_class_settings(
    *,
    optional: bool = False,
    bounded: bool | Collection[str] = False,
    read: bool = False,
    skip: Collection[str] = (),
) -> Callable[[type[M]], type[M]]:
    """Class decorator: the model with a field per declared class setting that it does
    not declare itself (nor ``skip``s: a layer that keeps it elsewhere), after its own.

    ``optional``, ``read``: as :func:`setting_field`; ``bounded``: True for every
    setting, or the names of those the layer bounds before the core's rule. A model
    declares a setting itself only where code reads it by name (type checkers see the
    declared fields only); the others are read by name from ``model_dump()``.
    """

    def build(model: type[M]) -> type[M]:
        fields: dict[str, Any] = {
            s.name: (
                _annotation(s, optional),
                setting_field(
                    s.name,
                    optional=optional,
                    bounded=bounded if isinstance(bounded, bool) else s.name in bounded,
                    read=read,
                ),
            )
            for s in CLASS_SETTINGS
            if s.name not in model.model_fields and s.name not in skip
        }
        return create_model(
            model.__name__,
            __base__=model,
            __module__=model.__module__,
            __doc__=model.__doc__,
            **fields,
        )

    return build


def _annotation(setting: ClassSetting, optional: bool) -> Any:
    annotation: Any = dict[str, ParamValue] if setting.type is dict else setting.type
    return annotation | None if optional else annotation


def _bounds(low: float | None, high: float | None, above: bool, below: bool) -> dict[str, float]:
    bounds: dict[str, float] = {}
    if low is not None:
        bounds["gt" if above else "ge"] = low
    if high is not None:
        bounds["lt" if below else "le"] = high
    return bounds

"""``make_manager``: build any load manager from its kind and a plain parameter mapping.

The mapping is what a user, a job snapshot or the dashboard hands over; names and types
are checked and every rule is validated (``ParameterError`` names the parameter and the
rule). Kinds: "aloma", "seamless", "ctrl", "aurora", "none", "linear".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers.aloma import AlomaManager
from spark_runner.core.managers.aurora import AuroraManager
from spark_runner.core.managers.base import LoadManager, ManagerParams
from spark_runner.core.managers.ctrl import CtrlManager
from spark_runner.core.managers.linear import LinearManager
from spark_runner.core.managers.no_shedding import NoSheddingManager
from spark_runner.core.managers.seamless import SeamlessManager
from spark_runner.core.params import ParamValue, build_params, param_names

MANAGER_TYPES: Mapping[str, type[LoadManager[Any]]] = MappingProxyType(
    {
        cls.kind: cls
        for cls in (
            AlomaManager,
            SeamlessManager,
            CtrlManager,
            AuroraManager,
            NoSheddingManager,
            LinearManager,
        )
    }
)
"""Manager class by kind (read-only)."""

MANAGER_KINDS: tuple[str, ...] = tuple(MANAGER_TYPES)


def manager_type(kind: str) -> type[LoadManager[Any]]:
    """The manager class of ``kind`` or ``ParameterError``."""
    try:
        return MANAGER_TYPES[kind]
    except KeyError:
        raise ParameterError("kind", kind, f"must be one of {', '.join(MANAGER_KINDS)}") from None


def manager_params(kind: str, params: Mapping[str, ParamValue] | None = None) -> ManagerParams:
    """Validated parameters of ``kind`` from a plain mapping (defaults for what is missing)."""
    return build_params(manager_type(kind).params_type, params or {})


def parameter_names(kind: str) -> tuple[str, ...]:
    """The parameter names ``kind`` accepts."""
    return param_names(manager_type(kind).params_type)


def make_manager(kind: str, params: Mapping[str, ParamValue] | None = None) -> LoadManager[Any]:
    """A fresh manager of ``kind`` with ``params`` (spec defaults for the rest)."""
    cls = manager_type(kind)
    return cls(build_params(cls.params_type, params or {}))

"""Load managers: one interface (:class:`LoadManager`), six kinds, one factory.

Each control period a manager takes an :class:`~spark_runner.core.observation.Observation`
of the period that ended and returns a :class:`~spark_runner.core.observation.Decision`
for the next one. Build them with :func:`make_manager`.
"""

from spark_runner.core.managers.aloma import AlomaManager, AlomaParams, capacity_step, probe_percent
from spark_runner.core.managers.aurora import AuroraManager, AuroraParams, aurora_shed_fraction
from spark_runner.core.managers.base import LoadManager, ManagerParams
from spark_runner.core.managers.ctrl import CtrlManager, CtrlParams
from spark_runner.core.managers.delay_controller import DelayController, Gains, gains_from_poles
from spark_runner.core.managers.linear import LinearManager, LinearParams, linear_shed_factor
from spark_runner.core.managers.no_shedding import NoSheddingManager, NoSheddingParams
from spark_runner.core.managers.registry import (
    MANAGER_KINDS,
    MANAGER_TYPES,
    make_manager,
    manager_params,
    manager_type,
    parameter_names,
)
from spark_runner.core.managers.seamless import SeamlessManager, SeamlessParams

__all__ = [
    "MANAGER_KINDS",
    "MANAGER_TYPES",
    "AlomaManager",
    "AlomaParams",
    "AuroraManager",
    "AuroraParams",
    "CtrlManager",
    "CtrlParams",
    "DelayController",
    "Gains",
    "LinearManager",
    "LinearParams",
    "LoadManager",
    "ManagerParams",
    "NoSheddingManager",
    "NoSheddingParams",
    "SeamlessManager",
    "SeamlessParams",
    "aurora_shed_fraction",
    "capacity_step",
    "gains_from_poles",
    "linear_shed_factor",
    "make_manager",
    "manager_params",
    "manager_type",
    "parameter_names",
    "probe_percent",
]

"""A discrete-event simulator of a stream engine, driven by the QoS core.

- :func:`run_scenario`: simulate a validated :class:`~spark_runner.scenario.Scenario` and
  return the results document (:mod:`spark_runner.control.results`, documented JSON).
- :mod:`engine`: the simulator (operators, queues, batch processing, WRR class scheduler
  with implicit sharing, shedding at class sources, background load, response times).
- the operator network, the control plane (none / common / per-class / DILoS), the
  per-period loop it runs in and the results are :mod:`spark_runner.control`'s, shared
  with the Spark engine.
- :mod:`plot`: figures; :mod:`tracegen`: the generated trace.

Pure Python; deterministic given the scenario's seed; reads no clock.
"""

from __future__ import annotations

from typing import Any

from spark_runner.control.results import build_results
from spark_runner.scenario.models import Scenario
from spark_runner.sim.engine import Simulation, simulate


def run_scenario(scenario: Scenario) -> dict[str, Any]:
    """Simulate ``scenario`` and return its results document."""
    return build_results(simulate(scenario))


__all__ = ["Simulation", "run_scenario", "simulate"]

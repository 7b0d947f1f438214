"""A discrete-event simulator of a stream engine, driven by the QoS core.

- :func:`run_scenario`: simulate a validated :class:`~spark_runner.scenario.Scenario` and
  return the results document (:mod:`results`, documented JSON).
- :mod:`engine`: the simulator (operators, queues, batch processing, WRR class scheduler
  with implicit sharing, shedding at class sources, background load, response times).
- :mod:`network`: the operator network of a scenario and the core's graph of it.
- the control plane (none / common / per-class / DILoS) and the per-period loop it runs
  in are :mod:`spark_runner.control`'s, shared with the Spark runner.
- :mod:`report`, :mod:`plot`: tables and figures; :mod:`tracegen`: the generated trace.

Pure Python; deterministic given the scenario's seed; reads no clock.
"""

from __future__ import annotations

from typing import Any

from spark_runner.scenario.models import Scenario
from spark_runner.sim.engine import SimOutput, Simulation, simulate
from spark_runner.sim.results import build_results, write_results


def run_scenario(scenario: Scenario) -> dict[str, Any]:
    """Simulate ``scenario`` and return its results document."""
    return build_results(simulate(scenario))


__all__ = ["SimOutput", "Simulation", "build_results", "run_scenario", "simulate", "write_results"]

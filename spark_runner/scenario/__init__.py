"""The scenario format (version 1): one YAML file for the simulator and the Spark runner.

- :func:`load_scenario` / :func:`parse_scenario`: read and validate a file or text;
  problems raise :class:`ScenarioError`, each :class:`Issue` naming its YAML path.
- :mod:`models`: the typed document (:class:`Scenario` and its parts).
- :mod:`arrivals`: arrival patterns as rate schedules (constant, step, Pareto, trace).
- :mod:`predicates`: filter predicates and the selectivity they imply.

The format is documented in ``docs/scenario-format.md``.
"""

from spark_runner.scenario.errors import Issue, ScenarioError
from spark_runner.scenario.loader import apply_override, load_scenario, parse_scenario
from spark_runner.scenario.models import FORMAT_VERSION, Scenario

__all__ = [
    "FORMAT_VERSION",
    "Issue",
    "Scenario",
    "ScenarioError",
    "apply_override",
    "load_scenario",
    "parse_scenario",
]

"""The scenario of a job launched without one: one generated stream per class (no Spark).

A job from registered classes (``JobSnapshot.scenario`` is None) runs what the walking
skeleton ran, as a scenario the engine understands: class *k* reads its own stream at its
``rate_per_s`` and runs one query, ``filter value < selectivity`` then ``project key,
value``; the control period, duration and managers come from the snapshot. Classes keep
their names: the control plane and the scenario format follow one name rule.
"""

from __future__ import annotations

from typing import Any

from spark_runner.contract.snapshot import JobSnapshot

DEFAULT_DURATION_S = 86_400.0
"""Schedules of an unlimited job are built for this long (constant rates hold after)."""


def derived_scenario(snapshot: JobSnapshot) -> dict[str, Any]:
    """The scenario document of ``snapshot.classes``."""
    control = snapshot.initial_control()
    classes = []
    streams = []
    for i, c in enumerate(snapshot.classes):
        live = control.classes.get(c.name)
        stream = f"s{i}_{c.name}"
        streams.append(
            {"name": stream, "arrival": {"kind": "constant", "rate_per_s": c.rate_per_s}}
        )
        classes.append(
            {
                "name": c.name,
                "priority": c.priority,
                "delay_target_s": c.delay_target_s,
                "manager": {
                    "kind": live.manager if live else "aloma",
                    "params": dict(live.manager_params) if live else {},
                },
                "queries": [
                    {
                        "name": "q",
                        "source": stream,
                        "operators": [
                            {"kind": "filter", "predicate": f"value < {c.selectivity!r}"},
                            {"kind": "project", "columns": ["key", "value"]},
                        ],
                    }
                ],
            }
        )
    document = {
        "version": 1,
        "name": f"job-{snapshot.job_id}",
        "seed": snapshot.job_id,
        "duration_s": snapshot.duration_s or DEFAULT_DURATION_S,
        "control": {
            "period_s": snapshot.control_period_s,
            "mode": "dilos" if control.redistribution_enabled else "per_class",
            "redistribution_every": control.redistribution_every,
            "policy": control.policy,
        },
        "streams": streams,
        "classes": classes,
    }
    return document

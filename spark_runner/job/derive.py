"""The scenario of a job launched without one: one generated stream per class (no Spark).

A job from registered classes (``JobSnapshot.scenario`` is None) runs what the walking
skeleton ran, as a scenario the engine understands: class *k* reads its own stream at its
``rate_per_s`` and runs one query, ``filter value < selectivity`` then ``project key,
value``; the control period, duration and managers come from the snapshot. Class names the
scenario format does not allow (a leading digit, longer than 64 characters) get a scenario
name of their own; ``aliases`` maps it back to the name the control plane knows.
"""

from __future__ import annotations

import re
from typing import Any

from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.scenario.models import NAME_PATTERN

DEFAULT_DURATION_S = 86_400.0
"""Schedules of an unlimited job are built for this long (constant rates hold after)."""


def scenario_name(name: str, index: int) -> str:
    if re.fullmatch(NAME_PATTERN, name) and len(name) <= 64:
        return name
    return f"class{index}_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:50]


def derived_scenario(snapshot: JobSnapshot) -> tuple[dict[str, Any], dict[str, str]]:
    """The scenario document of ``snapshot.classes`` and ``{scenario name: class name}``."""
    control = snapshot.initial_control()
    aliases = {scenario_name(c.name, i): c.name for i, c in enumerate(snapshot.classes)}
    by_name = {c.name: c for c in snapshot.classes}
    classes = []
    streams = []
    for i, (alias, name) in enumerate(aliases.items()):
        c = by_name[name]
        live = control.classes.get(name)
        stream = f"s{i}_{alias}"[:64]
        streams.append(
            {"name": stream, "arrival": {"kind": "constant", "rate_per_s": c.rate_per_s}}
        )
        classes.append(
            {
                "name": alias,
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
    return document, aliases

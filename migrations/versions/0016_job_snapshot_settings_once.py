"""job snapshot settings once

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06 06:00:00.000000

A job's snapshot (``jobs.config``) carries each class setting once, in its ``control``:
its ``classes`` keep the name and generated workload, its scenario's classes the name,
queries and description. Stored snapshots are rewritten so; one stored without a
``control`` gets one from its classes' priority and delay target (the rest: defaults, as
the job read it). The key lists are written out: a migration must not follow later code.
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SETTINGS_AT_TOP = (
    "priority",
    "delay_target_s",
    "reserve_fraction",
    "max_lend_fraction",
    "catch_up",
    "max_shed_fraction",
)
_TAUS = ("tau0", "tau1", "tau2", "tau3")
_SCENARIO_KEYS = (*_SETTINGS_AT_TOP, "manager", "thresholds")

_jobs = sa.table("jobs", sa.column("id", sa.Integer), sa.column("config", sa.JSON))


def _rewrite(change: Any) -> None:
    bind = op.get_bind()
    for job_id, config in bind.execute(sa.select(_jobs.c.id, _jobs.c.config)).all():
        if not isinstance(config, dict) or not config.get("classes"):
            continue
        bind.execute(
            sa.update(_jobs).where(_jobs.c.id == job_id).values(config=change(dict(config)))
        )


def _settings_once(config: dict[str, Any]) -> dict[str, Any]:
    classes = config["classes"]
    if config.get("control") is None:
        config["control"] = {
            "classes": {
                c["name"]: {"priority": c["priority"], "delay_target_s": c["delay_target_s"]}
                for c in classes
            }
        }
    config["classes"] = [
        {k: v for k, v in c.items() if k not in ("priority", "delay_target_s")} for c in classes
    ]
    scenario = config.get("scenario")
    if isinstance(scenario, dict):
        config["scenario"] = {
            **scenario,
            "classes": [
                {k: v for k, v in c.items() if k not in _SCENARIO_KEYS}
                for c in scenario.get("classes", [])
            ],
        }
    return config


def _settings_everywhere(config: dict[str, Any]) -> dict[str, Any]:
    control = config["control"]["classes"]
    config["classes"] = [
        {
            **c,
            "priority": control[c["name"]]["priority"],
            "delay_target_s": control[c["name"]]["delay_target_s"],
        }
        for c in config["classes"]
    ]
    scenario = config.get("scenario")
    if isinstance(scenario, dict):
        config["scenario"] = {
            **scenario,
            "classes": [_scenario_class(c, control[c["name"]]) for c in scenario["classes"]],
        }
    return config


def _scenario_class(document: dict[str, Any], control: dict[str, Any]) -> dict[str, Any]:
    out = {**document, **{k: control[k] for k in _SETTINGS_AT_TOP if k in control}}
    if "manager" in control:
        out["manager"] = {"kind": control["manager"], "params": control.get("manager_params", {})}
    taus = {t: control[t] for t in _TAUS if t in control}
    if taus:
        out["thresholds"] = taus
    return out


def upgrade() -> None:
    _rewrite(_settings_once)


def downgrade() -> None:
    _rewrite(_settings_everywhere)

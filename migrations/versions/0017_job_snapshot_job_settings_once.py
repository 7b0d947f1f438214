"""job snapshot job settings once

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06 09:30:00.000000

A job's snapshot (``jobs.config``) carries the job's policy, redistribution period,
redistribution on or off and elasticity once, in its ``control``: its scenario's
``control`` keeps what no live configuration holds (the period, a ``none`` or ``common``
mode, ``min_share``, ``hold_infeasible``, ``common_manager``). Stored snapshots are
rewritten so; a downgrade puts the settings back from ``control``. The key lists are
written out: a migration must not follow later code.
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JOB_KEYS = ("policy", "redistribution_every", "elastic")
_LIVE_MODES = ("dilos", "per_class")

_jobs = sa.table("jobs", sa.column("id", sa.Integer), sa.column("config", sa.JSON))


def _rewrite(change: Any) -> None:
    bind = op.get_bind()
    for job_id, config in bind.execute(sa.select(_jobs.c.id, _jobs.c.config)).all():
        scenario = config.get("scenario") if isinstance(config, dict) else None
        if not isinstance(scenario, dict) or not isinstance(config.get("control"), dict):
            continue
        control_doc = change(dict(scenario.get("control") or {}), config["control"])
        rewritten = {**config, "scenario": {**scenario, "control": control_doc}}
        bind.execute(sa.update(_jobs).where(_jobs.c.id == job_id).values(config=rewritten))


def _without(control_doc: dict[str, Any], _live: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in control_doc.items() if k not in _JOB_KEYS}
    if kept.get("mode", _LIVE_MODES[0]) in _LIVE_MODES:
        kept.pop("mode", None)
    return kept


def _with(control_doc: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    kept = _without(control_doc, live)
    enabled = live.get("redistribution_enabled", True)
    elastic = live.get("elastic")
    return {
        **kept,
        "mode": kept.get("mode") or ("dilos" if enabled else "per_class"),
        "policy": live.get("policy", "absolute"),
        "redistribution_every": live.get("redistribution_every", 10),
        "elastic": {"params": elastic} if elastic is not None else None,
    }


def upgrade() -> None:
    _rewrite(_without)


def downgrade() -> None:
    _rewrite(_with)

"""The coordinator's Celery task: a round per coordinated master, on Celery beat every
``coordinate_interval_s`` (only one beat runs: ``backend.beat``; a round also locks its
master's row, so a round sent twice never interleaves with itself)."""

from __future__ import annotations

import time

from backend.coordinator.service import run_round
from backend.db import session_scope
from backend.settings import get_settings
from backend.worker import celery_app, worker_session_factory


@celery_app.task(name="cluster.coordinate", soft_time_limit=30, time_limit=60)
def coordinate() -> int:
    """A round on each master of ``cluster_executors``, each in a unit of work of its own;
    returns how many changed their allocation."""
    settings = get_settings()
    params = settings.coordinator_params()
    changed = 0
    for master, executors in settings.cluster_executors.items():
        with session_scope(worker_session_factory()) as session:
            changed += run_round(session, master, executors, time.time(), params) is not None
    return changed

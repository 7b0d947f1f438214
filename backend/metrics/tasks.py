"""Periodic metric housekeeping (Celery beat)."""

from __future__ import annotations

import logging
import time

from backend.db import session_scope
from backend.metrics.retention import apply_retention
from backend.settings import get_settings
from backend.worker import celery_app, worker_session_factory

log = logging.getLogger(__name__)


@celery_app.task(name="metrics.retention", soft_time_limit=600, time_limit=900)
def metrics_retention() -> None:
    settings = get_settings()
    with session_scope(worker_session_factory()) as session:
        result = apply_retention(
            session,
            now=time.time(),
            retention_s=settings.metrics_retention_days * 86_400,
            compact_after_s=settings.metrics_compact_after_s,
            step_s=settings.metrics_compact_step_s,
        )
    log.info(
        "metric retention: %d deleted, %d samples compacted into %d",
        result.deleted,
        result.compacted_from,
        result.compacted_to,
    )

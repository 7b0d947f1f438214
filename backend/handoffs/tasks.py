"""The hand-offs' Celery task: :func:`~backend.handoffs.service.advance` every second on
Celery beat (a round locks the rows it moves, so one sent twice never moves a row twice)."""

from __future__ import annotations

import time

from backend.db import session_scope
from backend.handoffs.service import advance
from backend.worker import celery_app, worker_session_factory


@celery_app.task(name="handoffs.advance", soft_time_limit=10, time_limit=20)
def advance_handoffs() -> int:
    """Move the hand-offs in progress on; returns how many changed state."""
    with session_scope(worker_session_factory()) as session:
        return len(advance(session, time.time()))

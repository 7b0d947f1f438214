"""Celery tasks: thin adapters that take ids and call a service function.

No task blocks on a running job: ``launch_job`` starts the process and returns. The
watchdog ``sweep_jobs`` runs on Celery beat every ``watch_interval_s`` and reconciles
every live job with its process, so a job that dies is marked failed within seconds,
even if the worker restarted in between.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy.exc import OperationalError

from backend.db import session_scope
from backend.jobs import service
from backend.settings import get_settings
from backend.worker import celery_app, worker_session_factory

log = logging.getLogger(__name__)

# A pending job not launched by its own task within this time is launched by the sweep.
LAUNCH_GRACE = timedelta(seconds=10)
# Only a lost database connection is worth retrying; anything else is a bug or bad data.
TRANSIENT = (OperationalError,)


@celery_app.task(
    name="jobs.launch",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    max_retries=5,
    soft_time_limit=60,
    time_limit=90,
)
def launch_job(job_id: int) -> None:
    settings = get_settings()
    with session_scope(worker_session_factory()) as session:
        service.launch(session, settings, job_id)


@celery_app.task(
    name="jobs.stop",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    max_retries=5,
    soft_time_limit=30,
    time_limit=60,
)
def stop_job(job_id: int) -> None:
    settings = get_settings()
    with session_scope(worker_session_factory()) as session:
        service.send_stop(session, settings, job_id)


@celery_app.task(name="jobs.sweep", soft_time_limit=30, time_limit=60)
def sweep_jobs() -> int:
    """Reconcile every live job with its process; returns how many are still live.

    Each job is checked in its own transaction so one broken record cannot hide others.
    """
    settings = get_settings()
    factory = worker_session_factory()
    with session_scope(factory) as session:
        stale = service.stale_pending_ids(session, LAUNCH_GRACE)
    for job_id in stale:
        # Its launch message was lost (broker down when it was created): launch it here.
        with session_scope(factory) as session:
            service.launch(session, settings, job_id)
    with session_scope(factory) as session:
        live = service.live_job_ids(session)
    still_live = 0
    for job_id in live:
        try:
            with session_scope(factory) as session:
                still_live += service.watch(session, settings, job_id)
        except TRANSIENT:
            log.warning("job %d: database unavailable; checking again next sweep", job_id)
    return still_live


class CeleryDispatcher:
    """How the API hands work to the workers (``app.state.dispatcher``)."""

    def launch(self, job_id: int) -> None:
        launch_job.delay(job_id)

    def stop(self, job_id: int) -> None:
        stop_job.delay(job_id)

"""Celery tasks: thin adapters that take a job id and call a service function.

No task blocks on a running job: ``launch_job`` starts the process and returns;
``watch_job`` checks it and re-enqueues itself until the job ends.
"""

from __future__ import annotations

import logging

from sqlalchemy.exc import OperationalError

from backend.db import session_scope
from backend.jobs import service
from backend.settings import get_settings
from backend.worker import celery_app, worker_session_factory

log = logging.getLogger(__name__)

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
        keep_watching = service.launch(session, settings, job_id)
    if keep_watching:
        watch_job.apply_async((job_id,), countdown=settings.watch_interval_s)


@celery_app.task(
    name="jobs.stop",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    max_retries=5,
    soft_time_limit=30,
    time_limit=60,
)
def stop_job(job_id: int) -> None:
    with session_scope(worker_session_factory()) as session:
        service.send_stop(session, job_id)
    watch_job.apply_async((job_id,), countdown=0.2)


@celery_app.task(
    name="jobs.watch",
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    max_retries=10,
    soft_time_limit=30,
    time_limit=60,
)
def watch_job(job_id: int) -> None:
    settings = get_settings()
    with session_scope(worker_session_factory()) as session:
        keep_watching = service.watch(session, settings, job_id)
    if keep_watching:
        watch_job.apply_async((job_id,), countdown=settings.watch_interval_s)


class CeleryDispatcher:
    """How the API hands work to the workers (``app.state.dispatcher``)."""

    def launch(self, job_id: int) -> None:
        launch_job.delay(job_id)

    def stop(self, job_id: int) -> None:
        stop_job.delay(job_id)

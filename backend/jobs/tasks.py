"""Celery tasks: thin adapters that take ids and call a service function.

No task blocks on a running job: ``launch_job`` starts the process and returns. The
watchdog ``sweep_jobs`` runs on Celery beat every ``watch_interval_s`` and reconciles
every live job with its process, so a job that dies is marked failed within seconds,
even if the worker restarted in between.
"""

from __future__ import annotations

from backend.db import session_scope
from backend.jobs import service, watchdog
from backend.jobs.watchdog import TRANSIENT
from backend.settings import get_settings
from backend.worker import celery_app, worker_session_factory


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
    """The watchdog (``backend.jobs.watchdog``); returns how many jobs are still live."""
    return watchdog.sweep(worker_session_factory(), get_settings())


class CeleryDispatcher:
    """How the API hands work to the workers (``app.state.dispatcher``)."""

    def launch(self, job_id: int) -> None:
        launch_job.delay(job_id)

    def stop(self, job_id: int) -> None:
        stop_job.delay(job_id)

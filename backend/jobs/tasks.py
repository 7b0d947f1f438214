"""Celery tasks: thin adapters that take ids and call a service function.

No task blocks on a running job: ``launch_job`` starts the process and returns. The
watchdog ``sweep_jobs`` runs on Celery beat every ``watch_interval_s`` and reconciles
every live job with its process, so a job that dies is marked failed within seconds,
even if the worker restarted in between.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from backend.db import session_scope
from backend.jobs import service, watchdog
from backend.jobs.watchdog import TRANSIENT
from backend.settings import Settings, get_settings
from backend.worker import celery_app, worker_session_factory

RETRIED = {"autoretry_for": TRANSIENT, "retry_backoff": True, "max_retries": 5}
"""A task on one job is retried, backing off, while the database is out of reach."""


@celery_app.task(name="jobs.launch", soft_time_limit=60, time_limit=90, **RETRIED)
def launch_job(job_id: int) -> None:
    _on_job(service.launch, job_id)


@celery_app.task(name="jobs.stop", soft_time_limit=30, time_limit=60, **RETRIED)
def stop_job(job_id: int) -> None:
    _on_job(service.send_stop, job_id)


def _on_job(work: Callable[[Session, Settings, int], object], job_id: int) -> None:
    """``work`` on one job in a unit of work of its own."""
    settings = get_settings()
    with session_scope(worker_session_factory()) as session:
        work(session, settings, job_id)


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

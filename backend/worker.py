"""The Celery application.

Embedded default: kombu's file-system transport under ``<data_dir>/broker`` (no
server). With ``CELERY_BROKER_URL=redis://...`` the same tasks run over Redis.
Start a worker with ``celery -A backend.worker worker``; with ``--beat`` it also schedules
the job watchdog and, on the masters of ``cluster_executors``, the cluster coordinator, in
a child process that dies with the worker, and only while it holds
the beat lock (``backend.beat``: at most one beat per data dir).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from celery import Celery, signals
from sqlalchemy.orm import Session, sessionmaker

from backend.beat import die_with_parent, on_beat_start
from backend.db import make_engine, make_session_factory
from backend.files import private_dir, use_private_umask
from backend.settings import Settings, get_settings


def celery_config(settings: Settings) -> dict[str, Any]:
    config: dict[str, Any] = {
        "broker_url": settings.celery_broker_url,
        "task_ignore_result": True,
        "task_acks_late": False,
        "task_serializer": "json",
        "accept_content": ["json"],
        "worker_hijack_root_logger": False,
        "broker_connection_retry_on_startup": True,
        "worker_prefetch_multiplier": 1,
    }
    if settings.celery_broker_url.startswith("filesystem"):
        folder = settings.broker_dir / "queue"
        processed = settings.broker_dir / "processed"
        private_dir(folder)
        private_dir(processed)
        config["broker_transport"] = "backend.broker:AtomicFilesystemTransport"
        config["broker_transport_options"] = {
            "data_folder_in": str(folder),
            "data_folder_out": str(folder),
            "processed_folder": str(processed),
            "control_folder": str(settings.broker_dir / "control"),
            "store_processed": False,
            "polling_interval": 0.1,
        }
        # The file-system transport has no fan-out exchange: no remote control, no events.
        config["worker_enable_remote_control"] = False
        config["worker_send_task_events"] = False
    else:
        config["broker_transport_options"] = {"visibility_timeout": 3600}
    return config


HANDOFF_TICK_S = 1.0
"""How often the hand-offs in progress move on (a hand-off's deadline is seconds away)."""


def make_celery(settings: Settings) -> Celery:
    app = Celery(
        "headroom",
        include=[
            "backend.jobs.tasks",
            "backend.metrics.tasks",
            "backend.coordinator.tasks",
            "backend.handoffs.tasks",
        ],
    )
    app.conf.update(celery_config(settings))
    app.conf.beat_schedule = {
        "sweep-jobs": {
            "task": "jobs.sweep",
            "schedule": settings.watch_interval_s,
            # A sweep nobody ran in time is useless: the next one supersedes it.
            "options": {"expires": max(5.0, 5 * settings.watch_interval_s)},
        },
        "metric-retention": {"task": "metrics.retention", "schedule": 3600.0},
        "advance-handoffs": {
            "task": "handoffs.advance",
            "schedule": HANDOFF_TICK_S,
            "options": {"expires": 5 * HANDOFF_TICK_S},
        },
    }
    if settings.cluster_executors:
        app.conf.beat_schedule["coordinate-clusters"] = {
            "task": "cluster.coordinate",
            "schedule": settings.coordinate_interval_s,
            "options": {"expires": max(5.0, 2 * settings.coordinate_interval_s)},
        }
    return app


@lru_cache(maxsize=1)
def worker_session_factory() -> sessionmaker[Session]:
    """The worker process's session factory (one engine per process)."""
    return make_session_factory(make_engine(get_settings().sqlalchemy_url))


def _beat_started(**_kwargs: Any) -> None:
    """Every beat, embedded or not: only while it holds the beat lock (``backend.beat``)."""
    settings = get_settings()
    on_beat_start(settings.beat_lock_path, settings.beat_lock_wait_s)


def _embedded_beat_started(**_kwargs: Any) -> None:
    """``celery worker --beat``'s beat process also dies with its worker."""
    die_with_parent()


def _prebuild_burn_jar(**_kwargs: Any) -> None:
    """Build the burn UDF's jar in the background as the worker starts, so the first job
    launch does not wait for ``javac`` (a launch meanwhile waits for this build)."""
    from backend.jobs.launcher import service_burn_jar

    settings = get_settings()
    threading.Thread(
        target=service_burn_jar, args=(settings,), name="burn-jar", daemon=True
    ).start()


def _private_umask(**_kwargs: Any) -> None:
    """A worker started directly (``celery worker``, as in docker-compose), not by
    ``headroom up``, creates owner-only files too (broker messages, beat schedule)."""
    use_private_umask()


signals.worker_init.connect(_private_umask)
signals.worker_ready.connect(_prebuild_burn_jar)
signals.beat_init.connect(_beat_started)
signals.beat_embedded_init.connect(_embedded_beat_started)
celery_app = make_celery(get_settings())

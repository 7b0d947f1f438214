"""The job watchdog: reconcile every live job with its process, launch lost launches.

``jobs.sweep`` (``backend.jobs.tasks``) runs :func:`sweep` on Celery beat every
``watch_interval_s``, so a job whose process dies is marked failed within seconds, a
pending job whose launch message was lost (the broker was down when it was created) is
launched after :data:`LAUNCH_GRACE`, and a stop that the job does not honour is signalled
again and then forced (``service.STOP_RESEND``, ``service.STOP_GRACE``). Those periods
are measured on ``now`` (the wall clock unless a test moves its own).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from backend.db import session_scope, utcnow
from backend.jobs import service
from backend.jobs.repository import JobRepository
from backend.settings import Settings

log = logging.getLogger(__name__)

# A pending job not launched by its own task within this time is launched by the sweep.
LAUNCH_GRACE = timedelta(seconds=10)
# Only a lost database connection is worth retrying; anything else is a bug or bad data.
TRANSIENT = (OperationalError,)


def sweep(
    factory: sessionmaker[Session], settings: Settings, now: Callable[[], datetime] = utcnow
) -> int:
    """Reconcile every live job with its process; returns how many are still live.

    Each job is checked in its own transaction so one broken record cannot hide others.
    """
    with session_scope(factory) as session:
        stale = service.stale_pending_ids(session, LAUNCH_GRACE, now)
    for job_id in stale:
        # Its launch message was lost (broker down when it was created): launch it here.
        with session_scope(factory) as session:
            service.launch(session, settings, job_id)
    with session_scope(factory) as session:
        live = JobRepository(session).live_ids()
    still_live = 0
    for job_id in live:
        try:
            with session_scope(factory) as session:
                still_live += service.watch(session, settings, job_id, now)
        except TRANSIENT:
            log.warning("job %d: database unavailable; checking again next sweep", job_id)
    return still_live

"""The job watchdog (``backend.jobs.watchdog.sweep``) with a clock moved by hand.

Real parts: a SQLite database built by ``alembic upgrade head``, the real launcher, and
real job processes (a stand-in interpreter, no Spark). Only time is simulated: the grace
periods are crossed by moving the clock, not by waiting for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from backend.classes.models import QueryClass
from backend.classes.repository import QueryClassRepository
from backend.db import make_engine, make_session_factory, session_scope, utcnow
from backend.hooks import Hooks
from backend.jobs import launcher, service
from backend.jobs.repository import JobRepository
from backend.jobs.schemas import JobCreate
from backend.jobs.states import JobStatus
from backend.jobs.watchdog import LAUNCH_GRACE, sweep
from backend.migrate import upgrade
from backend.settings import Settings
from tests.stand_in import stand_in_python
from tests.waiting import wait_until

# A job process that ignores SIGTERM (says so in its log) and runs until killed.
STUBBORN_JOB = """\
import signal, time
signal.signal(signal.SIGTERM, lambda *a: print("SIGTERM ignored", flush=True))
print("running", flush=True)
while True:
    time.sleep(1)
"""


class Clock:
    """A wall clock that moves only when the test says so."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir for the module: its cache holds the burn jar, built once."""
    return tmp_path_factory.mktemp("watchdog")


@pytest.fixture
def factory(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    url = f"sqlite:///{tmp_path / 'watchdog.db'}"
    upgrade(url)
    engine = make_engine(url)
    with session_scope(make_session_factory(engine)) as session:
        QueryClassRepository(session).add(
            QueryClass(
                name="gold", priority=6, delay_target_s=2, tau0=0.7, tau1=0.8, tau2=0.9, tau3=0.95
            )
        )
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def settings(data_dir: Path, tmp_path: Path) -> Settings:
    python = stand_in_python(tmp_path, STUBBORN_JOB)
    return Settings(data_dir=data_dir / tmp_path.name, job_python=str(python))


def create_job_whose_launch_message_is_lost(
    factory: sessionmaker[Session], settings: Settings
) -> tuple[int, datetime]:
    with session_scope(factory) as session:
        job, _ = service.create_job(
            session, settings, JobCreate(rate_per_s=10), lambda _id: None, Hooks()
        )
        return job.id, job.created_at


def job_state(factory: sessionmaker[Session], job_id: int) -> tuple[JobStatus, int | None]:
    with session_scope(factory) as session:
        job = JobRepository(session).require(job_id)
        return job.state, job.pid


def test_a_pending_job_whose_launch_message_was_lost_is_launched_after_the_grace(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    job_id, created_at = create_job_whose_launch_message_is_lost(factory, settings)
    clock = Clock(created_at + LAUNCH_GRACE - timedelta(seconds=1))
    assert sweep(factory, settings, clock) == 1
    assert job_state(factory, job_id) == (JobStatus.PENDING, None)  # its task may still come

    clock.now = created_at + LAUNCH_GRACE + timedelta(seconds=1)
    sweep(factory, settings, clock)
    status, pid = job_state(factory, job_id)
    try:
        assert status is JobStatus.STARTING and pid is not None
        assert launcher.process_state(pid, service.job_dir(settings, job_id)).alive
        assert sweep(factory, settings, clock) == 1  # launched once, not again
        assert job_state(factory, job_id) == (JobStatus.STARTING, pid)
    finally:
        if pid is not None:
            launcher.kill_group(pid)


def test_a_job_that_ignores_its_stop_is_signalled_again_then_killed_after_the_grace(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    job_id, _ = create_job_whose_launch_message_is_lost(factory, settings)
    with session_scope(factory) as session:
        service.launch(session, settings, job_id)
    status, pid = job_state(factory, job_id)
    assert status is JobStatus.STARTING and pid is not None
    log = service.job_dir(settings, job_id) / "job.log"
    try:
        assert wait_until(lambda: "running" in log.read_text(), 10, 0.05)
        with session_scope(factory) as session:
            # The stop task's message is lost too: only the watchdog signals the job.
            job = service.request_stop(session, job_id, enqueue_stop=lambda _id: None)
            asked_at = job.stop_requested_at
        assert asked_at is not None
        clock = Clock(asked_at + service.STOP_RESEND - timedelta(seconds=1))
        sweep(factory, settings, clock)
        assert "SIGTERM" not in log.read_text()

        clock.now = asked_at + service.STOP_RESEND + timedelta(seconds=1)
        sweep(factory, settings, clock)  # signalled again; the job ignores it
        assert wait_until(lambda: "SIGTERM ignored" in log.read_text(), 10, 0.05)
        assert job_state(factory, job_id) == (JobStatus.STOPPING, pid)

        clock.now = asked_at + service.STOP_GRACE - timedelta(seconds=1)
        sweep(factory, settings, clock)
        assert launcher.process_state(pid, service.job_dir(settings, job_id)).alive

        clock.now = asked_at + service.STOP_GRACE + timedelta(seconds=1)
        sweep(factory, settings, clock)  # past the grace: the whole group is killed
        assert wait_until(lambda: not launcher.group_alive(pid), 10, 0.05)
        assert sweep(factory, settings, clock) == 0
        assert job_state(factory, job_id)[0] is JobStatus.STOPPED
    finally:
        launcher.kill_group(pid)


def test_the_default_clock_is_the_wall_clock(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    job_id, created_at = create_job_whose_launch_message_is_lost(factory, settings)
    assert utcnow() - created_at < LAUNCH_GRACE
    sweep(factory, settings)  # now, by the real clock: within the grace, not launched
    assert job_state(factory, job_id) == (JobStatus.PENDING, None)

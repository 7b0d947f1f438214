"""Start the product's processes (API, Celery worker, dashboard) and keep them running.

``headroom up`` and the end-to-end tests both use this, so what the tests run is what
an operator runs. Every process runs with the owner-only umask and logs to a 0600 file
under ``<data_dir>/logs`` (``backend.files``). ``supervise`` restarts a process that dies,
after a back-off (:class:`Backoff`), and leaves the others running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from backend.files import PRIVATE_UMASK, open_private_append, private_dir
from backend.settings import Settings

log = logging.getLogger(__name__)
Clock = Callable[[], float]


@dataclass(frozen=True)
class Backoff:
    """Delays before restarting a process that died, seconds.

    The n-th restart in a row waits ``min(max_s, initial_s * factor ** (n - 1))``; a run
    that lasted ``healthy_s`` or more ends the row (the next restart waits ``initial_s``).
    """

    initial_s: float = 1.0
    factor: float = 2.0
    max_s: float = 60.0
    healthy_s: float = 60.0

    def delay_s(self, restarts_in_a_row: int) -> float:
        return min(self.max_s, self.initial_s * self.factor ** max(0, restarts_in_a_row - 1))


@dataclass
class Service:
    name: str
    args: list[str]
    process: subprocess.Popen[bytes]
    log_path: Path
    started_at: float = field(default_factory=time.monotonic)
    """When the current process started (monotonic seconds)."""
    restarts_in_a_row: int = 0
    restart_at: float | None = None
    """When a dead process is due to be started again (monotonic seconds); None: not dead
    or not yet noticed."""
    health_url: str | None = None
    """What answers 200 once the service serves (``Stack.wait_healthy``); None: nothing."""


@dataclass
class Stack:
    """The running processes of one deployment; stop them with ``stop()``."""

    settings: Settings
    env: dict[str, str]
    services: list[Service] = field(default_factory=list)
    backoff: Backoff = field(default_factory=Backoff)
    announce: Callable[[str], None] = log.warning
    """Where supervision says what it does (``headroom up``: its standard error)."""

    @classmethod
    def from_settings(cls, settings: Settings, extra_env: Mapping[str, str] | None = None) -> Stack:
        env = dict(os.environ)
        env.update(
            {
                "HEADROOM_DATA_DIR": str(settings.data_dir),
                "DATABASE_URL": settings.sqlalchemy_url,
                "CELERY_BROKER_URL": settings.celery_broker_url,
                "SPARK_MASTER": settings.spark_master,
                "HEADROOM_API_HOST": settings.api_host,
                "HEADROOM_API_PORT": str(settings.api_port),
                "HEADROOM_API_URL": settings.public_api_url,
                "HEADROOM_DASHBOARD_HOST": settings.dashboard_host,
                "HEADROOM_DASHBOARD_PORT": str(settings.dashboard_port),
                "HEADROOM_JOB_PYTHON": settings.job_python,
                "HEADROOM_LAUNCH_MODE": settings.launch_mode,
                "HEADROOM_SPARK_SUBMIT": settings.spark_submit,
                "HEADROOM_STREAMS_REDIS_URL": settings.streams_redis_url,
                "HEADROOM_STREAMS_PREFIX": settings.streams_prefix,
            }
        )
        env.update(extra_env or {})
        return cls(settings=settings, env=env)

    def _start(self, name: str, args: list[str], health_url: str | None = None) -> Service:
        service = Service(name, args, *self._spawn(name, args), health_url=health_url)
        self.services.append(service)
        return service

    def _spawn(self, name: str, args: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
        log_path = private_dir(self.settings.data_dir / "logs") / f"{name}.log"
        log_fd = open_private_append(log_path)
        try:
            process = subprocess.Popen(
                [sys.executable, *args],
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                umask=PRIVATE_UMASK,
            )
        finally:
            os.close(log_fd)
        return process, log_path

    def start_api(self) -> Service:
        return self._start(
            "api",
            [
                "-m",
                "uvicorn",
                "--factory",
                "backend.main:create_app",
                "--host",
                self.settings.api_host,
                "--port",
                str(self.settings.api_port),
                "--log-level",
                "warning",
            ],
            f"{self.settings.public_api_url}/api/v1/health",
        )

    def start_worker(self) -> Service:
        return self._start(
            "worker",
            [
                "-m",
                "celery",
                "-A",
                "backend.worker",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                "4",
                "--loglevel",
                "INFO",
                "--without-mingle",
                "--without-gossip",
                # Embedded beat runs the job watchdog; exactly one worker may have it.
                "--beat",
                "--schedule",
                str(self.settings.data_dir / "celerybeat-schedule"),
            ],
        )

    def start_dashboard(self) -> Service:
        return self._start("dashboard", ["-m", "frontend"], f"{self.dashboard_url}/login")

    @property
    def dashboard_url(self) -> str:
        return f"http://{self.settings.dashboard_host}:{self.settings.dashboard_port}"

    def wait_healthy(self, timeout_s: float = 60.0) -> None:
        """Block until every started service that serves HTTP answers (the API its health
        check, the dashboard its sign-in page); raise with the log if one dies."""
        waiting = [s.health_url for s in self.services if s.health_url is not None]
        deadline = time.monotonic() + timeout_s
        while waiting and time.monotonic() < deadline:
            for service in self.services:
                if service.process.poll() is not None:
                    tail = service.log_path.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{service.name} exited early:\n{tail}")
            waiting = [url for url in waiting if not _answers(url)]
            if waiting:
                time.sleep(0.2)
        if waiting:
            raise TimeoutError(f"{', '.join(waiting)} did not answer within {timeout_s:.0f} s")

    def supervise(
        self,
        should_stop: Callable[[], bool],
        *,
        poll_s: float = 0.5,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Keep every service running until ``should_stop()``: see :meth:`check`."""
        while not should_stop():
            self.check(clock())
            sleep(poll_s)

    def check(self, now: float) -> None:
        """One supervision step at monotonic time ``now``: a service found dead is due for
        a restart after its back-off; one whose back-off has passed is started again. The
        other services are left running."""
        for service in self.services:
            if service.restart_at is None:
                code = service.process.poll()
                if code is not None:
                    self._schedule_restart(service, code, now)
            elif now >= service.restart_at:
                self._restart(service, now)

    def _schedule_restart(self, service: Service, code: int, now: float) -> None:
        ran_s = now - service.started_at
        if ran_s >= self.backoff.healthy_s:
            service.restarts_in_a_row = 0
        service.restarts_in_a_row += 1
        delay_s = self.backoff.delay_s(service.restarts_in_a_row)
        service.restart_at = now + delay_s
        how = f"signal {-code}" if code < 0 else f"code {code}"
        self._say(
            service,
            f"{service.name} (pid {service.process.pid}) exited with {how} after {ran_s:.1f} s; "
            f"restarting it in {delay_s:g} s (restart {service.restarts_in_a_row} in a row); "
            "the other services keep running",
        )

    def _restart(self, service: Service, now: float) -> None:
        service.process, service.log_path = self._spawn(service.name, service.args)
        service.started_at, service.restart_at = now, None
        self._say(service, f"{service.name} restarted (pid {service.process.pid})")

    def _say(self, service: Service, message: str) -> None:
        self.announce(message)
        with contextlib.suppress(OSError):
            fd = open_private_append(service.log_path)
            try:
                os.write(fd, f"[headroom up] {message}\n".encode())
            finally:
                os.close(fd)

    def stop_service(self, service: Service, timeout_s: float = 15.0) -> None:
        """Stop one process (SIGTERM, then SIGKILL after ``timeout_s``) and forget it."""
        if service.process.poll() is None:
            _signal_group(service, signal.SIGTERM)
            try:
                service.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                _signal_group(service, signal.SIGKILL)
                service.process.wait()
        self.services.remove(service)

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def stop(self, timeout_s: float = 15.0) -> None:
        for service in reversed(self.services):
            if service.process.poll() is None:
                _signal_group(service, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for service in reversed(self.services):
            try:
                service.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(service, signal.SIGKILL)
                service.process.wait()
        self.services.clear()


def _signal_group(service: Service, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(service.process.pid, signum)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False

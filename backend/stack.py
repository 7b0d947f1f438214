"""Start the product's processes: API, Celery worker and dashboard.

``headroom up`` and the end-to-end tests both use this, so what the tests run is what
an operator runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from backend.settings import Settings


@dataclass
class Service:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path


@dataclass
class Stack:
    """The running processes of one deployment; stop them with ``stop()``."""

    settings: Settings
    env: dict[str, str]
    services: list[Service] = field(default_factory=list)

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
            }
        )
        env.update(extra_env or {})
        return cls(settings=settings, env=env)

    def _start(self, name: str, args: list[str]) -> Service:
        log_dir = self.settings.data_dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"{name}.log"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        service = Service(name, process, log_path)
        self.services.append(service)
        return service

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
        return self._start("dashboard", ["-m", "frontend"])

    def wait_healthy(self, timeout_s: float = 60.0) -> None:
        """Block until the API answers its health check; raise with the log if it dies."""
        url = f"{self.settings.public_api_url}/api/v1/health"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for service in self.services:
                if service.process.poll() is not None:
                    tail = service.log_path.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"{service.name} exited early:\n{tail}")
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"the API did not answer {url} within {timeout_s:.0f} s")

    def stop_service(self, service: Service, timeout_s: float = 15.0) -> None:
        """Stop one process (SIGTERM, then SIGKILL after ``timeout_s``) and forget it."""
        if service.process.poll() is None:
            os.killpg(service.process.pid, signal.SIGTERM)
            try:
                service.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(service.process.pid, signal.SIGKILL)
                service.process.wait()
        self.services.remove(service)

    def service(self, name: str) -> Service:
        return next(s for s in self.services if s.name == name)

    def stop(self, timeout_s: float = 15.0) -> None:
        for service in reversed(self.services):
            if service.process.poll() is None:
                os.killpg(service.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        for service in reversed(self.services):
            try:
                service.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(service.process.pid, signal.SIGKILL)
                service.process.wait()
        self.services.clear()

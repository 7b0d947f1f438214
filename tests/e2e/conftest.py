"""Start the real product (API + Celery worker processes) on a chosen database and broker."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import httpx
import pytest

from backend.jobs import launcher
from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from tests.leftovers import kill_processes_naming


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class StackFactory(Protocol):
    def __call__(self, database_url: str, broker_url: str, streams_redis_url: str = "") -> Stack:
        """A healthy running API and worker on these services (and jobs reading and
        writing Redis streams on ``streams_redis_url``, when given)."""
        ...


@pytest.fixture
def start_stack(tmp_path: Path) -> Iterator[StackFactory]:
    """``start_stack(database_url, broker_url)`` → a healthy running API and worker,
    supervised as ``headroom up`` supervises them: a process that dies is restarted after
    its back-off (a Celery worker can die when its broker goes away mid-acknowledgement,
    in kombu's restore of unacknowledged messages)."""
    stacks: list[Stack] = []
    stopping = threading.Event()
    supervisors: list[threading.Thread] = []

    def _start(database_url: str, broker_url: str, streams_redis_url: str = "") -> Stack:
        data_dir = tmp_path / f"stack{len(stacks)}"
        settings = Settings(
            data_dir=data_dir,
            database_url=database_url,
            celery_broker_url=broker_url,
            spark_master="local[2]",
            api_port=free_port(),
            dashboard_port=free_port(),
            watch_interval_s=0.5,
            streams_redis_url=streams_redis_url,
        )
        data_dir.mkdir(parents=True)
        upgrade(settings.sqlalchemy_url)
        stack = Stack.from_settings(settings)
        stacks.append(stack)
        create_admin(stack)
        stack.start_api()
        stack.start_worker()
        stack.wait_healthy()
        supervisor = threading.Thread(target=stack.supervise, args=(stopping.is_set,))
        supervisor.start()
        supervisors.append(supervisor)
        return stack

    yield _start
    stopping.set()
    for supervisor in supervisors:
        supervisor.join()
    for stack in stacks:
        _kill_jobs(stack)
        stack.stop()
        kill_processes_naming(stack.settings.data_dir)


ADMIN = "e2e-admin"
ADMIN_PASSWORD = "e2e-password-123"


def create_admin(stack: Stack, username: str = ADMIN) -> None:
    """An admin (the password ``ADMIN_PASSWORD``), made the way an operator makes one:
    with the CLI."""
    result = subprocess.run(
        [sys.executable, "-m", "headroom", "users", "create-admin", username, "--password-stdin"],
        input=ADMIN_PASSWORD + "\n",
        env=stack.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 or "exists already" in result.stderr, result.stderr


@contextmanager
def api_only(tmp_path: Path, env: dict[str, str]) -> Iterator[Stack]:
    """An API process alone (no worker) over a new SQLite database in ``tmp_path``, with
    the settings ``env`` (``HEADROOM_...`` variables), its admin made, healthy."""
    settings = Settings.model_validate(
        {"data_dir": tmp_path / "data", "api_port": free_port(), **env}
    )
    settings.data_dir.mkdir()
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings, {"HOME": str(tmp_path / "home"), **env})
    create_admin(stack)
    stack.start_api()
    try:
        stack.wait_healthy()
        yield stack
    finally:
        stack.stop()


def api_client(stack: Stack) -> httpx.Client:
    """An httpx client for the stack's API, logged in as the admin."""
    client = httpx.Client(base_url=f"{stack.settings.public_api_url}/api/v1", timeout=10)
    login = client.post("/auth/login", json={"username": ADMIN, "password": ADMIN_PASSWORD})
    login.raise_for_status()
    client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
    return client


def _kill_jobs(stack: Stack) -> None:
    """Never leave a Spark JVM behind, whatever the test did."""
    try:
        api = api_client(stack)
        jobs = api.get("/jobs").json()
        api.close()
    except httpx.HTTPError:
        return
    for job in jobs:
        if job.get("pid"):
            launcher.kill_group(job["pid"])


def log_of(stack: Stack) -> str:
    parts = []
    for service in stack.services:
        parts.append(
            f"--- {service.name} ---\n{service.log_path.read_text(errors='replace')[-4000:]}"
        )
    for log in sorted(stack.settings.jobs_dir.glob("*/job.log")):
        parts.append(f"--- {log} ---\n{log.read_text(errors='replace')[-4000:]}")
    return "\n".join(parts)

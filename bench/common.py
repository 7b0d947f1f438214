"""Shared pieces of the benchmarks: a real API process on a chosen database, a table."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack

POSTGRES_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
ADMIN, PASSWORD = "bench-admin", "bench-password-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def postgres_database() -> Iterator[str]:
    """A throwaway PostgreSQL database, dropped afterwards."""
    name = f"headroom_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def running_stack(
    database_url: str | None,
    *,
    worker: bool = False,
    extra_env: Mapping[str, str] | None = None,
) -> Iterator[Stack]:
    """An API process (and optionally a worker) with an admin account, on ``database_url``
    (None: a SQLite file); ``extra_env`` overrides the processes' environment."""
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        settings = Settings(
            data_dir=data_dir,
            database_url=database_url or f"sqlite:///{data_dir / 'bench.db'}",
            api_port=free_port(),
            watch_interval_s=0.5,
        )
        upgrade(settings.sqlalchemy_url)
        stack = Stack.from_settings(settings, extra_env)
        subprocess.run(
            [sys.executable, "-m", "headroom", "users", "create-admin", ADMIN, "--password-stdin"],
            input=PASSWORD + "\n",
            env=stack.env,
            text=True,
            check=True,
            capture_output=True,
        )
        stack.start_api()
        if worker:
            stack.start_worker()
        try:
            stack.wait_healthy()
            yield stack
        finally:
            stack.stop()


def login(stack: Stack) -> httpx.Client:
    client = httpx.Client(base_url=f"{stack.settings.public_api_url}/api/v1", timeout=30)
    token = client.post("/auth/login", json={"username": ADMIN, "password": PASSWORD})
    token.raise_for_status()
    client.headers["Authorization"] = f"Bearer {token.json()['access_token']}"
    return client


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def print_table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(h) for h in header]] + [[_fmt(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if n else c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)

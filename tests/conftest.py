"""Shared fixtures: real PostgreSQL and Redis when reachable, SQLite and the embedded
broker always.

``HEADROOM_REQUIRE_SERVICES=1`` (set by ``.ci/run``) turns "service unreachable, skip"
into a failure, so CI can never pass by skipping the real-service tests.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

POSTGRES_ADMIN_URL = os.environ.get(
    "HEADROOM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("HEADROOM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE_SERVICES = os.environ.get("HEADROOM_REQUIRE_SERVICES", "") == "1"


def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 0), 2):
            return True
    except OSError:
        return False


def _unavailable(what: str, url: str) -> None:
    message = f"{what} is not reachable at {url}"
    if REQUIRE_SERVICES:
        pytest.fail(message + " and HEADROOM_REQUIRE_SERVICES=1 forbids skipping")
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test session, dropped afterwards."""
    if not _reachable(POSTGRES_ADMIN_URL):
        _unavailable("PostgreSQL", POSTGRES_ADMIN_URL)
    from sqlalchemy import create_engine, text

    name = f"headroom_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    base, _, _ = POSTGRES_ADMIN_URL.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def redis_url() -> str:
    if not _reachable(REDIS_URL):
        _unavailable("Redis", REDIS_URL)
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    return REDIS_URL


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that drive real processes (a browser, Spark, the whole stack) get one rerun:
    on a saturated 2-core machine a click or a deadline can be lost to scheduling. A
    second failure fails the run; pure and API tests are never rerun."""
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.flaky(reruns=1))

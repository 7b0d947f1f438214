"""Shared fixtures and the suite's run policy.

Fixtures: real PostgreSQL and Redis when reachable, SQLite and the embedded broker always.

Policy (hooks below):
- ``HEADROOM_REQUIRE_SERVICES=1`` (set by ``.ci/run``) turns every skip into a failure, so
  CI can never pass by skipping a test (a missing service, browser, JDK or tool);
- a test that uses ``postgres_url`` or ``redis_url`` must carry ``@pytest.mark.services``
  (checked at collection, so the marker stays true); a fixture that fetches them with
  ``request.getfixturevalue`` marks its PostgreSQL/Redis parameter with
  ``pytest.param(..., marks=pytest.mark.services)``;
- browser tests get one rerun, except those marked ``timing`` (their subject is a
  deadline or bound); no other test is ever rerun, and a test that passed only on its
  rerun is listed as ``FLAKY: <nodeid>`` at the end of the run, with the end of its first
  failure (a flake is traced from that line, not rerun away); one that failed twice
  shows its first failure too.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from tests.api_fixtures import anonymous, client, db_session, migrated_engine

__all__ = ["anonymous", "client", "db_session", "migrated_engine"]

POSTGRES_ADMIN_URL = os.environ.get(
    "HEADROOM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _worker_redis_url(url: str) -> str:
    """``url`` with a database of this pytest-xdist worker's own (gw0 keeps the given
    one, gw1 the one below it, ...): the fixture empties it at the start."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    parts = urlsplit(url)
    db = (int(parts.path.strip("/") or 0) - int(worker.removeprefix("gw"))) % 16
    return parts._replace(path=f"/{db}").geturl()


REDIS_URL = _worker_redis_url(
    os.environ.get("HEADROOM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
)
REQUIRE_SERVICES = os.environ.get("HEADROOM_REQUIRE_SERVICES", "") == "1"


def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 0), 2):
            return True
    except OSError:
        return False


FIRST_FAILURE_LINES = 20
"""How many of the last lines of a flaky test's first traceback the run's summary shows."""
SERVICE_FIXTURES = frozenset({"postgres_url", "redis_url", "empty_postgres_url"})
"""Fixtures that need a real PostgreSQL or Redis: their users carry the services marker."""


@contextmanager
def temporary_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database (its URL), dropped on exit."""
    if not _reachable(POSTGRES_ADMIN_URL):
        pytest.skip(f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL}")
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
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test session, dropped afterwards."""
    with temporary_postgres_database() as url:
        yield url


@pytest.fixture
def empty_postgres_url() -> Iterator[str]:
    """A PostgreSQL database of this test's own, empty (no schema), dropped afterwards."""
    with temporary_postgres_database() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> str:
    if not _reachable(REDIS_URL):
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    return REDIS_URL


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Checks the services marker and sets the rerun policy (see the module docstring)."""
    unmarked = [
        item.nodeid
        for item in items
        if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("services") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests use PostgreSQL or Redis (postgres_url / redis_url) without "
            "@pytest.mark.services:\n  " + "\n  ".join(unmarked)
        )
    for item in items:
        # A click or a wait in a real browser can be lost to scheduling on a saturated
        # machine; a deadline or a bound is the subject of a timing test, never retried.
        if item.get_closest_marker("browser") and not item.get_closest_marker("timing"):
            item.add_marker(pytest.mark.flaky(reruns=1))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if REQUIRE_SERVICES and report.skipped and not hasattr(report, "wasxfail"):
        _skip_to_failure(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    if REQUIRE_SERVICES and report.skipped:
        _skip_to_failure(report)
    return report


def _skip_to_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"{reason}: HEADROOM_REQUIRE_SERVICES=1 forbids skipping any test"


_flaky: list[str] = []
"""Node ids of the tests that failed, then passed on their rerun, in this run."""
_first_failures: dict[str, str] = {}
"""Each rerun test's first failure, as its traceback ends (the assertion and its message)."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # pytest-rerunfailures reports a failed attempt that will be repeated as outcome
    # "rerun", and numbers each attempt's reports: ``rerun`` > 0 on a repeat.
    if str(report.outcome) == "rerun":  # not among TestReport's declared outcomes
        _first_failures.setdefault(report.nodeid, report.longreprtext)
    if report.when == "call" and report.passed and getattr(report, "rerun", 0) > 0:
        _flaky.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _flaky:
        terminalreporter.section("flaky tests: failed, then passed on their rerun", yellow=True)
        _first_attempts(terminalreporter, "FLAKY", _flaky)
    failed_twice = [n for n in _first_failures if n not in _flaky]
    if failed_twice:
        # the rerun's failure can be a consequence of the first (state it left behind)
        terminalreporter.section("failed on their rerun too: the first attempts", red=True)
        _first_attempts(terminalreporter, "FAILED TWICE", failed_twice)


def _first_attempts(
    terminalreporter: pytest.TerminalReporter, label: str, nodeids: list[str]
) -> None:
    """Each test's id, then the end of its first attempt's traceback: where it failed
    and why."""
    for nodeid in nodeids:
        terminalreporter.line(f"{label}: {nodeid}")
        tail = _first_failures.get(nodeid, "").strip().splitlines()[-FIRST_FAILURE_LINES:]
        for line in tail:
            terminalreporter.line(f"    {line}")

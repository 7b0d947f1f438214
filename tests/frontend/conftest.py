"""Fixtures for the dashboard tests: a fake API server and a client for it.

Import paths: ``tests/conftest.py`` makes pytest put ``tests/`` on ``sys.path``, where
the directory ``tests/frontend`` would turn ``frontend`` into a namespace package (no
``__file__``), and Dash's pages need the real, regular package. Putting the repository
root first makes the real package win. This directory has no ``__init__.py`` for the
same reason, and test modules carry a ``test_frontend_`` prefix to keep names unique.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if sys.path[:1] != [str(ROOT)]:
    sys.path.insert(0, str(ROOT))

from frontend_fake_api import FakeApi, RunningFakeApi  # noqa: E402

from frontend.api import ApiClient  # noqa: E402


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    """A fresh fake of the headroom API (see frontend_fake_api for why a fake)."""
    with RunningFakeApi() as fake:
        yield fake


@pytest.fixture
def api(fake_api: FakeApi) -> Iterator[ApiClient]:
    """A client signed in as the operator ``ops`` (may change classes and jobs)."""
    with ApiClient(fake_api.url, token=fake_api.token_for("ops"), timeout_s=2.0) as client:
        yield client


@pytest.fixture
def viewer_api(fake_api: FakeApi) -> Iterator[ApiClient]:
    with ApiClient(fake_api.url, token=fake_api.token_for("viewer"), timeout_s=2.0) as client:
        yield client


@pytest.fixture
def admin_api(fake_api: FakeApi) -> Iterator[ApiClient]:
    with ApiClient(fake_api.url, token=fake_api.token_for("admin"), timeout_s=2.0) as client:
        yield client


@pytest.fixture
def anonymous_api(fake_api: FakeApi) -> Iterator[ApiClient]:
    with ApiClient(fake_api.url, timeout_s=2.0) as client:
        yield client


@pytest.fixture
def dead_url() -> str:
    """A URL on which nothing listens (the port was bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"

"""Fixtures for the dashboard tests: the real API (one process for the session, emptied
before each test) and clients of it signed in as each role.

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

from frontend.api import ApiClient  # noqa: E402
from tests.frontend.frontend_real_api import RealApi, running_api  # noqa: E402


@pytest.fixture(scope="session")
def api_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealApi]:
    """One real API process (uvicorn of backend.main on SQLite) for the whole session."""
    with running_api(tmp_path_factory.mktemp("frontend-api") / "data") as api:
        yield api


@pytest.fixture
def real_api(api_process: RealApi) -> RealApi:
    """The real API, emptied: no classes, jobs or scenarios; users admin, ops, viewer."""
    api_process.reset()
    return api_process


@pytest.fixture
def api(real_api: RealApi) -> Iterator[ApiClient]:
    """A client signed in as the operator ``ops`` (may change classes and jobs)."""
    with ApiClient(real_api.url, token=real_api.token_for("ops"), timeout_s=5.0) as client:
        yield client


@pytest.fixture
def viewer_api(real_api: RealApi) -> Iterator[ApiClient]:
    with ApiClient(real_api.url, token=real_api.token_for("viewer"), timeout_s=5.0) as client:
        yield client


@pytest.fixture
def admin_api(real_api: RealApi) -> Iterator[ApiClient]:
    with ApiClient(real_api.url, token=real_api.token_for("admin"), timeout_s=5.0) as client:
        yield client


@pytest.fixture
def anonymous_api(real_api: RealApi) -> Iterator[ApiClient]:
    with ApiClient(real_api.url, timeout_s=5.0) as client:
        yield client


@pytest.fixture
def dead_url() -> Iterator[str]:
    """A URL on which nothing listens: its port stays bound, not listening, for the test,
    so a connection is refused at once. (Released, the port could be taken meanwhile, or
    be picked as a connection's own ephemeral port, which connects to itself: a proxy's
    request to it then hung until the client's timeout, once in a full run.)"""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"

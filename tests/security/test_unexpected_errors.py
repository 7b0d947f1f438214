"""Probe: after a 500 the next request on the same keep-alive connection was reset.

Known bad inputs are 422s now (test_inputs.py); this covers the error nobody foresaw. A
route of the real app that raises is served by a real uvicorn server; the answer is a
500 that says nothing of the exception, and the same connection carries the next request.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings
from tests.waiting import wait_until

SECRET = "s3cr3t-in-an-exception-message"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'h.db'}")
    upgrade(settings.sqlalchemy_url)
    app = create_app(settings)

    @app.get("/boom")
    def _boom() -> None:
        raise RuntimeError(SECRET)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: uv.started, 30), "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(30)


def _client_port(response: httpx.Response) -> int:
    stream: Any = response.extensions["network_stream"]
    return int(stream.get_extra_info("client_addr")[1])


def test_an_unexpected_error_is_a_bare_500_and_the_connection_lives_on(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as client:
        failed = client.get("/boom")
        assert failed.status_code == 500
        assert failed.json() == {"detail": "internal error"}
        assert SECRET not in failed.text
        after = client.get("/api/v1/health")
        assert after.status_code == 200
        assert _client_port(after) == _client_port(failed)

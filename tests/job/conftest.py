"""Fixtures shared by the job's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .capture import CaptureServer


@pytest.fixture
def capture_server() -> Iterator[CaptureServer]:
    server = CaptureServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()

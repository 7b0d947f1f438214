"""Waiting on real processes and servers in integration tests (never in algorithm tests,
which run in simulated time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def poll_for(fn: Callable[[], T], timeout_s: float, interval_s: float = 0.2) -> T | None:
    """``fn()``'s first truthy value within ``timeout_s`` (checked once more at the end),
    else None."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval_s)
    value = fn()
    return value if value else None


def wait_until(predicate: Callable[[], object], timeout_s: float, interval_s: float = 0.2) -> bool:
    """True as soon as ``predicate()`` holds, False if it still does not after ``timeout_s``."""
    return poll_for(predicate, timeout_s, interval_s) is not None

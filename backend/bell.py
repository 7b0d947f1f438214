"""In-process wake-ups for long-lived responses: a commit rings, a waiting poll answers.

A long poll (the job's control poll) or a stream (live metrics) re-reads the database
when something may have changed. Rather than only re-reading on a fixed interval, it
listens on a key (``("config", job_id)``, ``("metrics", job_id)``); the service that
stores the change rings that key after its commit (``backend.db.after_commit``). A ring
wakes every listener of the key at once.

The bell only reaches listeners in the same process. With several API processes a
change stored by another one is seen at the listener's next re-read, so listeners keep a
short interval as a floor: the bell makes answers fast, the interval keeps them correct.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager, suppress


class Listener:
    """One waiter's subscription to one or more keys; :meth:`wait` returns early when
    any of them rings, and :attr:`heard` then says which."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._rung = asyncio.Event()
        # Filled at once by ring() (from any thread), so no ring is lost to scheduling.
        self._pending: set[Hashable] = set()
        self.heard: frozenset[Hashable] = frozenset()
        """The keys rung before the last :meth:`wait` returned (empty after a timeout)."""

    def ring(self, key: Hashable) -> None:
        """Thread-safe: mark the ring and wake the waiter on its event loop."""
        self._pending.add(key)
        with suppress(RuntimeError):  # the loop closed under a departing listener
            self.loop.call_soon_threadsafe(self._rung.set)

    async def wait(self, timeout_s: float) -> bool:
        """True when rung since the last wait, else False after ``timeout_s``."""
        if not self._pending:
            try:
                await asyncio.wait_for(self._rung.wait(), max(0.0, timeout_s))
            except TimeoutError:
                self.heard = frozenset()
                return False
        self._rung.clear()
        self.heard = frozenset(self._pending)
        self._pending.difference_update(self.heard)
        return True


class Bell:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[Hashable, set[Listener]] = {}

    @contextmanager
    def listen(self, *keys: Hashable) -> Iterator[Listener]:
        """Subscribe before reading, so a ring between the read and the wait is not lost."""
        listener = Listener()
        with self._lock:
            for key in keys:
                self._listeners.setdefault(key, set()).add(listener)
        try:
            yield listener
        finally:
            with self._lock:
                for key in keys:
                    listeners = self._listeners.get(key)
                    if listeners is not None:
                        listeners.discard(listener)
                        if not listeners:
                            del self._listeners[key]

    def ring(self, key: Hashable) -> None:
        with self._lock:
            listeners = list(self._listeners.get(key, ()))
        for listener in listeners:
            listener.ring(key)

    def listening(self, key: Hashable) -> int:
        """How many waiters listen on ``key`` now."""
        with self._lock:
            return len(self._listeners.get(key, ()))


bell = Bell()
"""The process's bell (the API's routes listen, its services ring)."""


def config_key(job_id: int) -> tuple[str, int]:
    return ("config", job_id)


def metrics_key(job_id: int) -> tuple[str, int]:
    return ("metrics", job_id)


TOKENS_KEY = ("tokens",)
"""Rung when this process revokes login tokens (a logout, a password change, a
deactivation): live streams check theirs at once."""

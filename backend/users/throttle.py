"""Throttles: a sliding window of events per key, on an injected clock.

A key that has recorded ``limit`` events within the last ``window_s`` seconds is blocked
until its oldest counted event leaves the window; the caller answers 429 with that wait
as ``Retry-After``. Logins record their failures (a key is a username, or a client
address): only failures count, so a user who types the password right is never slowed
down by their own successes. Attempts still being checked count too (as *pending*):
otherwise a burst of 300 parallel guesses would all pass the check before the first of
them failed. Previews of a live change record each one started, per user
(``backend.tuning.previews``).

Invariants: a key holds at most ``limit`` event times, all within ``window_s`` of the
newest reading of the clock; at most ``max_keys`` keys are tracked (the oldest is
forgotten first), so a spray of random usernames cannot grow memory without bound.
Not thread-safe: the API calls it from the event loop only.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Literal

Clock = Callable[[], float]
"""Seconds on a monotonic scale (``time.monotonic``); tests pass a hand-moved clock."""

Outcome = Literal["wrong", "right", "undecided"]

PENDING_RETRY_S = 1.0
"""Wait suggested to a key blocked only by attempts still in progress (a hash takes well
under a second, after which they are failures or successes)."""


def whole_seconds(wait_s: float) -> int:
    """A wait as ``Retry-After`` gives it: whole seconds, rounded up but not past float
    noise (a wait of 60.000000001 s is 60, not 61); 0 = go ahead."""
    return 0 if wait_s <= 0 else max(1, math.ceil(wait_s - 1e-6))


class SlidingWindow:
    """Events per key in a sliding window of ``window_s`` seconds."""

    def __init__(
        self,
        limit: int,
        window_s: float,
        clock: Clock = time.monotonic,
        max_keys: int = 10_000,
    ) -> None:
        if limit < 1:
            raise ValueError(f"limit={limit} is invalid: at least one event must be allowed")
        if not window_s > 0:
            raise ValueError(f"window_s={window_s} is invalid: the window must be positive")
        self.limit = limit
        self.window_s = window_s
        self.max_keys = max_keys
        self._clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._pending: dict[str, int] = {}

    def retry_after_s(self, key: str) -> float:
        """Seconds until ``key`` may try again; 0 when it is not blocked."""
        now = self._clock()
        times = self._current(key, now)
        events = 0 if times is None else len(times)
        if events + self._pending.get(key, 0) < self.limit:
            return 0.0
        if times is not None and events >= self.limit:
            return times[0] + self.window_s - now
        return PENDING_RETRY_S

    def start(self, key: str) -> None:
        """An attempt for ``key`` is being checked; ``finish`` must follow."""
        self._pending[key] = self._pending.get(key, 0) + 1

    def finish(self, key: str) -> None:
        left = self._pending.pop(key, 0) - 1
        if left > 0:
            self._pending[key] = left

    def record(self, key: str) -> None:
        now = self._clock()
        times = self._current(key, now)
        if times is None:
            self._make_room(now)
            times = self._events[key] = deque(maxlen=self.limit)
        times.append(now)

    def forget(self, key: str) -> None:
        self._events.pop(key, None)

    def __len__(self) -> int:
        return len(self._events)

    def _current(self, key: str, now: float) -> deque[float] | None:
        """The key's events still inside the window (expired ones dropped)."""
        times = self._events.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._events[key]
            return None
        return times

    def _make_room(self, now: float) -> None:
        if len(self._events) < self.max_keys:
            return
        for key in [k for k, times in self._events.items() if times[-1] <= now - self.window_s]:
            del self._events[key]
        while len(self._events) >= self.max_keys:
            self._events.popitem(last=False)


class LoginThrottle:
    """Failed logins counted per username and per client address.

    A username is blocked after ``per_user`` failures from any clients (distributed
    guessing of one account); a client after ``per_client`` failures for any usernames
    (one client spraying many accounts). Unknown usernames count like known ones, so a
    429 says nothing about whether an account exists. A success clears its username's
    failures but never the client's: otherwise one valid account would reset an
    attacker's counter between guesses.
    """

    def __init__(
        self, per_user: int, per_client: int, window_s: float, clock: Clock = time.monotonic
    ) -> None:
        self.users = SlidingWindow(per_user, window_s, clock)
        self.clients = SlidingWindow(per_client, window_s, clock)

    def retry_after_s(self, username: str, client: str) -> int:
        """Whole seconds to wait before ``username`` may try from ``client``; 0 = go ahead."""
        return whole_seconds(
            max(self.users.retry_after_s(username), self.clients.retry_after_s(client))
        )

    def start(self, username: str, client: str) -> None:
        """An attempt passed ``retry_after_s`` and is being checked."""
        self.users.start(username)
        self.clients.start(client)

    def finish(self, username: str, client: str, outcome: Outcome) -> None:
        """The attempt is decided: ``wrong`` credentials count as a failure, ``right``
        ones clear the username's failures, ``undecided`` (the check itself broke, e.g.
        the database was unreachable) counts as nothing."""
        self.users.finish(username)
        self.clients.finish(client)
        if outcome == "wrong":
            self.users.record(username)
            self.clients.record(client)
        elif outcome == "right":
            self.users.forget(username)

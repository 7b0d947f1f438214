"""Previews of a live change, bounded and off the API's event loop.

A preview replays a job's last minutes through the simulator three times
(``spark_runner.sim.whatif``: a calibration, then the configuration in force and the
change): about half a second of CPU for two classes over two minutes, seconds for
larger jobs. Run in the API process, that CPU held the interpreter
lock, so concurrent previews ran one after another and every other request of the
process (``/health`` too) waited between their slices. So, per API process:

- a replay runs in a worker process of a pool of ``preview_concurrency`` (started by the
  first preview, stopped with the application); the event loop only awaits it;
- at most ``preview_concurrency`` replays run at once; a further preview is refused at
  once with 503 and ``Retry-After`` rather than queued (a queue would hold its requests,
  their connections and database sessions for as long as it grew);
- one user may start ``previews_per_user`` previews per ``preview_window_s``; beyond,
  429 with ``Retry-After`` (a preview refused 429 or 503 does not count, one the replay
  refuses, 422, does).

Under several API processes (``uvicorn --workers N``) each has its own pool and counts:
at most N times each bound. Admission runs on the event loop only (not thread-safe).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from backend.errors import DomainError
from backend.settings import Settings
from backend.users.throttle import Clock, SlidingWindow, whole_seconds
from spark_runner.contract.control import LiveConfig
from spark_runner.sim.whatif import WhatIf, what_if

BUSY_RETRY_S = 2
"""``Retry-After`` of a preview refused because the pool is busy: about one replay."""


class TooManyPreviews(DomainError):
    """429: the user started ``previews_per_user`` previews within the window."""

    status_code = 429

    def __init__(self, limit: int, window_s: float, retry_after_s: int) -> None:
        super().__init__(
            f"previews_per_user={limit} reached: at most {limit} previews per user in "
            f"{window_s:g} s; try again in {retry_after_s} s",
            headers={"Retry-After": str(retry_after_s)},
        )


class PreviewsUnavailable(DomainError):
    """503: no worker process is free for the replay now; ``Retry-After`` says when."""

    status_code = 503

    def __init__(self, reason: str, retry_after_s: int = BUSY_RETRY_S) -> None:
        super().__init__(
            f"{reason}; try again in {retry_after_s} s",
            headers={"Retry-After": str(retry_after_s)},
        )


@dataclass(frozen=True)
class Replay:
    """What a worker process replays: the job's scenario, its newest samples (oldest
    first), and the configuration in force and the proposed one."""

    document: dict[str, Any]
    samples: list[dict[str, Any]]
    current: LiveConfig
    proposed: LiveConfig


class Previews:
    """One API process's previews: the admission bounds and the lazily started pool."""

    def __init__(
        self, concurrency: int, per_user: int, window_s: float, clock: Clock = time.monotonic
    ) -> None:
        self.concurrency = concurrency
        self._running = 0  # admitted and not finished: in a worker process, or about to be
        self._started = SlidingWindow(per_user, window_s, clock)
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings) -> Previews:
        return cls(
            settings.preview_concurrency, settings.previews_per_user, settings.preview_window_s
        )

    async def run(self, username: str, inputs: Callable[[], Replay]) -> WhatIf:
        """Admit a preview of ``username`` (or refuse it: 429, 503), read its ``inputs``
        in a worker thread (they read the database), replay them in a worker process.

        The API's one way to a what-if (``backend.tuning.service.preview``). The worker
        runs ``what_if`` itself, so it imports the simulator and none of the API."""
        self._admit(username)
        try:
            job = await anyio.to_thread.run_sync(inputs)
            pool = self._pool or self._start()
            future = pool.submit(what_if, job.document, job.samples, job.current, job.proposed)
        except BaseException:
            self._finished()
            raise
        # The slot is freed when the replay ends, not when the request does: a request
        # cancelled (its client gone) leaves its replay running in the worker.
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: _call_soon(loop, self._finished))
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as exc:
            self._discard(pool)
            raise PreviewsUnavailable("the worker process of this preview ended") from exc

    def close(self) -> None:
        """Stop the worker processes (waits for running replays; blocks); no pool starts
        after this."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _admit(self, username: str) -> None:
        wait_s = whole_seconds(self._started.retry_after_s(username))
        if wait_s:
            raise TooManyPreviews(self._started.limit, self._started.window_s, wait_s)
        if self._running >= self.concurrency:
            raise PreviewsUnavailable(
                f"preview_concurrency={self.concurrency} previews are running, the most "
                "this API process runs at once"
            )
        self._started.record(username)
        self._running += 1

    def _finished(self) -> None:
        self._running -= 1

    def _start(self) -> ProcessPoolExecutor:
        if self._closed:
            raise PreviewsUnavailable("this API process is stopping")
        # Forked from multiprocessing's fork server, a process of its own (started once,
        # with the simulator imported; it ends with this process): a worker starts in
        # milliseconds, and no worker is forked from this process and its threads.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([what_if.__module__])
        self._pool = ProcessPoolExecutor(max_workers=self.concurrency, mp_context=context)
        return self._pool

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        """A worker died (e.g. killed for its memory): the next preview starts a new pool."""
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    """``callback`` on ``loop`` from a pool's thread (nothing left to do once it closed)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback)

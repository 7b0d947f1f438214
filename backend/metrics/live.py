"""What live readers of metrics (event streams, ``wait_s`` long polls) cost one API
process, and how they learn of news.

- :class:`StreamSlots` caps open streams per user and in total (429 beyond).
- :class:`MetricStream` is one client's event stream: it reads only when its job has
  news, and ends with its job or its token.
- :class:`SampleWatch` is the one waiting mechanism of streams and long polls. Samples
  this process stores ring their job's bell key at once
  (``backend.metrics.service.ingest``); for what other API processes store, and for jobs
  that end, the process's waiters share one poll: at most one query every ``poll_s`` for
  all their jobs together, run by whichever waiter finds it due, which rings the keys of
  the jobs with news. An idle reader costs a timer, not a database read per interval.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from backend.bell import TOKENS_KEY, Listener, bell, metrics_key
from backend.errors import DomainError
from backend.jobs.states import TERMINAL, JobStatus
from backend.metrics import service
from backend.metrics.repository import MetricRepository
from backend.settings import Settings
from backend.users import service as users
from spark_runner.contract.samples import MetricSample

ReadSessions = Callable[[], AbstractContextManager[Session]]

STREAM_HEARTBEAT_S = 10.0
"""A stream with nothing to send sends a comment this often (proxies keep it open)."""
STREAM_RETRY_AFTER_S = 10
"""Retry-After of a refused stream: a place frees when a stream closes, which nothing
predicts; a client that waits this long does not spin."""


@contextmanager
def _counted(counter: Counter[int], key: int) -> Iterator[None]:
    """``counter[key]`` one higher while the block runs (the key gone again at zero)."""
    counter[key] += 1
    try:
        yield
    finally:
        counter[key] -= 1
        if not counter[key]:
            del counter[key]


class TooManyStreams(DomainError):
    status_code = 429

    def __init__(self, rule: str) -> None:
        super().__init__(rule, headers={"Retry-After": str(STREAM_RETRY_AFTER_S)})


class StreamSlots:
    """Open metric streams of one API process, per user and in all."""

    def __init__(self, per_user: int, total: int) -> None:
        self.per_user = per_user
        self.total = total
        self._open: Counter[int] = Counter()

    @contextmanager
    def hold(self, user_id: int) -> Iterator[None]:
        """A place for one stream of ``user_id`` while the block runs; ``TooManyStreams``
        when the process or the user has no place left."""
        if self._open.total() >= self.total:
            raise TooManyStreams(
                f"{self.total} metric streams are open on this API process, the most it "
                "serves (HEADROOM_METRICS_STREAMS_TOTAL): try again later"
            )
        if self._open[user_id] >= self.per_user:
            raise TooManyStreams(
                f"this user has {self.per_user} metric streams open, the most one user may "
                "(HEADROOM_METRICS_STREAMS_PER_USER): close one first"
            )
        with _counted(self._open, user_id):
            yield


_TAKE_OVER = ("metrics-poll", "take over")
"""Rung on a waiter when the one that timed the shared poll leaves: it times it next."""


class SampleWatch:
    """The jobs this process's live readers wait on, and the poll they share.

    A poll reads, in one statement, the newest sample id of all jobs and, for each watched
    job, its status and whether it has a sample above the newest id of the previous poll;
    it rings the bell key of each watched job with such a sample or newly ended. The first
    poll after nobody watched has no previous id and rings every watched job (each reader
    reads once more). One waiter at a time times the polls (the others sleep until their
    own deadlines or a ring); when it leaves, it hands that over to another. Lives in the
    event loop's thread; only the query runs in a worker thread.
    """

    def __init__(self, poll_s: float) -> None:
        self.poll_s = poll_s
        self._watched: Counter[int] = Counter()
        self._ended: set[int] = set()
        self._after_id: int | None = None
        self._next_poll_at = 0.0
        self._waiting: set[Listener] = set()
        self._poller: Listener | None = None

    @contextmanager
    def watching(self, job_id: int) -> Iterator[None]:
        """Include ``job_id`` in the polls while the block runs."""
        try:
            with _counted(self._watched, job_id):
                yield
        finally:
            if job_id not in self._watched:
                self._ended.discard(job_id)
            if not self._watched:
                self._after_id = None  # an idle process keeps no stale floor to scan from

    def ended(self, job_id: int) -> bool:
        """Whether a poll has seen ``job_id`` stopped, failed or gone."""
        return job_id in self._ended

    async def wait(
        self, listener: Listener, timeout_s: float, read_sessions: ReadSessions
    ) -> frozenset[Hashable]:
        """Wait up to ``timeout_s`` for a ring of ``listener``'s keys, timing the shared
        poll while no other waiter does; the keys rung (empty after the timeout)."""
        deadline = time.monotonic() + timeout_s
        self._waiting.add(listener)
        try:
            while True:
                until = deadline
                if self._poller in (None, listener):
                    self._poller = listener
                    if time.monotonic() >= self._next_poll_at:
                        await self._poll(read_sessions)
                    until = min(deadline, self._next_poll_at)
                if await listener.wait(until - time.monotonic()):
                    heard = listener.heard - {_TAKE_OVER}
                    if heard:
                        return heard
                elif time.monotonic() >= deadline:
                    return frozenset()
        finally:
            self._waiting.discard(listener)
            if self._poller in (None, listener):  # (None: a take-over it did not act on)
                self._poller = None
                successor = next(iter(self._waiting), None)
                if successor is not None:
                    successor.ring(_TAKE_OVER)

    async def _poll(self, read_sessions: ReadSessions) -> None:
        job_ids = sorted(self._watched)
        after_id = self._after_id
        self._next_poll_at = time.monotonic() + self.poll_s
        if not job_ids:
            return
        newest, jobs = await run_in_threadpool(_read_news, read_sessions, job_ids, after_id)
        if newest is not None:
            self._after_id = max(newest, self._after_id or 0)
        for job_id in job_ids:
            status, news = jobs.get(job_id, (None, None))
            ended = status is None or JobStatus(status) in TERMINAL
            newly_ended = ended and job_id not in self._ended
            if ended:
                self._ended.add(job_id)
            if after_id is None or news is not None or newly_ended:
                bell.ring(metrics_key(job_id))


def _read_news(
    read_sessions: ReadSessions, job_ids: list[int], after_id: int | None
) -> tuple[int | None, dict[int, tuple[str, int | None]]]:
    with read_sessions() as session:
        return MetricRepository(session).news(job_ids, after_id)


@dataclass(frozen=True)
class LiveReaders:
    """One API process's live metric readers: the stream caps, the shared poll, and how
    often a stream checks its token again."""

    slots: StreamSlots
    watch: SampleWatch
    token_recheck_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> LiveReaders:
        return cls(
            StreamSlots(settings.metrics_streams_per_user, settings.metrics_streams_total),
            SampleWatch(settings.metrics_poll_s),
            settings.metrics_token_recheck_s,
        )


@dataclass(frozen=True)
class StreamBatch:
    """One read of a stream: its job's status, then the samples after its cursor."""

    rows: list[tuple[int, str]]  # (sample id, sample as JSON)
    status: str
    ended: bool
    full: bool  # a whole page: more may follow at once


@dataclass
class MetricStream:
    """One client's server-sent events of one job's samples: what it reads, and when it
    waits and checks. Ends (``event: end``) once the job has ended and its last samples
    were sent, or once the client's token no longer authenticates (checked every
    ``token_recheck_s``, and at once when this process revokes tokens)."""

    job_id: int
    cursor: int  # the id of the last sample sent (or the client's resume point)
    token: str
    read_sessions: ReadSessions
    live: LiveReaders
    listener: Listener

    async def read(self) -> StreamBatch:
        def _fetch() -> StreamBatch:
            with self.read_sessions() as session:
                state, rows = service.stream_batch(session, self.job_id, self.cursor)
                return StreamBatch(
                    rows=[(row.id, _sample_json(row)) for row in rows],
                    status=state.value,
                    ended=state in TERMINAL,
                    full=len(rows) >= service.STREAM_PAGE_ROWS,
                )

        return await run_in_threadpool(_fetch)

    async def token_valid(self) -> bool:
        def _check() -> bool:
            with self.read_sessions() as session:
                return users.authenticate(session, self.token) is not None

        return await run_in_threadpool(_check)

    async def events(self, first: StreamBatch) -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        batch: StreamBatch | None = first
        quiet_since = checked_at = time.monotonic()
        while True:
            if batch is not None:
                for row_id, payload in batch.rows:
                    self.cursor = row_id
                    yield f"id: {row_id}\nevent: sample\ndata: {payload}\n\n"
                if batch.rows:
                    quiet_since = time.monotonic()
                if batch.full:
                    batch = await self.read()
                    continue
                if batch.ended:
                    yield _end_event({"status": batch.status})
                    return
            due = min(quiet_since + STREAM_HEARTBEAT_S, checked_at + self.live.token_recheck_s)
            heard = await self.live.watch.wait(
                self.listener, due - time.monotonic(), self.read_sessions
            )
            now = time.monotonic()
            if TOKENS_KEY in heard or now >= checked_at + self.live.token_recheck_s:
                if not await self.token_valid():
                    yield _end_event({"reason": users.REVOKED_TOKEN})
                    return
                checked_at = now
            if now - quiet_since >= STREAM_HEARTBEAT_S:
                quiet_since = now
                yield ": keep-alive\n\n"
            batch = await self.read() if metrics_key(self.job_id) in heard else None


def _sample_json(row: Any) -> str:
    return MetricSample.model_validate(row, from_attributes=True).model_dump_json()


def _end_event(data: dict[str, str]) -> str:
    return f"event: end\ndata: {json.dumps(data)}\n\n"

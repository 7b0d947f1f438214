"""Delivers a job's reports to the control plane from a background thread (no Spark).

Two kinds, one policy: :class:`MetricsReporter` POSTs metric samples as ``MetricBatch``
JSON to ``{api_url}/api/v1/jobs/{job_id}/metrics``; :class:`ActionsReporter` POSTs control
actions as ``ActionBatch`` JSON to ``.../actions``. ``submit`` never blocks on the
network: items go into a bounded buffer (oldest dropped first when full) and a daemon
thread POSTs them.

Delivery policy, by outcome of one POST:

- 2xx: delivered.
- transport error, timeout, 408, 429 or 5xx: transient. The items stay buffered and
  the next attempt waits a capped exponential backoff (or the server's ``Retry-After``,
  capped the same way). The streaming job keeps running meanwhile.
- any other status (4xx, e.g. 401 for a wrong ingest token or 422 for a sample the
  control plane refuses): the batch can never succeed; it is logged and dropped.

Samples carry (class, seq) and actions their seq, so the control plane stores a re-sent
item once: a POST that timed out after the server stored it is safe to repeat.

Time comes from the injected ``clock`` (seconds, monotonic). ``pump`` makes one delivery
decision and returns how long to wait before the next one, so tests drive the reporter
step by step with a fake clock and never sleep; ``start`` runs the same ``pump`` in a
thread for production.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import httpx

from spark_runner.contract.actions import ActionBatch, ControlAction
from spark_runner.contract.samples import MetricBatch, MetricSample

log = logging.getLogger(__name__)

T = TypeVar("T", MetricSample, ControlAction)


def metrics_url(api_url: str, job_id: int) -> str:
    return f"{api_url.rstrip('/')}/api/v1/jobs/{job_id}/metrics"


def actions_url(api_url: str, job_id: int) -> str:
    return f"{api_url.rstrip('/')}/api/v1/jobs/{job_id}/actions"


class _Outcome(enum.Enum):
    DELIVERED = "delivered"
    REJECTED = "rejected"
    RETRY = "retry"


@dataclass(frozen=True)
class ReporterStats:
    """Counts since the reporter was created; ``backlog`` includes a batch in flight."""

    delivered: int
    dropped_overflow: int
    dropped_rejected: int
    backlog: int
    consecutive_failures: int


class Reporter(Generic[T]):
    """Buffers items and POSTs them in order; see the module docstring for the policy."""

    NOUN: ClassVar[str]
    MAX_PER_POST: ClassVar[int]

    def __init__(
        self,
        url: str,
        *,
        buffer_max: int,
        token: str = "",
        batch_max: int = 1_000,
        timeout_s: float = 2.0,
        backoff_initial_s: float = 0.5,
        backoff_max_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if buffer_max <= 0:
            raise ValueError(f"buffer_max is {buffer_max}; it must be > 0")
        if not 0 < batch_max <= self.MAX_PER_POST:
            raise ValueError(f"batch_max is {batch_max}; it must be in 1..{self.MAX_PER_POST}")
        if not 0 < backoff_initial_s <= backoff_max_s:
            raise ValueError(
                f"backoff_initial_s ({backoff_initial_s}) must be > 0 and "
                f"<= backoff_max_s ({backoff_max_s})"
            )
        self.url = url
        self._buffer_max = buffer_max
        self._batch_max = batch_max
        self._backoff_initial_s = backoff_initial_s
        self._backoff_max_s = backoff_max_s
        self._clock = clock
        self._timeout_s = timeout_s
        # The job's per-launch ingest token; the control plane answers 401 without it.
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)

        self._cond = threading.Condition()
        self._buffer: deque[T] = deque()
        self._in_flight: list[T] = []
        self._next_attempt_at = float("-inf")
        self._failures = 0
        self._delivered = 0
        self._dropped_overflow = 0
        self._dropped_rejected = 0
        self._dropping = False  # overflow since the last delivery, logged once per episode
        self._closing = False
        self._close_deadline = float("inf")
        self._thread: threading.Thread | None = None

    # -- producer side ---------------------------------------------------------------

    def submit(self, items: Iterable[T]) -> None:
        """Queue items for delivery; never blocks on the network."""
        with self._cond:
            self._buffer.extend(items)
            self._trim_overflow()
            self._cond.notify_all()

    def stats(self) -> ReporterStats:
        with self._cond:
            return ReporterStats(
                delivered=self._delivered,
                dropped_overflow=self._dropped_overflow,
                dropped_rejected=self._dropped_rejected,
                backlog=len(self._buffer) + len(self._in_flight),
                consecutive_failures=self._failures,
            )

    # -- delivery --------------------------------------------------------------------

    def pump(self) -> float | None:
        """Make one delivery attempt if one is due.

        Returns the seconds to wait before calling again: 0.0 if more items can go now,
        the remaining backoff if an attempt is not due yet, None if nothing is buffered.
        """
        with self._cond:
            if not self._buffer:
                return None
            now = self._clock()
            if now < self._next_attempt_at:
                return self._next_attempt_at - now
            n = min(self._batch_max, len(self._buffer))
            self._in_flight = [self._buffer.popleft() for _ in range(n)]
            batch = self._in_flight

        outcome, detail, retry_after_s = self._post(batch)

        with self._cond:
            self._in_flight = []
            if outcome is _Outcome.RETRY:
                self._buffer.extendleft(reversed(batch))
                self._trim_overflow()
                self._failures += 1
                delay_s = self._backoff_s(retry_after_s)
                self._next_attempt_at = self._clock() + delay_s
                log.warning(
                    "delivery to %s failed (%s); %d %s buffered, %d dropped so far; "
                    "retrying in %.1f s",
                    self.url,
                    detail,
                    len(self._buffer),
                    self.NOUN,
                    self._dropped_overflow,
                    delay_s,
                )
                return delay_s
            if outcome is _Outcome.DELIVERED:
                if self._failures:
                    log.info(
                        "delivery recovered after %d failed attempts; %d %s buffered",
                        self._failures,
                        len(self._buffer),
                        self.NOUN,
                    )
                self._delivered += len(batch)
                self._dropping = False
            else:
                self._dropped_rejected += len(batch)
                log.error(
                    "control plane rejected %d %s (%s); dropped, they cannot succeed",
                    len(batch),
                    self.NOUN,
                    detail,
                )
            self._failures = 0
            self._next_attempt_at = float("-inf")
            return 0.0 if self._buffer else None

    def _body(self, batch: list[T]) -> str:
        raise NotImplementedError

    def _post(self, batch: list[T]) -> tuple[_Outcome, str, float | None]:
        body = self._body(batch)
        try:
            response = self._client.post(
                self.url, content=body, headers={"Content-Type": "application/json"}
            )
        except httpx.HTTPError as exc:
            return _Outcome.RETRY, f"{type(exc).__name__}: {exc}", None
        status = response.status_code
        if 200 <= status < 300:
            return _Outcome.DELIVERED, str(status), None
        detail = f"HTTP {status}: {response.text[:200]}"
        if status in (408, 429) or status >= 500:
            return _Outcome.RETRY, detail, _retry_after_s(response)
        return _Outcome.REJECTED, detail, None

    def _backoff_s(self, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self._backoff_max_s)
        exponent = min(self._failures - 1, 30)
        return min(self._backoff_initial_s * 2.0**exponent, self._backoff_max_s)

    def _trim_overflow(self) -> None:
        # The batch in flight counts against the bound but cannot be dropped mid-POST.
        dropped = 0
        while self._buffer and len(self._buffer) + len(self._in_flight) > self._buffer_max:
            self._buffer.popleft()
            dropped += 1
        if dropped:
            self._dropped_overflow += dropped
            if not self._dropping:
                log.warning("%s buffer full (%d); dropping the oldest", self.NOUN, self._buffer_max)
                self._dropping = True

    # -- thread ----------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("reporter already started")
        self._thread = threading.Thread(target=self._run, name=f"{self.NOUN}-reporter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                delay_s = self.pump()
            except Exception:
                # A bug here must not kill delivery for the rest of the job.
                log.exception("%s reporter failed; retrying", self.NOUN)
                delay_s = self._backoff_max_s
            with self._cond:
                if self._closing:
                    remaining_s = self._close_deadline - self._clock()
                    if not self._buffer or remaining_s <= 0:
                        return
                    delay_s = remaining_s if delay_s is None else min(delay_s, remaining_s)
                if delay_s is None:
                    self._cond.wait()
                elif delay_s > 0:
                    self._cond.wait(delay_s)

    def close(self, timeout_s: float) -> int:
        """Deliver what can be delivered within ``timeout_s``; returns items left behind.

        A pending backoff is cut short so that one more attempt is made.
        """
        with self._cond:
            self._closing = True
            self._close_deadline = self._clock() + timeout_s
            self._next_attempt_at = float("-inf")
            self._cond.notify_all()
        if self._thread is not None:
            # One POST may already be in flight when the deadline passes.
            self._thread.join(timeout_s + self._timeout_s + 1.0)
        else:
            while self.pump() == 0.0 and self._clock() < self._close_deadline:
                pass
        left = self.stats().backlog
        if left:
            log.warning("reporter closed with %d undelivered %s", left, self.NOUN)
        self._client.close()
        return left


class MetricsReporter(Reporter[MetricSample]):
    """Metric samples to ``.../metrics``."""

    NOUN = "samples"
    MAX_PER_POST = 10_000  # MetricBatch's limit

    def _body(self, batch: list[MetricSample]) -> str:
        # Fields left at their defaults (the controller's, while there is none) are
        # omitted; the control plane fills them in again when it parses the batch.
        return MetricBatch(samples=batch).model_dump_json(exclude_defaults=True)


class ActionsReporter(Reporter[ControlAction]):
    """Control actions to ``.../actions`` (an action is posted again with its verdict)."""

    NOUN = "actions"
    MAX_PER_POST = 1_000  # ActionBatch's limit

    def _body(self, batch: list[ControlAction]) -> str:
        return ActionBatch(actions=batch).model_dump_json(exclude_none=True)


def _retry_after_s(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None  # an HTTP date; the exponential backoff is good enough

"""Stopping the job in order: signals set a flag, batches drain, then Spark stops (no Spark).

Stopping a streaming query while ``foreachBatch`` runs interrupts the batch inside a
py4j callback; Spark 4.3 then matches the callback's long error text against a
backtracking regex and the stream thread dies of ``StackOverflowError``. Stopping it
while Spark plans a batch makes Spark's own Python helpers print tracebacks. So the job
first holds its source (``EngineRun.hold``: Spark plans no batch after the one in
progress), then stops the query in a quiet moment (see ``main``), and closes the
``BatchGate`` in that moment so that a batch that would still slip in fails cleanly (and
is replayed later) instead of being interrupted.
"""

from __future__ import annotations

import enum
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


class GateClosedError(RuntimeError):
    """Raised into a micro-batch that starts after the job began to stop.

    The batch fails instead of committing, so its tuples are replayed (and its samples
    sent) by the next run from the same checkpoint; none are silently skipped.
    """


class BatchGate:
    """Counts micro-batches in progress and refuses new ones once closed."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open = True
        self._in_progress = 0
        self._completed = 0

    @contextmanager
    def batch(self) -> Iterator[None]:
        with self._cond:
            if not self._open:
                raise GateClosedError("the job is stopping; this micro-batch will be replayed")
            self._in_progress += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_progress -= 1
                self._completed += 1
                self._cond.notify_all()

    @property
    def completed(self) -> int:
        """Batches that have left the gate, successfully or not."""
        with self._cond:
            return self._completed

    def close_if_idle(self) -> bool:
        """Close the gate if no batch is inside it; True if it is closed now."""
        with self._cond:
            if self._in_progress == 0:
                self._open = False
            return not self._open

    def close(self, timeout_s: float) -> bool:
        """Refuse new batches and wait for running ones; False if one is still running."""
        with self._cond:
            self._open = False
            return self._cond.wait_for(lambda: self._in_progress == 0, timeout=timeout_s)


class StopMoment(enum.Enum):
    """Which moment ``close_gate_when_quiet`` found to stop the query."""

    BETWEEN_TRIGGERS = "between triggers, last batch committed and reported"
    AFTER_BATCH = "right after a batch's foreachBatch"
    TIMED_OUT = "timed out waiting for a batch to end"


def close_gate_when_quiet(
    gate: BatchGate,
    *,
    trigger_active: Callable[[], bool],
    unreported_batches: Callable[[], list[int]],
    quiet_wait_s: float,
    timeout_s: float,
    poll_s: float = 0.01,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> StopMoment:
    """Close the gate at the best moment to stop the query, and say which one it was.

    Best: no trigger running and every batch reported (so the last one is committed).
    A query that has fallen behind runs batches back to back and may never be between
    triggers; after ``quiet_wait_s`` the gate closes as soon as a ``foreachBatch`` that
    was running or started after the call has ended (that batch's commit may then be
    interrupted and replayed by a later run). After ``timeout_s`` it closes whatever
    runs.
    """
    started = clock()
    completed_before = gate.completed
    while True:
        elapsed_s = clock() - started
        if not trigger_active() and not unreported_batches() and gate.close_if_idle():
            return StopMoment.BETWEEN_TRIGGERS
        if elapsed_s >= quiet_wait_s and gate.completed > completed_before and gate.close_if_idle():
            return StopMoment.AFTER_BATCH
        if elapsed_s >= timeout_s:
            gate.close(timeout_s=0)
            return StopMoment.TIMED_OUT
        sleep(poll_s)


class StopSignal:
    """SIGTERM/SIGINT set a flag the main loop polls; the handler does nothing else."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name: str | None = None
        self._previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name
        self.event.set()

    def install(self) -> None:
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

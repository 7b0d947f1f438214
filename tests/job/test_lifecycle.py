"""Stop ordering primitives (no Spark)."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

import pytest

from spark_runner.job.lifecycle import (
    BatchGate,
    GateClosedError,
    StopMoment,
    StopSignal,
    close_gate_when_quiet,
)
from spark_runner.job.main import TriggerEnds, expected_cancellation, retried_gateway_command


def test_gate_waits_for_the_running_batch_then_refuses_new_ones() -> None:
    gate = BatchGate()
    inside = threading.Event()
    release = threading.Event()

    def batch() -> None:
        with gate.batch():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=batch)
    worker.start()
    assert inside.wait(5)

    assert gate.close(timeout_s=0.01) is False  # still running
    threading.Timer(0.05, release.set).start()
    assert gate.close(timeout_s=5) is True
    worker.join()

    with pytest.raises(GateClosedError), gate.batch():
        pass


def test_gate_that_never_ran_a_batch_closes_at_once() -> None:
    assert BatchGate().close(timeout_s=0) is True


def test_close_if_idle_only_closes_between_batches() -> None:
    gate = BatchGate()
    with gate.batch():
        assert gate.close_if_idle() is False
    with gate.batch():  # still open: the attempt above changed nothing
        pass
    assert gate.close_if_idle() is True
    with pytest.raises(GateClosedError), gate.batch():
        pass


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_sets_the_flag_and_restores_handlers(sig: signal.Signals) -> None:
    before = signal.getsignal(sig)
    stop = StopSignal()
    stop.install()
    try:
        os.kill(os.getpid(), sig)
        assert stop.event.wait(5)
        assert stop.signal_name == sig.name
    finally:
        stop.restore()
    assert signal.getsignal(sig) is before


class Scripted:
    """A fake query over simulated time: each poll (sleep) advances the clock and may
    run a scripted event, such as a batch entering or leaving the gate."""

    def __init__(self, gate: BatchGate, events: dict[float, str]) -> None:
        self.gate = gate
        self.now = 0.0
        self.events = dict(events)
        self.trigger = False
        self.unreported: list[int] = []
        self._batch: object = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 6)
        for at in sorted(t for t in self.events if t <= self.now):
            getattr(self, self.events.pop(at))()

    def trigger_starts(self) -> None:
        self.trigger = True

    def batch_enters(self) -> None:
        self._batch = self.gate.batch()
        self._batch.__enter__()
        self.unreported.append(len(self.unreported))

    def batch_leaves(self) -> None:
        self._batch.__exit__(None, None, None)  # type: ignore[attr-defined]

    def progress_arrives(self) -> None:
        self.unreported.clear()
        self.trigger = False

    def close(self, quiet_wait_s: float = 3.0, timeout_s: float = 20.0) -> StopMoment:
        return close_gate_when_quiet(
            self.gate,
            trigger_active=lambda: self.trigger,
            unreported_batches=lambda: list(self.unreported),
            quiet_wait_s=quiet_wait_s,
            timeout_s=timeout_s,
            clock=self.clock,
            sleep=self.sleep,
        )


def test_idle_query_stops_at_once() -> None:
    query = Scripted(BatchGate(), {})
    assert query.close() is StopMoment.BETWEEN_TRIGGERS
    assert query.now == 0.0


def test_waits_for_the_running_batch_to_be_committed_and_reported() -> None:
    gate = BatchGate()
    query = Scripted(gate, {0.5: "batch_leaves", 0.6: "progress_arrives"})
    query.trigger_starts()
    query.batch_enters()
    assert query.close() is StopMoment.BETWEEN_TRIGGERS
    assert query.now == pytest.approx(0.6)
    with pytest.raises(GateClosedError), gate.batch():
        pass


def test_a_query_behind_schedule_stops_right_after_a_batch() -> None:
    # Batches back to back: the trigger never goes idle.
    events = {}
    for k in range(10):
        events[k + 0.9] = "batch_leaves"
        events[k + 1.0] = "batch_enters"
    gate = BatchGate()
    query = Scripted(gate, events)
    query.trigger_starts()
    query.batch_enters()
    assert query.close(quiet_wait_s=3.0) is StopMoment.AFTER_BATCH
    assert query.now == pytest.approx(3.9)  # the first batch end after quiet_wait_s


def test_a_batch_that_never_ends_is_interrupted_at_the_timeout() -> None:
    query = Scripted(BatchGate(), {})
    query.trigger_starts()
    query.batch_enters()
    assert query.close(timeout_s=20.0) is StopMoment.TIMED_OUT
    assert query.now == pytest.approx(20.0)


def test_the_expected_cancellation_is_not_logged_as_an_error_but_others_are() -> None:
    """py4j logs an exception raised in a Python callback at ERROR with its traceback. A
    GateClosedError (a batch that started while the job stops, replayed by the next run)
    is expected and logged by the job itself; any other exception still shows."""

    def record(error: Exception) -> logging.LogRecord:
        try:
            raise error
        except Exception:
            exc_info = sys.exc_info()
        return logging.LogRecord(
            "py4j.clientserver", logging.ERROR, __file__, 1, "callback failed", (), exc_info
        )

    assert not expected_cancellation(record(GateClosedError("the job is stopping")))
    assert expected_cancellation(record(RuntimeError("a real failure")))
    plain = logging.LogRecord("py4j.clientserver", logging.ERROR, __file__, 1, "x", (), None)
    assert expected_cancellation(plain)


def test_a_command_py4j_sends_again_is_logged_as_one_line_without_a_traceback() -> None:
    """At stop, py4j may find a pooled connection closed by the JVM; it logs that at INFO
    on the root logger with a traceback and sends the command again. The job keeps one
    line; the same message at another level, or another message, is left as it is."""
    try:
        raise ConnectionError("Answer from Java side is empty\nmore")
    except ConnectionError:
        exc_info = sys.exc_info()
    retried = logging.LogRecord(
        "root", logging.INFO, __file__, 1, "Exception while sending command.", (), exc_info
    )
    assert retried_gateway_command(retried)
    assert retried.exc_info is None
    assert retried.getMessage() == (
        "py4j sent a command again on a new connection: Answer from Java side is empty"
    )
    failed = logging.LogRecord(
        "root", logging.ERROR, __file__, 1, "Exception while sending command.", (), exc_info
    )
    assert retried_gateway_command(failed) and failed.exc_info is exc_info


def test_a_stop_waits_for_the_end_of_a_trigger_not_any_quiet_moment() -> None:
    """The trigger polls the sources every tick: quiet is reported only right after a
    trigger ended (seen busy, then not), or after a second of quiet when none was seen."""
    now = [0.0]
    states = iter([False, False, True, True, False, False])
    busy = TriggerEnds(lambda: next(states), fallback_s=1.0, clock=lambda: now[0])
    assert [busy() for _ in range(5)] == [True, True, True, True, False]
    assert busy() is True  # quiet again, but not the end of a trigger
    never = TriggerEnds(lambda: False, fallback_s=1.0, clock=lambda: now[0])
    assert never() is True
    now[0] = 1.0
    assert never() is False  # no trigger seen for a second: any quiet moment

"""The metrics reporter against a real local HTTP server, driven by a fake clock.

``pump()`` is one delivery decision, so these tests step the reporter by hand and move
the clock themselves: nothing here sleeps, except the two tests of the real thread,
which wait on events with a deadline.
"""

from __future__ import annotations

import logging

import pytest

from spark_runner.contract.actions import ActionBatch, ControlAction, Verdict
from spark_runner.contract.samples import MetricBatch, MetricSample
from spark_runner.job.reporter import ActionsReporter, MetricsReporter, actions_url, metrics_url

from .capture import CaptureServer


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sample(seq: int, class_name: str = "gold") -> MetricSample:
    return MetricSample(
        class_name=class_name,
        seq=seq,
        t=1_763_700_000.0 + seq,
        period_s=1.0,
        arrived_count=10,
        output_count=5,
        arrival_rate=10.0,
        response_time_mean_s=0.4,
        response_time_max_s=0.9,
    )


def seqs(samples: list[dict[str, object]]) -> list[object]:
    return [s["seq"] for s in samples]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_reporter(server: CaptureServer, clock: FakeClock, **kwargs: object) -> MetricsReporter:
    options: dict[str, object] = {"buffer_max": 100, "backoff_initial_s": 1.0, "backoff_max_s": 8.0}
    options.update(kwargs)
    return MetricsReporter(metrics_url(server.base_url, 42), clock=clock, **options)  # type: ignore[arg-type]


def test_metrics_url_joins_base_and_job() -> None:
    assert metrics_url("http://h:8000/", 7) == "http://h:8000/api/v1/jobs/7/metrics"
    assert metrics_url("http://h:8000", 7) == "http://h:8000/api/v1/jobs/7/metrics"


def test_delivers_a_metric_batch_in_order(capture_server: CaptureServer, clock: FakeClock) -> None:
    reporter = make_reporter(capture_server, clock)
    reporter.submit([sample(0), sample(0, "bronze"), sample(1)])

    assert reporter.pump() is None  # all sent, nothing left

    [request] = capture_server.requests
    assert request["path"] == "/api/v1/jobs/42/metrics"
    assert request["content_type"] == "application/json"
    assert MetricBatch.model_validate(request["body"]).samples[1] == sample(0, "bronze")
    assert seqs(capture_server.accepted_samples()) == [0, 0, 1]
    assert reporter.stats().delivered == 3
    assert reporter.stats().backlog == 0
    reporter.close(1.0)


def test_actions_go_to_their_own_endpoint_as_an_action_batch(
    capture_server: CaptureServer, clock: FakeClock
) -> None:
    """The same delivery policy for control actions: an action posted when taken and
    again with its verdict goes out twice, in order (the control plane keeps the last)."""
    taken = ControlAction(
        seq=0, at_s=1_763_700_000.0, kind="scale_in", usage=0.1, shed_before=0, shed_after=0
    )
    verdict = Verdict(
        outcome="unchanged",
        periods=5,
        violation_before_s=0,
        violation_after_s=0,
        loss_before=0,
        loss_after=0,
    )
    judged = taken.model_copy(update={"verdict": verdict})
    reporter = ActionsReporter(
        actions_url(capture_server.base_url, 42), buffer_max=10, clock=clock, token="t"
    )
    reporter.submit([taken, judged])
    assert reporter.pump() is None
    [request] = capture_server.requests
    assert request["path"] == "/api/v1/jobs/42/actions"
    assert ActionBatch.model_validate(request["body"]).actions == [taken, judged]
    with pytest.raises(ValueError, match=r"1\.\.1000"):
        ActionsReporter(actions_url(capture_server.base_url, 42), buffer_max=10, batch_max=1001)
    reporter.close(1.0)


def test_sends_the_ingest_token_when_it_has_one(
    capture_server: CaptureServer, clock: FakeClock
) -> None:
    with_token = make_reporter(capture_server, clock, token="s3cret")
    with_token.submit([sample(0)])
    with_token.pump()
    without = make_reporter(capture_server, clock)
    without.submit([sample(1)])
    without.pump()

    assert [r["authorization"] for r in capture_server.requests] == ["Bearer s3cret", None]
    with_token.close(1.0)
    without.close(1.0)


def test_nothing_to_send_means_no_request(capture_server: CaptureServer, clock: FakeClock) -> None:
    reporter = make_reporter(capture_server, clock)
    assert reporter.pump() is None
    assert capture_server.request_count() == 0
    reporter.close(1.0)


def test_splits_large_backlogs_into_batches(
    capture_server: CaptureServer, clock: FakeClock
) -> None:
    reporter = make_reporter(capture_server, clock, batch_max=10)
    reporter.submit(sample(i) for i in range(25))

    assert reporter.pump() == 0.0
    assert reporter.pump() == 0.0
    assert reporter.pump() is None

    assert [len(r["body"]["samples"]) for r in capture_server.requests] == [10, 10, 5]
    assert seqs(capture_server.accepted_samples()) == list(range(25))
    reporter.close(1.0)


def test_buffers_while_down_and_delivers_everything_after_recovery(
    capture_server: CaptureServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = make_reporter(capture_server, clock)
    capture_server.stop()  # connection refused from now on
    reporter.submit([sample(0), sample(1)])

    with caplog.at_level(logging.WARNING, logger="spark_runner.job.reporter"):
        assert reporter.pump() == 1.0
    assert "2 samples buffered" in caplog.text
    assert reporter.stats().backlog == 2
    assert reporter.stats().consecutive_failures == 1

    # Not due yet: no attempt, only the remaining wait.
    clock.now += 0.4
    assert reporter.pump() == pytest.approx(0.6)

    # Still down: the backoff doubles up to its cap, samples keep arriving.
    delays = []
    for seq in range(2, 7):
        clock.now += 100
        reporter.submit([sample(seq)])
        delays.append(reporter.pump())
    assert delays == [2.0, 4.0, 8.0, 8.0, 8.0]
    assert reporter.stats().backlog == 7

    capture_server.start()  # same port
    clock.now += 8.0
    assert reporter.pump() is None

    assert seqs(capture_server.accepted_samples()) == list(range(7))
    stats = reporter.stats()
    assert (stats.delivered, stats.backlog, stats.consecutive_failures) == (7, 0, 0)
    reporter.close(1.0)


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408, 429])
def test_transient_statuses_are_retried_without_loss(
    capture_server: CaptureServer, clock: FakeClock, status: int
) -> None:
    reporter = make_reporter(capture_server, clock)
    capture_server.status = status
    reporter.submit([sample(0), sample(1)])

    assert reporter.pump() == 1.0
    assert reporter.stats().backlog == 2

    capture_server.status = 202
    clock.now += 1.0
    assert reporter.pump() is None
    assert seqs(capture_server.accepted_samples()) == [0, 1]
    reporter.close(1.0)


def test_retry_after_is_honoured_up_to_the_cap(
    capture_server: CaptureServer, clock: FakeClock
) -> None:
    reporter = make_reporter(capture_server, clock)
    capture_server.status = 429
    capture_server.retry_after = "3"
    reporter.submit([sample(0)])
    assert reporter.pump() == 3.0

    capture_server.retry_after = "3600"
    clock.now += 3.0
    assert reporter.pump() == 8.0
    reporter.close(0.0)


def test_bounded_buffer_drops_the_oldest(
    capture_server: CaptureServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = make_reporter(capture_server, clock, buffer_max=5)
    capture_server.stop()
    with caplog.at_level(logging.WARNING, logger="spark_runner.job.reporter"):
        reporter.submit(sample(i) for i in range(4))
        reporter.pump()  # fails; the 4 samples go back to the buffer
        reporter.submit(sample(i) for i in range(4, 8))

    stats = reporter.stats()
    assert (stats.backlog, stats.dropped_overflow) == (5, 3)
    assert caplog.text.count("dropping the oldest") == 1  # once per episode, not per sample

    capture_server.start()
    clock.now += 100
    assert reporter.pump() is None
    assert seqs(capture_server.accepted_samples()) == [3, 4, 5, 6, 7]
    reporter.close(1.0)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_drop_the_batch_and_delivery_goes_on(
    capture_server: CaptureServer,
    clock: FakeClock,
    caplog: pytest.LogCaptureFixture,
    status: int,
) -> None:
    reporter = make_reporter(capture_server, clock, batch_max=2)
    capture_server.status = status
    reporter.submit(sample(i) for i in range(3))

    with caplog.at_level(logging.ERROR, logger="spark_runner.job.reporter"):
        assert reporter.pump() == 0.0  # the rest can go at once: no backoff for a 4xx
    assert f"HTTP {status}" in caplog.text
    assert "test says no" in caplog.text

    capture_server.status = 202
    assert reporter.pump() is None
    assert seqs(capture_server.accepted_samples()) == [2]
    stats = reporter.stats()
    assert (stats.dropped_rejected, stats.delivered, stats.backlog) == (2, 1, 0)
    reporter.close(1.0)


def test_close_without_thread_makes_one_last_attempt(
    capture_server: CaptureServer, clock: FakeClock
) -> None:
    reporter = make_reporter(capture_server, clock)
    capture_server.status = 503
    reporter.submit([sample(0)])
    assert reporter.pump() == 1.0

    capture_server.status = 202
    assert reporter.close(5.0) == 0  # backoff cut short
    assert seqs(capture_server.accepted_samples()) == [0]


def test_close_reports_what_it_could_not_deliver(
    capture_server: CaptureServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    reporter = make_reporter(capture_server, clock)
    capture_server.stop()
    reporter.submit([sample(0), sample(1)])
    with caplog.at_level(logging.WARNING, logger="spark_runner.job.reporter"):
        assert reporter.close(5.0) == 2
    assert "2 undelivered samples" in caplog.text


def test_rejects_settings_that_cannot_work(capture_server: CaptureServer) -> None:
    url = metrics_url(capture_server.base_url, 1)
    with pytest.raises(ValueError, match="buffer_max"):
        MetricsReporter(url, buffer_max=0)
    with pytest.raises(ValueError, match="batch_max"):
        MetricsReporter(url, buffer_max=10, batch_max=10_001)
    with pytest.raises(ValueError, match="backoff_initial_s"):
        MetricsReporter(url, buffer_max=10, backoff_initial_s=5, backoff_max_s=1)


def wait_for(predicate: object, timeout_s: float) -> bool:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_thread_delivers_as_samples_arrive_and_close_flushes(
    capture_server: CaptureServer,
) -> None:
    reporter = MetricsReporter(
        metrics_url(capture_server.base_url, 42), buffer_max=100, backoff_initial_s=0.05
    )
    reporter.start()
    reporter.submit([sample(0)])
    assert wait_for(lambda: len(capture_server.accepted_samples()) == 1, 5.0)

    # Down, then up again while the thread backs off; close() must still get them out.
    capture_server.status = 503
    reporter.submit([sample(1), sample(2)])
    assert wait_for(lambda: capture_server.request_count() >= 3, 5.0)
    capture_server.status = 202
    assert reporter.close(5.0) == 0
    assert seqs(capture_server.accepted_samples()) == [0, 1, 2]


@pytest.mark.timing
def test_thread_close_gives_up_at_its_deadline(capture_server: CaptureServer) -> None:
    import time

    capture_server.stop()
    reporter = MetricsReporter(
        metrics_url(capture_server.base_url, 42), buffer_max=100, backoff_initial_s=0.05
    )
    reporter.start()
    reporter.submit([sample(0)])
    started = time.monotonic()
    assert reporter.close(0.3) == 1
    assert time.monotonic() - started < 2.0

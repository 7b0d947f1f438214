"""``python -m spark_runner.job --config PATH``: run one streaming job until told to stop.

The job reads only its ``JobSnapshot`` file. It runs until SIGTERM/SIGINT or until
``duration_s`` has passed since the query started, then stops after the batch in
progress, delivers the metrics it still holds and stops Spark.

Exit codes (a one-line reason is logged to stderr for every failure):

====  ==========================================================
0     stopped on request or after ``duration_s``
2     bad command line, unreadable or invalid config file
3     Spark failed to start (JVM, master URL, session)
4     the streaming query failed to start or failed while running
====  ==========================================================

Worst-case stop time: ``BATCH_DRAIN_TIMEOUT_S`` + Spark's stop +
``REPORTER_CLOSE_TIMEOUT_S`` (+ the JVM's exit, see ``session``); a launcher should wait
at least 45 s before escalating to SIGKILL.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError
from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from spark_runner.job.config import JobSnapshot
from spark_runner.job.lifecycle import (
    BatchGate,
    GateClosedError,
    StopMoment,
    StopSignal,
    close_gate_when_quiet,
)
from spark_runner.job.metrics import SampleAssembler
from spark_runner.job.query import start_query
from spark_runner.job.reporter import MetricsReporter, metrics_url
from spark_runner.job.session import start_spark
from spark_runner.job.source import now_us

log = logging.getLogger("spark_runner.job")

EXIT_OK = 0
EXIT_BAD_CONFIG = 2
EXIT_SPARK_START_FAILED = 3
EXIT_QUERY_FAILED = 4

POLL_S = 0.2
DRAIN_POLL_S = 0.01
# How long to wait for a moment between triggers before stopping right after a batch.
QUIET_WAIT_S = 3.0
BATCH_DRAIN_TIMEOUT_S = 20.0
PROGRESS_WAIT_S = 1.0
REPORTER_CLOSE_TIMEOUT_S = 5.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_runner.job",
        description="Run a headroom streaming job from its configuration snapshot.",
    )
    parser.add_argument("--config", required=True, type=Path, help="JobSnapshot JSON file")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the job's own log lines on stderr (default INFO)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage line
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_CONFIG
    _configure_logging(args.log_level)

    try:
        snapshot = JobSnapshot.load(args.config)
    except OSError as exc:
        return _fail(EXIT_BAD_CONFIG, f"cannot read config {args.config}: {exc.strerror}")
    except ValidationError as exc:
        return _fail(EXIT_BAD_CONFIG, f"invalid config {args.config}: {_summarize(exc)}")
    return run(snapshot)


def run(snapshot: JobSnapshot) -> int:
    stop = StopSignal()
    stop.install()
    reporter = MetricsReporter(
        metrics_url(snapshot.api_url, snapshot.job_id),
        buffer_max=snapshot.metrics_buffer_max,
        token=snapshot.ingest_token,
    )
    reporter.start()
    try:
        return _run_spark(snapshot, stop, reporter)
    finally:
        reporter.close(REPORTER_CLOSE_TIMEOUT_S)
        s = reporter.stats()
        log.info(
            "metrics: %d samples delivered, %d dropped (buffer full), %d rejected, %d undelivered",
            s.delivered,
            s.dropped_overflow,
            s.dropped_rejected,
            s.backlog,
        )
        stop.restore()


def _run_spark(snapshot: JobSnapshot, stop: StopSignal, reporter: MetricsReporter) -> int:
    log.info(
        "job %d starting: master %s, classes %s, control period %.3f s, duration %s, "
        "checkpoint %s, metrics to %s",
        snapshot.job_id,
        snapshot.spark_master,
        [c.name for c in snapshot.classes],
        snapshot.control_period_s,
        f"{snapshot.duration_s} s" if snapshot.duration_s else "unlimited",
        snapshot.checkpoint_dir,
        reporter.url,
    )
    try:
        handle = start_spark(snapshot)
    except Exception as exc:
        log.error("Spark start-up failed", exc_info=True)
        return _fail(
            EXIT_SPARK_START_FAILED,
            f"Spark failed to start on master {snapshot.spark_master!r}: {_describe(exc)}",
        )
    try:
        if stop.event.is_set():
            log.info("%s received during start-up; not starting the query", stop.signal_name)
            return EXIT_OK
        return _run_query(handle.spark, snapshot, stop, reporter)
    finally:
        handle.stop()
        log.info("Spark stopped")


def _run_query(
    spark: SparkSession, snapshot: JobSnapshot, stop: StopSignal, reporter: MetricsReporter
) -> int:
    gate = BatchGate()
    assembler = SampleAssembler(
        [c.name for c in snapshot.classes], reporter.submit, snapshot.control_period_s
    )
    try:
        query = start_query(spark, snapshot, now_us(), gate, assembler)
    except Exception as exc:
        log.error("streaming query start-up failed", exc_info=True)
        return _fail(EXIT_QUERY_FAILED, f"streaming query failed to start: {_describe(exc)}")
    log.info("query %s started (id %s)", query.name, query.id)

    deadline = time.monotonic() + (snapshot.duration_s or math.inf)
    failure = _supervise(query, stop, deadline)
    if failure is None:
        moment = close_gate_when_quiet(
            gate,
            trigger_active=lambda: bool(query.status["isTriggerActive"]),
            unreported_batches=assembler.pending_batches,
            quiet_wait_s=QUIET_WAIT_S,
            timeout_s=BATCH_DRAIN_TIMEOUT_S,
        )
        if moment is StopMoment.TIMED_OUT:
            log.warning("no batch ended within %.0f s; interrupting", BATCH_DRAIN_TIMEOUT_S)
        else:
            log.info("stopping the query %s", moment.value)
    try:
        query.stop()
    except Exception as exc:
        log.warning("query did not stop cleanly: %s", _first_line(exc))
    # The listener may still be delivering the progress of the last committed batch.
    progress_deadline = time.monotonic() + PROGRESS_WAIT_S
    while assembler.pending_batches() and time.monotonic() < progress_deadline:
        time.sleep(DRAIN_POLL_S)
    error = query.exception()
    if failure is None and error is not None:
        if GateClosedError.__name__ in str(error):
            log.info("a batch that started while stopping was cancelled; it will be replayed")
        else:
            log.warning("query ended with an error while stopping: %s", _first_line(error))
    uncommitted = assembler.discard_pending()
    if uncommitted:
        log.info(
            "batches %s were not committed; a run from the same checkpoint replays them",
            uncommitted,
        )
    if failure is not None:
        return _fail(EXIT_QUERY_FAILED, failure)
    log.info("query stopped")
    return EXIT_OK


def _supervise(query: StreamingQuery, stop: StopSignal, deadline: float) -> str | None:
    """Wait for a stop signal, the deadline or the query's end; returns a failure or None."""
    while True:
        if stop.event.wait(POLL_S):
            log.info("%s received; stopping after the batch in progress", stop.signal_name)
            return None
        if time.monotonic() >= deadline:
            log.info("duration elapsed; stopping after the batch in progress")
            return None
        if not query.isActive:
            error = query.exception()
            if error is None:
                return "streaming query stopped unexpectedly"
            log.error("streaming query failed:\n%s", error)
            return f"streaming query failed: {_describe(error)}"


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # py4j logs every gateway command at DEBUG, httpx every request at INFO.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # PySpark warns at import about pandas 3; the job uses no pandas API.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")


def _fail(code: int, message: str) -> int:
    log.critical("%s (exit %d)", message, code)
    return code


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _describe(exc: BaseException) -> str:
    """One line naming the cause; py4j's own first line only names the Java method."""
    java_exception = getattr(exc, "java_exception", None)
    if java_exception is not None:
        try:
            return _first_line(RuntimeError(str(java_exception.toString())))
        except Exception:  # the JVM may be gone already
            pass
    return _first_line(exc)


def _summarize(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        got = "" if err["type"] == "missing" else f" (got {_clip(repr(err['input']))})"
        parts.append(f"{where}: {err['msg']}{got}")
    return "; ".join(parts)


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

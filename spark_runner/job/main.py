"""``python -m spark_runner.job --config PATH``: run one streaming job until told to stop.

The job reads only its ``JobSnapshot`` file. It runs the snapshot's scenario (or, without
one, a scenario derived from its classes), each class's settings from its ``control``
(``spark_runner.scenario.snapshots``), on the Spark engine (``spark_runner.engine``) with
the QoS controller in the loop, until SIGTERM/SIGINT or until ``duration_s`` has passed
since the query started; then it stops after the batch in progress, writes the results
document (``results_path``), delivers the metrics it still holds and stops Spark.

Exit codes (a one-line reason is logged to stderr for every failure):

====  ==========================================================================
0     stopped on request or after ``duration_s``
2     bad command line, unreadable or invalid config file, or a scenario the
      engine cannot run (the reason names the field and the rule)
3     Spark failed to start (JVM, master URL, session)
4     the streaming query failed to start or failed while running
5     the input source is unavailable (Redis unreachable at start or while running)
6     the output cannot be written (sink directory, sink write, results file)
====  ==========================================================================

Worst-case stop time: ``BATCH_DRAIN_TIMEOUT_S`` + Spark's stop +
``REPORTER_CLOSE_TIMEOUT_S`` (+ the JVM's exit, see ``session``); a launcher should wait
at least 45 s before escalating to SIGKILL.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.snapshot import EXIT_CODE_FILE, JobSnapshot
from spark_runner.core.errors import ParameterError
from spark_runner.engine.dataflow.network import NetworkPlan
from spark_runner.job.lifecycle import (
    BatchGate,
    GateClosedError,
    StopMoment,
    StopSignal,
    close_gate_when_quiet,
)
from spark_runner.job.reporter import (
    ActionsReporter,
    MetricsReporter,
    Reporter,
    actions_url,
    metrics_url,
)
from spark_runner.scenario.errors import ScenarioError

if TYPE_CHECKING:  # the engine imports Spark: only when a job runs
    from spark_runner.engine.runner import RunSettings

log = logging.getLogger("spark_runner.job")

EXIT_OK = 0
EXIT_BAD_CONFIG = 2
EXIT_SPARK_START_FAILED = 3
EXIT_QUERY_FAILED = 4
EXIT_SOURCE_UNAVAILABLE = 5
EXIT_OUTPUT_FAILED = 6

POLL_S = 0.2
# How long to wait for a moment between triggers before stopping right after a batch.
QUIET_WAIT_S = 3.0
RETRIED_COMMAND_MESSAGE = "Exception while sending command."  # py4j, java_gateway.py
BATCH_DRAIN_TIMEOUT_S = 20.0
REPORTER_CLOSE_TIMEOUT_S = 5.0


def main(argv: Sequence[str] | None = None, *, submitted: bool = False) -> int:
    """Run the job of ``--config``; ``submitted``: started by spark-submit, whose JVM it uses
    (see ``spark_runner.job.submit_entry``). Returns the exit code."""
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
    configure_logging(args.log_level)
    code = _load_and_run(args.config, submitted)
    _record_exit_code(args.config, code)
    return code


def _load_and_run(config: Path, submitted: bool) -> int:
    try:
        snapshot = JobSnapshot.load(config)
    except OSError as exc:
        return _fail(EXIT_BAD_CONFIG, f"cannot read config {config}: {exc.strerror}")
    except ValidationError as exc:
        return _fail(EXIT_BAD_CONFIG, f"invalid config {config}: {_summarize(exc)}")
    return run(snapshot, submitted=submitted)


def _record_exit_code(config: Path, code: int) -> None:
    """Write ``code`` to ``EXIT_CODE_FILE`` beside the config (atomically; best effort)."""
    target = config.parent / EXIT_CODE_FILE
    partial = target.with_name(f".{EXIT_CODE_FILE}.partial")
    try:
        partial.write_text(f"{code}\n", encoding="ascii")
        partial.replace(target)
    except OSError as exc:
        log.warning("cannot record the exit code in %s: %s", target, exc.strerror)


@dataclass(frozen=True)
class Prepared:
    """What a snapshot resolves to before Spark starts."""

    plan: NetworkPlan
    live: LiveConfig


def prepare(snapshot: JobSnapshot) -> Prepared:
    """The scenario, its compiled network and the launch configuration of ``snapshot``.

    Raises ``ScenarioError`` or ``ParameterError`` naming what is wrong.
    """
    from spark_runner.engine.dataflow.network import compile_network
    from spark_runner.scenario.loader import scenario_from_dict
    from spark_runner.scenario.snapshots import job_scenario

    source = "snapshot.scenario" if snapshot.scenario is not None else "snapshot.classes"
    # A control-plane job reads trace files from the trace folder only (as the API
    # checked when it stored the scenario); a local run (``headroom run``: no api_url)
    # carries the absolute paths its scenario file's own folder gave them.
    local_paths = None if snapshot.api_url else Path("/")
    scenario = scenario_from_dict(job_scenario(snapshot), base_dir=local_paths, source=source)
    return Prepared(plan=compile_network(scenario), live=snapshot.control)


def run(snapshot: JobSnapshot, *, submitted: bool = False) -> int:
    try:
        prepared = prepare(snapshot)
    except (ScenarioError, ParameterError) as exc:
        return _fail(EXIT_BAD_CONFIG, f"cannot run this job: {_one_line(exc)}")
    engine = snapshot.engine
    for role, uses, code in (
        ("source", engine.source == "redis", EXIT_SOURCE_UNAVAILABLE),
        ("sink", engine.sink == "redis", EXIT_OUTPUT_FAILED),
    ):
        problem = _redis_problem(engine.redis_url, role) if uses else None
        if problem is not None:
            return _fail(code, problem)
    if engine.source == "files" and not Path(engine.files_dir or "/nonexistent").is_dir():
        return _fail(
            EXIT_SOURCE_UNAVAILABLE,
            f"the files source needs engine.files_dir, a directory; got {engine.files_dir!r}",
        )
    stop = StopSignal()
    stop.install()
    reporter: MetricsReporter | None = None
    actions: ActionsReporter | None = None
    if snapshot.api_url:
        reporter = MetricsReporter(
            metrics_url(snapshot.api_url, snapshot.job_id),
            buffer_max=snapshot.metrics_buffer_max,
            token=snapshot.ingest_token,
        )
        actions = ActionsReporter(
            actions_url(snapshot.api_url, snapshot.job_id),
            buffer_max=snapshot.metrics_buffer_max,
            token=snapshot.ingest_token,
        )
        reporter.start()
        actions.start()
    try:
        return _run_spark(snapshot, prepared, stop, reporter, actions, submitted=submitted)
    finally:
        for each in (reporter, actions):
            if each is not None:
                _close(each)
        stop.restore()


def _close(reporter: Reporter[Any]) -> None:
    reporter.close(REPORTER_CLOSE_TIMEOUT_S)
    s = reporter.stats()
    log.info(
        "%s: %d delivered, %d dropped (buffer full), %d rejected, %d undelivered",
        reporter.NOUN,
        s.delivered,
        s.dropped_overflow,
        s.dropped_rejected,
        s.backlog,
    )


def _run_spark(
    snapshot: JobSnapshot,
    prepared: Prepared,
    stop: StopSignal,
    reporter: MetricsReporter | None,
    actions: ActionsReporter | None,
    *,
    submitted: bool,
) -> int:
    from spark_runner.job.session import start_spark

    log.info(
        "job %d starting: master %s, scenario %s (%d classes), control period %.3f s, "
        "duration %s, checkpoint %s, metrics to %s",
        snapshot.job_id,
        snapshot.spark_master,
        prepared.plan.scenario.name,
        len(prepared.plan.class_names),
        snapshot.control_period_s,
        f"{snapshot.duration_s} s" if snapshot.duration_s else "unlimited",
        snapshot.checkpoint_dir,
        reporter.url if reporter is not None else "nowhere (local run)",
    )
    try:
        handle = start_spark(snapshot, submitted=submitted)
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
        return _run_query(handle.spark, snapshot, prepared, stop, reporter, actions)
    finally:
        handle.stop()
        log.info("Spark stopped")


def _run_query(
    spark: Any,
    snapshot: JobSnapshot,
    prepared: Prepared,
    stop: StopSignal,
    reporter: MetricsReporter | None,
    actions: ActionsReporter | None,
) -> int:
    from spark_runner.engine.dataflow.sink import SinkError
    from spark_runner.engine.tiered import JobRuns
    from spark_runner.job.control_client import ControlPoller

    engine = snapshot.engine
    settings = _run_settings(snapshot)
    gate = BatchGate()
    poller: ControlPoller | None = None
    try:
        run = JobRuns(
            prepared.plan,
            settings,
            prepared.live,
            samples=reporter.submit if reporter is not None else None,
            actions=actions.submit if actions is not None else None,
            queries=engine.queries,
        )
    except SinkError as exc:
        return _fail(EXIT_OUTPUT_FAILED, str(exc))
    except ParameterError as exc:
        return _fail(EXIT_BAD_CONFIG, f"launch configuration rejected: {exc}")
    if snapshot.api_url and not engine.plain:
        poller = ControlPoller(
            snapshot.api_url,
            snapshot.job_id,
            run.offer,
            token=snapshot.ingest_token,
            after_version=run.config_version,
        )
        poller.start()
    started = time.monotonic()
    try:
        try:
            queries = run.start(spark, gate.batch)
        except Exception as exc:
            log.error("streaming query start-up failed", exc_info=True)
            return _fail(EXIT_QUERY_FAILED, f"streaming query failed to start: {_describe(exc)}")
        for query in queries:
            log.info("query %s started (id %s)", query.name, query.id)
        deadline = time.monotonic() + (snapshot.duration_s or math.inf)
        failure = _supervise(queries, stop, deadline, run)
        if failure is None:
            _wait_between_triggers(run, queries, gate)
        _quiet_job_group_cancel(spark)
        for query in queries:
            _stop_query(query, failure is None)
        code = EXIT_OK
        if failure is not None:
            code, failure = _classify(run, failure)
        written = _write_results(run, snapshot, time.monotonic() - started)
        _log_summary(run)
        if failure is not None:
            return _fail(code, failure)
        if written is not None:
            return _fail(EXIT_OUTPUT_FAILED, written)
        log.info("query stopped")
        return EXIT_OK
    finally:
        run.stop_threads()
        if poller is not None:
            poller.close()


def _run_settings(snapshot: JobSnapshot) -> RunSettings:
    """The engine's run settings of ``snapshot``'s job."""
    from spark_runner.engine.control.controller import ControllerOptions
    from spark_runner.engine.runner import RunSettings

    engine = snapshot.engine
    return RunSettings(
        name=f"headroom_job_{snapshot.job_id}",
        checkpoint_dir=snapshot.checkpoint_dir,
        period_s=snapshot.control_period_s,
        source=engine.source,
        redis_url=engine.redis_url,
        redis_prefix=engine.redis_prefix,
        files_dir=engine.files_dir,
        sink=engine.sink,
        sink_path=engine.sink_path,
        watermark_s=engine.watermark_s,
        partitions=engine.partitions,
        master_ui_url=engine.master_ui_url,
        burn_repetition_s=engine.burn_repetition_ns * 1e-9 if engine.burn_repetition_ns else None,
        options=ControllerOptions(
            target_utilization=engine.target_utilization,
            warmup_s=engine.warmup_s,
            plain=engine.plain,
            fixed_pace=engine.fixed_pace,
            measured_costs=not engine.declared_costs,
            burn=engine.burn,
        ),
    )


def _wait_between_triggers(run: Any, queries: list[Any], gate: BatchGate) -> None:
    """Hold every query (no batch after the ones in progress) and close the batch gate at
    a moment when none is in a trigger, or after ``BATCH_DRAIN_TIMEOUT_S``."""
    run.hold()
    moment = close_gate_when_quiet(
        gate,
        trigger_active=TriggerEnds(lambda: any(_busy(q.status) for q in queries)),
        unreported_batches=run.unreported_batches,
        quiet_wait_s=QUIET_WAIT_S,
        timeout_s=BATCH_DRAIN_TIMEOUT_S,
        poll_s=TriggerEnds.POLL_S,
    )
    if moment is StopMoment.TIMED_OUT:
        log.warning("no batch ended within %.0f s; interrupting", BATCH_DRAIN_TIMEOUT_S)
    else:
        log.info("stopping the query %s", moment.value)


def _stop_query(query: Any, stopping: bool) -> None:
    """Stop ``query``; ``stopping``: the job stops on request, and an error the query
    ends with is one of the stop's."""
    try:
        query.stop()
    except Exception as exc:
        log.warning("query did not stop cleanly: %s", _first_line(exc))
    error = query.exception()
    if stopping and error is not None:
        if GateClosedError.__name__ in str(error):
            log.info("a batch that started while stopping was cancelled; it will be replayed")
        else:
            log.warning("query ended with an error while stopping: %s", _first_line(error))


def _quiet_job_group_cancel(spark: Any) -> None:
    """Spark's stop cancels the run's job group even when none of its jobs runs (the stop
    waited for a moment between batches), and the scheduler then warns "Failed to cancel
    job group … Cannot find active jobs for it" on every run. From the stop on, only its
    errors are logged."""
    try:
        jvm = spark.sparkContext._jvm
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            "org.apache.spark.scheduler.DAGScheduler", jvm.org.apache.logging.log4j.Level.ERROR
        )
    except Exception:  # py4j: the JVM is gone or logs another way; the warning stays
        log.debug("scheduler log level unchanged", exc_info=True)


QUIET_STATUS = ("Waiting for next trigger", "Waiting for data to arrive")
"""Spark's status messages between triggers; any other (initialising the sources, asking
them for offsets) means Spark's Python source runners are in a call, and stopping then
makes them print tracebacks."""


def _busy(status: dict[str, Any]) -> bool:
    return bool(status["isTriggerActive"]) or status.get("message") not in QUIET_STATUS


class TriggerEnds:
    """``busy()`` for a stop: quiet only just after a trigger ended (seen busy, then not).

    The trigger asks the sources every 50 ms (``engine/control/pacing.py``), also while the run is
    held; a stop that lands as a trigger starts to call them makes their runners print
    tracebacks. Right after one ends, the next is most of a tick away. A trigger too short
    for the polls to see counts as not seen; after ``fallback_s`` of quiet any quiet
    moment will do.
    """

    POLL_S = 0.002

    def __init__(
        self,
        busy: Callable[[], bool],
        fallback_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._busy = busy
        self._fallback_s = fallback_s
        self._clock = clock
        self._was_busy = False
        self._quiet_since: float | None = None

    def __call__(self) -> bool:
        busy = self._busy()
        ended, self._was_busy = self._was_busy and not busy, busy
        if busy:
            self._quiet_since = None
            return True
        now = self._clock()
        if self._quiet_since is None:
            self._quiet_since = now
        return not (ended or now - self._quiet_since >= self._fallback_s)


def _classify(run: Any, failure: str) -> tuple[int, str]:
    """The exit code of a failed query: where did it fail?"""
    if "batch_id=" in failure:  # the parquet sink's SinkError, raised inside foreachBatch
        return EXIT_OUTPUT_FAILED, f"output sink failed: {failure}"
    lowered = failure.lower()
    if "redis" in lowered and ("connection" in lowered or "refused" in lowered):
        return EXIT_SOURCE_UNAVAILABLE, f"input source unavailable: {failure}"
    return EXIT_QUERY_FAILED, failure


def _write_results(run: Any, snapshot: JobSnapshot, wall_s: float) -> str | None:
    """Write the results document; returns a failure message or None."""
    if snapshot.results_path is None:
        return None
    from spark_runner.control.results import write_results

    path = Path(snapshot.results_path)
    try:
        results = run.results(wall_s, snapshot.spark_master)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_results(results, path)
    except OSError as exc:
        return f"cannot write the results to {path}: {exc.strerror or exc}"
    log.info("results written to %s", path)
    return None


def _log_summary(run: Any) -> None:
    summaries = run.class_summaries()
    for name, tot in summaries.items():
        mean = tot.response_sum_s / tot.timed if tot.timed else float("nan")
        log.info(
            "class %s: %d outputs, response mean %.3f s max %.3f s, arrived %d, shed %d",
            name,
            tot.outputs,
            mean,
            tot.response_max_s,
            tot.arrived,
            tot.shed,
        )


def _redis_problem(url: str, role: str) -> str | None:
    if not url:
        return f"the redis {role} needs engine.redis_url"
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=3)
        client.ping()
        client.close()
    except (redis.RedisError, ValueError) as exc:
        what = "input source" if role == "source" else "output sink"
        return f"{what} unavailable: cannot reach Redis at {url}: {exc}"
    return None


def _supervise(queries: list[Any], stop: StopSignal, deadline: float, run: Any) -> str | None:
    """Wait for a stop signal, the deadline, a query's end or a failed control step;
    returns a failure or None."""
    while True:
        if run.failure is not None:
            return f"{run.failure.kind} failed: {run.failure}"
        if stop.event.wait(POLL_S):
            log.info("%s received; stopping after the batch in progress", stop.signal_name)
            return None
        if time.monotonic() >= deadline:
            log.info("duration elapsed; stopping after the batch in progress")
            return None
        for query in queries:
            if not query.isActive:
                error = query.exception()
                if error is None:
                    return f"streaming query {query.name} stopped unexpectedly"
                log.error("streaming query %s failed:\n%s", query.name, error)
                return f"streaming query failed: {_describe(error)}"


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # py4j logs every gateway command at DEBUG, httpx every request at INFO.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    logging.getLogger("py4j.clientserver").addFilter(expected_cancellation)
    logging.getLogger().addFilter(retried_gateway_command)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # PySpark warns at import about pandas 3; the job's pandas use is its own.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")


def expected_cancellation(record: logging.LogRecord) -> bool:
    """Drop py4j's ERROR record, traceback included, of the ``GateClosedError`` that a
    batch starting while the job stops raises on purpose; the job logs that batch once,
    at INFO, after the query stops. Every other record passes."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, GateClosedError)


def retried_gateway_command(record: logging.LogRecord) -> bool:
    """py4j logs, on the root logger at INFO with a traceback, a command whose pooled
    connection the JVM had closed (Spark interrupts its threads while it stops); it then
    sends the command again on a new connection, and the outcome of that is what counts.
    Keep the record as one line naming the cause, without the traceback."""
    if (
        record.levelno == logging.INFO
        and record.msg == RETRIED_COMMAND_MESSAGE
        and record.exc_info
        and record.exc_info[1] is not None
    ):
        record.msg = "py4j sent a command again on a new connection: %s"
        record.args = (_first_line(record.exc_info[1]),)
        record.exc_info = None
        record.exc_text = None
    return True


def _fail(code: int, message: str) -> int:
    log.critical("%s (exit %d)", message, code)
    return code


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _one_line(exc: BaseException) -> str:
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


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


def results_of(path: Path) -> dict[str, Any]:
    """Read a results document written by a run."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data

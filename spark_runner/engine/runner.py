"""One run of a scenario on Spark: the streaming query and the control step after each batch.

:class:`EngineRun` sets a run up in its checkpoint directory (``<checkpoint>/headroom/``
holds the feed specification the source reads and the decision file the controller
writes) and starts one streaming query: the headroom source, the scenario's operators as
Spark operators (:mod:`dataflow`), the sink. Spark asks every ``TICK_S``; a batch
starts when the controller's pace has passed since the last one started (:mod:`pacing`).
Spark runs every operator and writes the outputs; the driver only controls. When a batch
has committed, its progress event brings the counts and arrival statistics its
``observe`` operators computed in the executors, and a watcher thread hands them to
Spark-free code:

    on progress(batch):
        record   = offsets log entries batch − 1 and batch          (offsets.py)
        measures = counts per operator, answers per class          (measures.py)
        outcome  = controller.on_batch(record, measures, timing)   (controller.py)
        write the next decision (the source waits for it); push the samples
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.types import BooleanType

from spark_runner.contract.actions import ControlAction
from spark_runner.contract.control import LiveConfig
from spark_runner.contract.samples import MetricSample
from spark_runner.contract.snapshot import DEFAULT_WATERMARK_S
from spark_runner.core.errors import ParameterError
from spark_runner.engine.control.background import BackgroundLoad
from spark_runner.engine.control.controller import (
    BatchTiming,
    ControllerOptions,
    EngineController,
)
from spark_runner.engine.control.executors import ExecutorPool
from spark_runner.engine.dataflow.expressions import burn_amounts, burn_sql
from spark_runner.engine.dataflow.handoff import log_start_s, point_margins_s
from spark_runner.engine.dataflow.jvm_burn import CLASS_NAME, UDF_NAME, burn_udf_sql
from spark_runner.engine.dataflow.network import NetworkPlan, stream_specs
from spark_runner.engine.dataflow.operators import Dataflow, build_dataflow
from spark_runner.engine.dataflow.sink import check_sink, sink_writer
from spark_runner.engine.measure.calibration import measure_repetition_s
from spark_runner.engine.measure.measures import read_measures
from spark_runner.engine.measure.task_times import BatchTaskTimes, TaskTimes
from spark_runner.engine.results import build_spark_results
from spark_runner.engine.sources.feed import (
    GENERATOR,
    LOGS,
    REDIS,
    FeedPoint,
    FeedSpec,
    plan_partitions,
)
from spark_runner.engine.sources.offsets import (
    BatchRecord,
    SourceOffset,
    read_decision,
    read_offset_log,
    write_decision,
)
from spark_runner.engine.sources.redis_log import stream_key
from spark_runner.engine.sources.source import OPTION_POINT, OPTION_SPEC, SOURCE_NAME, FeedSource
from spark_runner.scenario.models import MapOp

log = logging.getLogger(__name__)

SampleSink = Callable[[list[MetricSample]], None]
ActionSink = Callable[[list[ControlAction]], None]
EXECUTED = "addBatch"
"""The duration only a progress of an executed batch has."""
MAX_BACKLOG_S = 3600.0
"""The longest start-up backlog a run may ask for, s."""


@dataclass(frozen=True)
class RunSettings:
    """What a run needs besides its scenario.

    Attributes:
        name: the query's name.
        checkpoint_dir: Spark's checkpoint location (local path) for this run.
        period_s: the configured control period: the longest pace between batches, s.
        source, redis_url, redis_prefix, files_dir: where tuples wait.
        sink, sink_path: where output tuples go (a directory, or the redis sink's stream
            key on the Redis of ``redis_url``).
        watermark_s: how far event time (the arrival instant) may lag behind the newest
            before a window drops it as late and forgets its state.
        partitions: tasks per batch (None: Spark's default parallelism).
        burn_repetition_s: cost of one burn repetition (None: measured at start-up).
        options: the controller's options.
        backlog_s: generated streams only: the run starts as if its streams had been
            flowing for this long, their tuples waiting (a job started late; a broker's
            backlog is whatever it holds) [0].
        master_ui_url: the standalone master's web UI (``http://HOST:PORT``), where an
            elastic run reads the cluster's free cores (None: it may grow to its
            maximum, and a size the cluster cannot start is given up after a while).
    """

    name: str
    checkpoint_dir: str
    period_s: float
    source: str = "generator"
    redis_url: str = ""
    redis_prefix: str = "headroom"
    files_dir: str = ""
    sink: str = "none"
    sink_path: str | None = None
    watermark_s: float = DEFAULT_WATERMARK_S
    partitions: int | None = None
    burn_repetition_s: float | None = None
    options: ControllerOptions = field(default_factory=ControllerOptions)
    backlog_s: float = 0.0
    master_ui_url: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.backlog_s <= MAX_BACKLOG_S:
            raise ValueError(
                f"backlog_s is {self.backlog_s}; it must be within [0, {MAX_BACKLOG_S}]"
            )
        if self.backlog_s and self.source != GENERATOR:
            raise ValueError(
                f"backlog_s is {self.backlog_s} with source {self.source!r}; only generated "
                "streams start with a backlog"
            )


class HandlerError(RuntimeError):
    """The driver's step after a batch failed; ``kind`` names where."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class EngineRun:
    """A scenario running on one SparkSession (see module docstring)."""

    def __init__(
        self,
        plan: NetworkPlan,
        settings: RunSettings,
        live: LiveConfig | None = None,
        samples: SampleSink | None = None,
        actions: ActionSink | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.plan = plan
        self.settings = settings
        self.controller = EngineController(plan, settings.options, live, settings.period_s)
        check_sink(settings.sink, settings.sink_path, settings.redis_url)
        self.dataflow: Dataflow | None = None
        self._samples = samples
        self._actions = actions
        self._clock = clock
        self.work_dir = Path(settings.checkpoint_dir) / "headroom"
        self.decision_path = self.work_dir / "decision.json"
        self.background = BackgroundLoad(plan.scenario)
        self.failure: HandlerError | None = None
        self.started_s = 0.0
        self.repetition_s: float | None = None
        self.burn = "none"
        self.query: StreamingQuery | None = None
        self.task_times: TaskTimes | None = None
        self.spec: FeedSpec | None = None
        self.watcher: _ProgressWatcher | None = None
        self._previous: SourceOffset | None = None
        self._last_id = -1
        self.reported_batch = -1
        self._decision_lock = threading.Lock()
        self._holding = False
        self.pool: ExecutorPool | None = None

    # --- start -------------------------------------------------------------------------

    def start(self, spark: SparkSession, gate_batch: Callable[[], Any]) -> StreamingQuery:
        """Calibrate, write the feed specification and the first decision, start the query.

        ``gate_batch`` is a context-manager factory every batch runs inside (the job's
        stop gate).
        """
        settings, plan = self.settings, self.plan
        parallelism = settings.partitions or spark.sparkContext.defaultParallelism
        self.controller.set_parallelism(parallelism)
        parallelism = self._start_pool(spark, parallelism)
        try:
            self.work_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RuntimeError(
                f"checkpoint directory {settings.checkpoint_dir} is unusable: {exc.strerror}"
            ) from exc
        self._choose_burn(spark, parallelism)
        # the instant arrivals are measured from in Spark (no arrival precedes it); the
        # streams' own origin is set when the query first asks for an offset (feed.py)
        self.started_s = time.time() - settings.backlog_s
        self.spec = self._feed_spec(parallelism)
        spec_path = self.work_dir / "feed.json"
        self.spec.dump(spec_path)
        write_decision(self.decision_path, self.controller.initial_decision())
        self.dataflow = self._build_dataflow(spark, spec_path)
        writer = sink_writer(
            self.dataflow.output,
            settings.sink,
            settings.sink_path,
            settings.name,
            gate_batch,
            settings.redis_url,
        )
        self.query = (
            writer.trigger(processingTime="0 seconds")  # paced by the sources (TICK_S apart)
            .option("checkpointLocation", settings.checkpoint_dir)
            .start()
        )
        self.task_times = self._task_time_reader(spark, self.query)
        self.watcher = _ProgressWatcher(self, self.query)
        self.watcher.start()
        log.info(
            "run %s started: %d classes, %d operators, %d points, %s source, sink %s, "
            "parallelism %d, edge-shedding classes %s",
            settings.name,
            len(plan.class_names),
            len(plan.nodes),
            len(plan.points),
            settings.source,
            settings.sink,
            parallelism,
            [plan.class_names[k] for k in plan.edge_classes],
        )
        return self.query

    def _build_dataflow(self, spark: SparkSession, spec_path: Path) -> Dataflow:
        """The scenario's operators over one headroom source per point (the feed
        specification at ``spec_path``)."""
        if not _source_registered(spark):  # a job's second tier finds it registered
            spark.dataSource.register(FeedSource)
        points = [
            spark.readStream.format(SOURCE_NAME)
            .option(OPTION_SPEC, str(spec_path))
            .option(OPTION_POINT, str(p.index))
            .load()
            for p in self.plan.points
        ]
        udf = self.burn == "udf"
        return build_dataflow(
            points,
            self.plan,
            origin_s=self.started_s,
            watermark_s=self.settings.watermark_s,
            burn=burn_amounts(self.plan, 1e-9 if udf else self.repetition_s),
            burn_sql=burn_udf_sql if udf else burn_sql,
        )

    def _task_time_reader(self, spark: SparkSession, query: StreamingQuery) -> TaskTimes:
        """The reader of ``query``'s batches' executor time per branch."""
        context = spark.sparkContext
        return TaskTimes(
            context._jvm,
            context._jsc.sc(),
            query._jsq.streamingQuery(),
            str(query.runId),
            {
                n.index: point
                for n in self.plan.outputs
                if (point := self.plan.point_read_by(n.index)) is not None
            },
        )

    def _feed_spec(self, parallelism: int) -> FeedSpec:
        """What the run's sources read: its points, streams and source, in ``parallelism``
        partitions."""
        settings, plan = self.settings, self.plan
        streams = stream_specs(plan.scenario)
        margins = point_margins_s(plan)
        start_s = log_start_s(plan, self.controller.live.ranges, margins)
        if start_s and settings.source not in LOGS:
            raise ParameterError(
                "ranges", settings.source, f"a job takes over a class from a log only: {LOGS}"
            )
        return FeedSpec(
            kind=settings.source,
            backlog_us=round(settings.backlog_s * 1e6),
            points=tuple(FeedPoint(p.op_id, p.class_name, p.stream) for p in plan.points),
            streams=streams,
            decision_path=str(self.decision_path),
            partitions=parallelism,
            redis_url=settings.redis_url,
            redis_keys={n: stream_key(settings.redis_prefix, n) for n in streams},
            files_dir=settings.files_dir,
            edge_classes=tuple((k, plan.class_names[k]) for k in plan.edge_classes),
            margins_s=margins,
            start_s=start_s,
        )

    def _start_pool(self, spark: SparkSession, parallelism: int) -> int:
        """An elastic run's executor pool, started at its least size; returns the tasks a
        batch runs in (an elastic pool's: as many as its largest size has slots)."""
        settings, scaling = self.settings, self.controller.scaling
        if scaling is None:
            return parallelism
        self.pool = ExecutorPool(
            spark,
            max_executors=scaling.max_executors,
            executor_cores=scaling.executor_cores,
            master_ui_url=settings.master_ui_url,
        )
        if not self.pool.elastic:
            self.controller.no_scaling(self.pool.reason or "")
            self.pool = None
            return parallelism
        self.pool.resize(scaling.min_executors)
        serving = self.pool.settle()
        self.controller.set_parallelism(max(serving, 1) * scaling.executor_cores)
        self.controller.pool_state(serving, self.pool.free_executors())
        return settings.partitions or scaling.max_executors * scaling.executor_cores

    def _choose_burn(self, spark: SparkSession, parallelism: int) -> None:
        """How the maps burn their calibrated CPU: the exact UDF, else the hash burn with
        its repetition's cost (measured on ``parallelism`` tasks unless given)."""
        settings = self.settings
        burning = settings.options.burn and any(
            isinstance(n.model, MapOp) and n.model.cpu_cost_per_tuple_s > 0 for n in self.plan.nodes
        )
        self.burn = "none"
        if burning and _register_burn_udf(spark):
            self.burn = "udf"
            log.info("CPU burn: the %s UDF (exact thread CPU time)", UDF_NAME)
        elif burning:
            self.burn = "hash"
            self.repetition_s = settings.burn_repetition_s or measure_repetition_s(
                spark, parallelism
            )
            log.info("CPU burn: hash, one repetition costs %.1f ns", self.repetition_s * 1e9)

    # --- batches -----------------------------------------------------------------------

    def _record(self, batch_id: int) -> BatchRecord:
        checkpoint = self.settings.checkpoint_dir
        end = read_offset_log(checkpoint, batch_id)
        if batch_id == 0:
            start = end.run_start()
        elif self._previous is not None and self._last_id == batch_id - 1:
            start = self._previous
        else:
            start = read_offset_log(checkpoint, batch_id - 1)
        self._previous, self._last_id = end, batch_id
        return BatchRecord(batch_id, start, end)

    def on_progress(
        self, batch_id: int, observed: dict[str, dict[str, Any]], timing: BatchTiming
    ) -> None:
        """Step the controller on a committed batch (called by the progress watcher)."""
        assert self.dataflow is not None
        record = self._record(batch_id)
        if self.controller.last_record is None:  # the streams' origin is known now
            self.background.start(record.end.origin_us / 1e6, self.plan.scenario.duration_s * 10)
        kept = {p.node: record.delta(p.index).kept for p in self.plan.points}
        measures = read_measures(
            self.dataflow.uses, kept, len(self.plan.nodes), observed, self.started_s
        )
        if self.pool is not None and self.controller.elastic is not None:
            serving = self.pool.sync(self.controller.elastic.target)
            self.controller.pool_state(serving, self.pool.free_executors())
        outcome = self.controller.on_batch(record, measures, timing)
        if outcome is not None:
            with self._decision_lock:
                decision = replace(outcome.decision, after_us=record.end.t_us)
                write_decision(
                    self.decision_path, replace(decision, hold=True) if self._holding else decision
                )
            if self._samples is not None:
                self._samples(outcome.samples)
            if self._actions is not None and outcome.actions:
                # the log counts from the run's origin; the control plane takes epoch s
                origin_s = record.end.origin_us / 1e6
                self._actions(
                    [a.model_copy(update={"at_s": a.at_s + origin_s}) for a in outcome.actions]
                )
        stepped_s = self._clock()
        # the decision is out: the executor time is read for the next steps, not this one
        # (before the batch counts as reported: a stop waits for this read to end)
        tasks = self._task_times(record)
        if tasks is not None:
            self.controller.on_task_times(batch_id, tasks.by_output, tasks.unattributed_s)
        self.reported_batch = batch_id
        log.debug(
            "batch %d: %d tuples kept, step %.0f ms after its commit",
            batch_id,
            sum(kept.values()),
            1000 * (stepped_s - timing.output_s),
        )

    def _task_times(self, record: BatchRecord) -> BatchTaskTimes | None:
        """The executor time of the batch's tasks per query output (None when the status
        store cannot be read whole: the costs then keep their last scale)."""
        if self.task_times is None or self.spec is None:
            return None
        decision = record.end.decision
        groups = plan_partitions(
            self.spec, record.start, record.end, decision.costs_s if decision else {}
        )
        partitions = [
            sum(1 for g in groups if any(piece.point == p.index for piece in g))
            for p in self.plan.points
        ]
        try:
            return self.task_times.read(record.batch_id, partitions)
        except Exception:  # py4j raises whatever the JVM threw
            log.warning("task times of batch %d unreadable", record.batch_id, exc_info=True)
            return None

    def unreported_batches(self) -> list[int]:
        """Committed batches the controller has not stepped on yet."""
        last = self.query.lastProgress if self.query is not None else None
        return [] if last is None or last["batchId"] <= self.reported_batch else [last["batchId"]]

    # --- end ---------------------------------------------------------------------------

    def hold(self) -> None:
        """Plan no new batch from now on (the job is stopping): the batch in progress
        ends, no other starts, and the query can be stopped between triggers."""
        with self._decision_lock:
            self._holding = True
            write_decision(
                self.decision_path, replace(read_decision(self.decision_path), hold=True)
            )

    def stop_threads(self) -> None:
        """Stop the background load and the progress watcher (before Spark stops)."""
        self.background.stop()
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher.join(5)
            self.watcher = None

    def close(self) -> None:
        """Stop the query if it still runs, the background load and the progress watcher."""
        if self.query is not None and self.query.isActive:
            self.query.stop()
        self.stop_threads()

    def results(self, wall_s: float, master: str) -> dict[str, Any]:
        """The results document of what ran so far."""
        last = self.controller.last_record
        scenario_s = (last.end.t_us - last.end.origin_us) / 1e6 if last is not None else 0.0
        return build_spark_results(
            self.controller,
            scenario_s,
            {
                "master": master,
                "source": self.settings.source,
                "sink": self.settings.sink,
                "wall_s": wall_s,
                "origin_s": last.end.origin_us / 1e6 if last is not None else None,
                "burn": self.burn,
                "burn_repetition_ns": self.repetition_s * 1e9 if self.repetition_s else None,
                "redis": self.settings.source == REDIS,
            },
        )


def _source_registered(spark: SparkSession) -> bool:
    """Whether the session knows the feed source already (registering it again makes
    Spark warn that it replaced it)."""
    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()
        return bool(manager.dataSourceExists(SOURCE_NAME))
    except Exception:  # py4j raises whatever the JVM threw; register to be sure
        return False


def _register_burn_udf(spark: SparkSession) -> bool:
    """Register the exact burn UDF if its class is on the JVM's class path."""
    try:
        spark.udf.registerJavaFunction(UDF_NAME, CLASS_NAME, BooleanType())
    except Exception as exc:  # py4j raises whatever the JVM threw
        log.info("burn UDF unavailable (%s)", str(exc).splitlines()[0][:200])
        return False
    return True


class _ProgressWatcher(threading.Thread):
    """Steps the controller on every committed batch of the run's query.

    It polls the query's newest progress (a batch id, then one JSON document) instead of
    listening: a streaming listener gets each event converted field by field over py4j,
    which took 200–350 ms per batch here, and the source waits for the step. A trigger
    that ran no batch (every 10 s without data, e.g. while a long pace holds the next
    batch) also reports a progress, with the id of the batch not yet planned and no
    ``addBatch`` time: it is no batch to step on."""

    def __init__(self, run: EngineRun, query: StreamingQuery, poll_s: float = 0.005) -> None:
        super().__init__(name="headroom-progress", daemon=True)
        self._run = run
        self._query = query
        self._poll_s = poll_s
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        jsq = self._query._jsq
        while not self._halt.wait(self._poll_s):
            try:
                last = jsq.lastProgress()
                if last is None or last.batchId() <= self._run.reported_batch:
                    continue
                progresses = [json.loads(last.json())]
                if progresses[0]["batchId"] > self._run.reported_batch + 1:
                    progresses = [
                        json.loads(p.json())
                        for p in jsq.recentProgress()
                        if p.batchId() > self._run.reported_batch
                    ]
            except Exception:  # py4j raises whatever the JVM threw
                if self._halt.is_set() or not _active(self._query):
                    return  # the query stopped, or Spark did
                continue
            for progress in progresses:
                if EXECUTED in progress.get("durationMs", {}):
                    self._step(progress)

    def _step(self, progress: dict[str, Any]) -> None:
        started_s = _epoch_s(progress["timestamp"])
        durations = progress.get("durationMs", {})
        timing = BatchTiming(started_s, started_s + durations.get("triggerExecution", 0) / 1000)
        try:
            self._run.on_progress(
                progress["batchId"], dict(progress.get("observedMetrics", {})), timing
            )
        except Exception as exc:  # a failed step must stop the run
            log.critical("control step after batch %d failed", progress["batchId"], exc_info=True)
            self._run.failure = HandlerError("controller", f"{type(exc).__name__}: {exc}")
            self._halt.set()
        log.debug("batch %d progress: %s", progress["batchId"], durations)


def _active(query: StreamingQuery) -> bool:
    try:
        return bool(query.isActive)
    except Exception:  # the JVM is gone
        return False


def _epoch_s(timestamp: str) -> float:
    """Epoch seconds of a progress timestamp (ISO 8601 in UTC, e.g. ``…T14:25:55.123Z``)."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()

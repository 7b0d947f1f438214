"""The streaming query and its two hooks, each handing over to a Spark-free function.

- ``BatchHandler`` (``foreachBatch``): measures the batch (``pipeline.measure_batch``)
  and gives the statistics to the ``SampleAssembler``.
- ``ProgressListener``: gives each batch's arrival window, read from the source offsets
  in the query progress, to the same assembler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.listener import (
    QueryIdleEvent,
    QueryProgressEvent,
    QueryStartedEvent,
    QueryTerminatedEvent,
    StreamingQueryListener,
)
from pyspark.sql.streaming.query import StreamingQuery

from spark_runner.job.config import ClassSnapshot, JobSnapshot
from spark_runner.job.lifecycle import BatchGate
from spark_runner.job.metrics import SampleAssembler, window_from_offsets
from spark_runner.job.pipeline import measure_batch, read_stream

log = logging.getLogger(__name__)


class BatchHandler:
    """The ``foreachBatch`` function."""

    def __init__(
        self,
        classes: Sequence[ClassSnapshot],
        gate: BatchGate,
        assembler: SampleAssembler,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._classes = tuple(classes)
        self._gate = gate
        self._assembler = assembler
        self._clock = clock

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        with self._gate.batch():
            stats = measure_batch(batch_df, self._classes, self._clock)
            log.debug(
                "batch %d: arrived %s, output %s",
                batch_id,
                dict(stats.arrived),
                {k: out.output_count for k, out in stats.outputs.items()},
            )
            self._assembler.add_stats(batch_id, stats)


class ProgressListener(StreamingQueryListener):
    """Forwards the arrival window of every batch of the query named ``query_name``."""

    def __init__(self, query_name: str, assembler: SampleAssembler) -> None:
        self._query_name = query_name
        self._assembler = assembler

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        pass

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        progress = event.progress
        if progress.name != self._query_name:
            return
        try:
            source = progress.sources[0]
            window = window_from_offsets(source.startOffset, source.endOffset)
        except (IndexError, KeyError, TypeError, ValueError):
            log.exception("cannot read the arrival window of batch %d", progress.batchId)
            return
        log.debug(
            "batch %d progress: %d input rows, window %.3f s, durations %s",
            progress.batchId,
            progress.numInputRows,
            window.period_s,
            progress.durationMs,
        )
        self._assembler.add_window(progress.batchId, window)

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        pass

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        pass


def query_name(snapshot: JobSnapshot) -> str:
    return f"headroom_job_{snapshot.job_id}"


def trigger_interval(control_period_s: float) -> str:
    # Spark reads whole milliseconds; 0 would mean "as fast as possible".
    return f"{max(1, round(control_period_s * 1000))} milliseconds"


def start_query(
    spark: SparkSession,
    snapshot: JobSnapshot,
    origin_us: int,
    gate: BatchGate,
    assembler: SampleAssembler,
) -> StreamingQuery:
    """Start the query; the listener must be registered before the first batch ends."""
    name = query_name(snapshot)
    spark.streams.addListener(ProgressListener(name, assembler))
    return (
        read_stream(spark, snapshot, origin_us)
        .writeStream.queryName(name)
        .foreachBatch(BatchHandler(snapshot.classes, gate, assembler))
        .trigger(processingTime=trigger_interval(snapshot.control_period_s))
        .option("checkpointLocation", snapshot.checkpoint_dir)
        .start()
    )

"""Where the output tuples go: Spark sinks, written by the executors.

The dataflow's output (:data:`spark_runner.engine.dataflow.OUTPUT_COLUMNS`) is written
in the update output mode (a window aggregate emits an update per window and group its
batch touched):

- ``none``: Spark's ``noop`` sink (benchmarks: the batch runs, nothing is kept);
- ``memory``: Spark's memory sink, a table named after the query (tests, notebooks);
- ``console``: Spark's console sink (the first rows of every batch on stdout);
- ``parquet``: one directory per batch, ``<path>/batch_id=<id>/``, written by the
  executors through ``foreachBatch`` and replaced when a batch is replayed, so the
  directory holds every batch exactly once (``spark.read.parquet(path)`` reads them all,
  with ``batch_id`` as a column). Spark's own file sink takes only the append output
  mode, in which a window's result is written once the watermark has passed its end, not
  as it changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql.streaming.readwriter import DataStreamWriter

SINK_KINDS = ("none", "memory", "parquet", "console")

log = logging.getLogger(__name__)


class SinkError(RuntimeError):
    """The sink cannot be set up."""


Gate = Callable[[], AbstractContextManager[object]]


def batch_directory(path: str | Path, batch_id: int) -> Path:
    return Path(path) / f"batch_id={batch_id}"


class ParquetBatches:
    """The ``foreachBatch`` function of the parquet sink (inside the job's stop gate)."""

    def __init__(self, path: str | Path, gate: Gate) -> None:
        self.path = Path(path)
        self.gate = gate

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        with self.gate():
            target = batch_directory(self.path, batch_id)
            try:
                batch_df.write.mode("overwrite").parquet(str(target))
            except Exception as exc:  # py4j raises what the JVM threw
                raise SinkError(f"cannot write {target}: {str(exc).splitlines()[0]}") from exc


def check_sink(kind: str, path: str | None) -> None:
    """``SinkError`` if sink ``kind`` cannot be used (unknown, or its directory unusable)."""
    if kind not in SINK_KINDS:
        raise SinkError(f"unknown sink {kind!r}; use one of {', '.join(SINK_KINDS)}")
    if kind == "parquet":
        if not path:
            raise SinkError("the parquet sink needs a directory (sink_path)")
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkError(f"cannot create the parquet sink directory {path}: {exc}") from exc


def sink_writer(
    df: DataFrame, kind: str, path: str | None, name: str, gate: Gate
) -> DataStreamWriter:
    """The stream writer of sink ``kind`` for ``df`` (query name ``name``)."""
    check_sink(kind, path)
    writer = df.writeStream.queryName(name).outputMode("update")
    if kind == "none":
        return writer.format("noop")
    if kind == "memory":
        return writer.format("memory")
    if kind == "console":
        return writer.format("console").option("numRows", 5).option("truncate", False)
    assert path is not None
    return writer.foreachBatch(ParquetBatches(path, gate))

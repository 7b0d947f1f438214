"""Where the output tuples go: Spark sinks, written by the executors.

The dataflow's output (every query's rows unioned by name) is written in the update
output mode (a window aggregate emits an update per window and group its batch touched):

- ``none``: Spark's ``noop`` sink (benchmarks: the batch runs, nothing is kept);
- ``memory``: Spark's memory sink, a table named after the query (tests, notebooks);
- ``console``: Spark's console sink (the first rows of every batch on stdout);
- ``parquet`` and ``json``: one directory per batch, ``<path>/batch_id=<id>/``, written
  by the executors through ``foreachBatch`` and replaced when a batch is replayed, so the
  directory holds every batch exactly once (``spark.read.parquet(path)`` reads them all,
  with ``batch_id`` as a column). Spark's own file sink takes only the append output
  mode, in which a window's result is written once the watermark has passed its end, not
  as it changes.
- ``redis``: entries appended to the Redis stream ``<path>`` by one executor task per
  batch, each ``{"batch_id": id, "json": row}`` (a row's null columns left out). The
  entries and the batch id (kept in ``<path>:batch``) are written in one MULTI/EXEC
  transaction, and a batch whose id is not above the kept one is skipped: a replayed
  batch (after a crash) or a retried task adds nothing twice. The stream is trimmed to
  about :data:`REDIS_SINK_MAXLEN` entries.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row
from pyspark.sql.streaming.readwriter import DataStreamWriter

SINK_KINDS = ("none", "memory", "console", "parquet", "json", "redis")
FILE_SINKS = ("parquet", "json")
REDIS_SINK_MAXLEN = 1_000_000
REDIS_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,199}$"

log = logging.getLogger(__name__)


class SinkError(RuntimeError):
    """The sink cannot be set up, or a batch cannot be written."""


Gate = Callable[[], AbstractContextManager[object]]


def batch_directory(path: str | Path, batch_id: int) -> Path:
    return Path(path) / f"batch_id={batch_id}"


def batch_marker(key: str) -> str:
    """The Redis key holding the id of the last batch written to stream ``key``."""
    return f"{key}:batch"


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class FileBatches:
    """The ``foreachBatch`` function of a file sink (inside the job's stop gate)."""

    def __init__(self, path: str | Path, fmt: str, gate: Gate) -> None:
        self.path = Path(path)
        self.fmt = fmt
        self.gate = gate

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        with self.gate():
            target = batch_directory(self.path, batch_id)
            try:
                batch_df.write.mode("overwrite").format(self.fmt).save(str(target))
            except Exception as exc:  # py4j raises what the JVM threw
                raise SinkError(f"cannot write {target}: {_first_line(exc)}") from exc


def _json_value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def write_redis_batch(url: str, key: str, batch_id: int, rows: Iterable[Any]) -> bool:
    """Append ``rows`` (Spark rows or dicts) to stream ``key`` as batch ``batch_id``,
    atomically with the batch's id; False (nothing written) if that batch or a later
    one is already there. Runs in an executor task."""
    import redis

    client = redis.Redis.from_url(url)
    marker = batch_marker(key)
    try:
        with client.pipeline(transaction=True) as pipe:
            pipe.watch(marker)  # type: ignore[no-untyped-call]
            last = pipe.get(marker)
            if last is not None and int(last) >= batch_id:
                return False
            pipe.multi()
            for row in rows:
                values = row.asDict(recursive=True) if hasattr(row, "asDict") else dict(row)
                payload = {k: v for k, v in values.items() if v is not None}
                pipe.xadd(
                    key,
                    {"batch_id": batch_id, "json": json.dumps(payload, default=_json_value)},
                    maxlen=REDIS_SINK_MAXLEN,
                    approximate=True,
                )
            pipe.set(marker, batch_id)
            pipe.execute()  # WatchError if another writer moved the marker: the task fails
        return True
    finally:
        client.close()


class RedisBatches:
    """The ``foreachBatch`` function of the Redis sink (inside the job's stop gate)."""

    def __init__(self, url: str, key: str, gate: Gate) -> None:
        self.url = url
        self.key = key
        self.gate = gate

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        with self.gate():
            url, key = self.url, self.key  # the closure Spark ships holds no gate

            def write(rows: Iterator[Row]) -> None:
                write_redis_batch(url, key, batch_id, rows)

            try:
                batch_df.coalesce(1).foreachPartition(write)
            except Exception as exc:  # py4j raises what the JVM threw
                raise SinkError(
                    f"cannot write batch {batch_id} to Redis stream {self.key}: {_first_line(exc)}"
                ) from exc


def check_sink(kind: str, path: str | None, redis_url: str = "") -> None:
    """``SinkError`` if sink ``kind`` cannot be used (unknown, its directory unusable, its
    stream key malformed or no Redis to write to)."""
    if kind not in SINK_KINDS:
        raise SinkError(f"unknown sink {kind!r}; use one of {', '.join(SINK_KINDS)}")
    if kind in FILE_SINKS:
        if not path:
            raise SinkError(f"the {kind} sink needs a directory (sink_path)")
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkError(f"cannot create the {kind} sink directory {path}: {exc}") from exc
    if kind == "redis":
        if not redis_url:
            raise SinkError("the redis sink needs a Redis URL (redis_url)")
        if not path or not re.match(REDIS_KEY_PATTERN, path):
            raise SinkError(
                f"the redis sink's stream key (sink_path) {path!r} must match {REDIS_KEY_PATTERN}"
            )


def sink_writer(
    df: DataFrame, kind: str, path: str | None, name: str, gate: Gate, redis_url: str = ""
) -> DataStreamWriter:
    """The stream writer of sink ``kind`` for ``df`` (query name ``name``)."""
    check_sink(kind, path, redis_url)
    writer = df.writeStream.queryName(name).outputMode("update")
    if kind == "none":
        return writer.format("noop")
    if kind == "memory":
        return writer.format("memory")
    if kind == "console":
        return writer.format("console").option("numRows", 5).option("truncate", False)
    assert path is not None
    if kind == "redis":
        return writer.foreachBatch(RedisBatches(redis_url, path, gate))
    return writer.foreachBatch(FileBatches(path, kind, gate))

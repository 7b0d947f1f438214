"""Where output tuples go: ``none``, ``memory``, ``parquet`` or ``console`` (no Spark).

Every batch's output tuples of every query arrive as one Arrow table
(:data:`spark_runner.engine.finish.OUTPUT_SCHEMA`) after the driver finished the window
operators. The write happens before the batch's output instant is taken, so response
times include it.

- ``none``: nothing is kept (the statistics are still exact);
- ``memory``: the newest ``max_rows`` rows stay in the driver (tests, notebooks);
- ``parquet``: one file per batch, ``<path>/batch-<id>.parquet`` (a replayed batch
  overwrites its file: no duplicates);
- ``console``: a line per batch and the first rows, on the job's log.
"""

from __future__ import annotations

import logging
from collections import deque
from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.parquet as pq

SINK_KINDS = ("none", "memory", "parquet", "console")

log = logging.getLogger(__name__)


class SinkError(RuntimeError):
    """The sink could not take a batch's output."""


class Sink(Protocol):
    wants_rows: bool

    def write(self, batch_id: int, table: pa.Table) -> None: ...


class NoSink:
    wants_rows = False

    def write(self, batch_id: int, table: pa.Table) -> None:
        pass


class MemorySink:
    wants_rows = True

    def __init__(self, max_rows: int = 100_000) -> None:
        self.max_rows = max_rows
        self._tables: deque[pa.Table] = deque()
        self._rows = 0

    def write(self, batch_id: int, table: pa.Table) -> None:
        if not table.num_rows:
            return
        self._tables.append(table)
        self._rows += table.num_rows
        while self._rows - self._tables[0].num_rows >= self.max_rows:
            self._rows -= self._tables.popleft().num_rows

    def table(self) -> pa.Table:
        if not self._tables:
            from spark_runner.engine.finish import OUTPUT_SCHEMA

            return OUTPUT_SCHEMA.empty_table()
        return pa.concat_tables(list(self._tables))


class ParquetSink:
    wants_rows = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkError(f"cannot create the parquet sink directory {self.path}: {exc}") from exc

    def write(self, batch_id: int, table: pa.Table) -> None:
        if not table.num_rows:
            return
        target = self.path / f"batch-{batch_id:08d}.parquet"
        tmp = target.with_suffix(".tmp")
        try:
            pq.write_table(table, tmp)
            tmp.replace(target)
        except OSError as exc:
            raise SinkError(f"cannot write {target}: {exc}") from exc


class ConsoleSink:
    wants_rows = True

    def __init__(self, rows: int = 5) -> None:
        self.rows = rows

    def write(self, batch_id: int, table: pa.Table) -> None:
        log.info("batch %d: %d output tuples", batch_id, table.num_rows)
        for row in table.slice(0, self.rows).to_pylist():
            log.info("  %s", row)


def make_sink(kind: str, path: str | None = None) -> Sink:
    """The sink ``kind`` (``SinkError`` when it cannot be set up)."""
    if kind == "none":
        return NoSink()
    if kind == "memory":
        return MemorySink()
    if kind == "console":
        return ConsoleSink()
    if kind == "parquet":
        if not path:
            raise SinkError("the parquet sink needs a directory (sink_path)")
        return ParquetSink(path)
    raise SinkError(f"unknown sink {kind!r}; use one of {', '.join(SINK_KINDS)}")

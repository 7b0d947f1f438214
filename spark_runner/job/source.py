"""The synthetic multi-class stream as a Python streaming data source.

Offsets are time based: ``{"origin_us": O, "t_us": T}``. The initial offset is the job's
start instant (option ``origin_us``) and ``latestOffset`` returns "now", so a tuple can
only be read once its scheduled arrival instant has passed. A micro-batch between offsets
S and E holds exactly the tuples scheduled in [S.t_us, E.t_us) (see ``generator``).
The origin travels inside the offset so that a batch replayed after a restart, which
brings a new ``origin_us`` option, still regenerates the same tuples.

Spark runs ``initialOffset``/``latestOffset``/``partitions`` in a long-lived Python
process on the driver and ``read`` in Python workers; both import this module by name,
so it must be importable by the worker's interpreter (see ``session``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit
from pyspark.sql.types import (
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from spark_runner.job.generator import ClassStream, generate, seq_range

SOURCE_NAME = "headroom_classes"
OPTION_CLASSES = "classes"
OPTION_ORIGIN_US = "origin_us"

SCHEMA = StructType(
    [
        StructField("class_id", IntegerType()),
        StructField("class_name", StringType()),
        StructField("seq", LongType()),
        StructField("arrival_s", DoubleType()),
        StructField("value", DoubleType()),
    ]
)


def encode_classes(streams: Sequence[ClassStream]) -> str:
    """The ``classes`` option value (data source options are strings)."""
    return json.dumps([[s.class_id, s.name, s.rate_per_s] for s in streams])


def decode_classes(option: str) -> tuple[ClassStream, ...]:
    return tuple(
        ClassStream(class_id=int(cid), name=str(name), rate_per_s=float(rate))
        for cid, name, rate in json.loads(option)
    )


def now_us() -> int:
    return time.time_ns() // 1_000


class ClassRangePartition(InputPartition):
    """Tuples ``seq_start <= seq < seq_stop`` of one class; picklable, no Spark state."""

    def __init__(self, stream: ClassStream, origin_us: int, seq_start: int, seq_stop: int):
        super().__init__((stream.class_id, seq_start, seq_stop))
        self.stream = stream
        self.origin_us = origin_us
        self.seq_start = seq_start
        self.seq_stop = seq_stop


class ClassStreamReader(DataSourceStreamReader):
    def __init__(self, streams: tuple[ClassStream, ...], origin_us: int) -> None:
        self.streams = streams
        self.origin_us = origin_us

    def initialOffset(self) -> dict[str, Any]:
        return {"origin_us": self.origin_us, "t_us": self.origin_us}

    # The (start, limit) signature (Spark >= 4.2) is what tells Spark this reader takes
    # part in admission control; the reader ignores the limit: time alone bounds a batch.
    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        return {"origin_us": start["origin_us"], "t_us": max(start["t_us"], now_us())}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        origin_us = int(start["origin_us"])
        start_us, end_us = int(start["t_us"]), int(end["t_us"])
        parts: list[InputPartition] = []
        for stream in self.streams:
            seqs = seq_range(stream, origin_us, start_us, end_us)
            if len(seqs) > 0:
                parts.append(ClassRangePartition(stream, origin_us, seqs.start, seqs.stop))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, ClassRangePartition)
        return generate(
            partition.stream, partition.origin_us, range(partition.seq_start, partition.seq_stop)
        )

    def commit(self, end: dict[str, Any]) -> None:
        # Nothing to release: every range can be regenerated from its offsets.
        pass


class ClassStreamSource(DataSource):
    """``spark.readStream.format("headroom_classes")`` with options ``classes``, ``origin_us``."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> StructType:
        return SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        try:
            streams = decode_classes(self.options[OPTION_CLASSES])
            origin_us = int(self.options[OPTION_ORIGIN_US])
        except (KeyError, ValueError, TypeError) as exc:
            raise ValueError(
                f"data source {SOURCE_NAME!r} needs options {OPTION_CLASSES!r} "
                f"(JSON list of [class_id, name, rate_per_s]) and {OPTION_ORIGIN_US!r} "
                f"(integer microseconds since the epoch): {exc}"
            ) from exc
        return ClassStreamReader(streams, origin_us)

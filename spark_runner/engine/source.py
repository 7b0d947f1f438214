"""The headroom source: a Python streaming data source with admission and shedding.

``spark.readStream.format("headroom_feed").option("spec", PATH)`` reads the points of a
run (see :mod:`feed`) from the generated schedule or from Redis streams. Spark calls
``latestOffset`` on a long-lived Python process on the driver once per trigger: it reads
the controller's newest decision and admits per class what the class scheduler allows
(:func:`feed.next_offset`); the end offset records the counts and the decision. ``read``
runs in Python workers and produces exactly the kept tuples of its slices — shed tuples
never reach Spark.

Both processes import this module by name; the package must be importable there (see
``spark_runner.job.session``). The reader keeps no connection when pickled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit
from pyspark.sql.types import DoubleType, IntegerType, LongType, StructField, StructType

from spark_runner.engine.expressions import shed_column
from spark_runner.engine.feed import (
    REDIS,
    FeedSpec,
    GeneratedLog,
    Log,
    Slice,
    initial_offset,
    next_offset,
    plan_partitions,
)
from spark_runner.engine.offsets import ADMIT_ALL, SourceOffset, read_decision

SOURCE_NAME = "headroom_feed"
OPTION_SPEC = "spec"

BASE_FIELDS = (
    ("point", IntegerType(), pa.int32()),
    ("seq", LongType(), pa.int64()),
    ("key", LongType(), pa.int64()),
    ("value", DoubleType(), pa.float64()),
    ("arrival_s", DoubleType(), pa.float64()),
)


def spark_schema(spec: FeedSpec) -> StructType:
    """``point, seq, key, value, arrival_s`` and a ``shed_<k>`` per edge-shedding class."""
    fields = [StructField(name, spark_type) for name, spark_type, _ in BASE_FIELDS]
    fields += [StructField(shed_column(k), DoubleType()) for k, _ in spec.edge_classes]
    return StructType(fields)


def arrow_schema(spec: FeedSpec) -> pa.Schema:
    fields = [pa.field(name, arrow_type) for name, _, arrow_type in BASE_FIELDS]
    fields += [pa.field(shed_column(k), pa.float64()) for k, _ in spec.edge_classes]
    return pa.schema(fields)


def now_us() -> int:
    return time.time_ns() // 1_000


class FeedPartition(InputPartition):
    """A group of slices one task reads, and the batch's edge shed fractions; picklable."""

    def __init__(self, slices: Sequence[Slice], edge_shed: Sequence[float], origin_us: int) -> None:
        super().__init__(tuple((s.point, s.j0, s.j1) for s in slices))
        self.slices = tuple(slices)
        self.edge_shed = tuple(edge_shed)
        self.origin_us = origin_us


class FeedReader(DataSourceStreamReader):
    def __init__(self, spec: FeedSpec) -> None:
        self.spec = spec
        self._logs: dict[int, Log] = {}
        self._initial: dict[str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "_logs": {}, "_initial": self._initial}

    def log(self, origin_us: int) -> Any:
        """The log of a run whose scenario time 0 is ``origin_us`` (from the offsets)."""
        if origin_us not in self._logs:
            if self.spec.kind == REDIS:
                from spark_runner.engine.redis_log import RedisLog

                self._logs[origin_us] = RedisLog(self.spec)
            else:
                self._logs[origin_us] = GeneratedLog(self.spec, origin_us)
        return self._logs[origin_us]

    def initialOffset(self) -> dict[str, Any]:
        # Spark asks twice for the first batch: once to plan its end offset (latestOffset's
        # start) and again when it runs it (MicroBatchExecution: no committed offset yet,
        # so ``initialOffset``). Both must be the same offset, or the batch's start cursor
        # and counts disagree (a Redis range then held fewer entries than it counted).
        if self._initial is None:
            log = self.log(self.spec.origin_us)
            self._initial = initial_offset(self.spec, log, now_us()).to_json()
        return self._initial

    # The (start, limit) signature (Spark >= 4.2) makes Spark call this once per trigger
    # with the last offset; the limit is ignored: the class scheduler bounds a batch.
    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        decision = read_decision(self.spec.decision_path)
        if decision.hold:
            return start  # no new data: Spark plans no batch
        begin = SourceOffset.from_json(start)
        log = self.log(begin.origin_us)
        return next_offset(self.spec, log, begin, decision, now_us()).to_json()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        a, b = SourceOffset.from_json(start), SourceOffset.from_json(end)
        decision = b.decision or ADMIT_ALL
        edge_shed = [decision.shed.get(name, 0.0) for _, name in self.spec.edge_classes]
        return [
            FeedPartition(group, edge_shed, b.origin_us)
            for group in plan_partitions(self.spec, a, b, decision.costs_s)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FeedPartition)
        log = self.log(partition.origin_us)
        schema = arrow_schema(self.spec)
        for piece in partition.slices:
            columns = log.rows(piece)
            rows = len(columns["seq"])
            for (k, _), fraction in zip(self.spec.edge_classes, partition.edge_shed, strict=True):
                columns[shed_column(k)] = np.full(rows, fraction)
            yield pa.RecordBatch.from_arrays(
                [pa.array(columns[f.name], type=f.type) for f in schema], schema=schema
            )

    def commit(self, end: dict[str, Any]) -> None:
        # Nothing to release: the offsets say what every batch held.
        pass


class FeedSource(DataSource):
    """The ``headroom_feed`` source; option ``spec``: path of a :class:`FeedSpec` JSON."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def _spec(self) -> FeedSpec:
        try:
            return FeedSpec.load(self.options[OPTION_SPEC])
        except (KeyError, OSError, ValueError) as exc:
            raise ValueError(
                f"data source {SOURCE_NAME!r} needs option {OPTION_SPEC!r}, the path of a "
                f"readable feed specification: {exc}"
            ) from exc

    def schema(self) -> StructType:
        return spark_schema(self._spec())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return FeedReader(self._spec())

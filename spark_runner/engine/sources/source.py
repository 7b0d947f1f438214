"""The headroom source: a Python streaming data source with admission and shedding.

``spark.readStream.format("headroom_feed").option("spec", PATH).option("point", P)``
reads point ``P`` of a run (see :mod:`feed`) from the generated schedule or from Redis
streams. The query reads every point through its own source (so each branch of the plan
scans only its own tuples), but admission is joint: the class scheduler splits one batch
budget among all points. Spark calls ``latestOffset`` of every source once per trigger,
one after the other, each in a long-lived Python process on the driver, with the same
start offset; the first one reads the controller's newest decision, admits per class
what the class scheduler allows (:func:`feed.next_offset`) and writes that *plan* to the
run's directory under the start offset's digest; the others read it. Every source's end
offset is then the same joint offset — the counts of every point and the decision — so
the offset log records what applied to the batch, and a replay reads the same tuples.
``read`` runs in Python workers and produces exactly the kept tuples of its point's
slices — shed tuples never reach Spark.

A batch starts no sooner than the decision's pace after the last one started
(:mod:`pacing`): Spark asks every ``TICK_S`` (its polling delay), and until the pace has
passed every source returns its start. The sources of one trigger are asked one after the
other, once each, so the verdict is shared by *round*: the n-th time a source is asked
with a start offset, it follows whatever the first source asked that n-th time decided
(:func:`due`). A source asked just after the instant would otherwise plan a batch the
ones before it did not take part in: under a CPU hog the calls of one trigger came more
than a tick apart, the offset log held two different offsets for one batch, and the
tuples counted against the next batch's offsets made the measured selectivities 0, the
costs vanish and the next batch admit 13,000 queued tuples.

A stop holds the source (``Decision.hold``): no plan is written for it, every source
returns its start, and Spark plans no batch; a hold is not lifted while the run lives.

Both processes import this module by name; the package must be importable there (see
``spark_runner.job.session``). The reader keeps no connection when pickled.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from spark_runner.engine.sources.columns import ColumnSpec, arrow_array, shed_column
from spark_runner.engine.sources.feed import (
    FILES,
    REDIS,
    FeedSpec,
    GeneratedLog,
    Log,
    Slice,
    initial_offset,
    next_offset,
    origin_at,
    plan_partitions,
)
from spark_runner.engine.sources.offsets import ADMIT_ALL, Decision, SourceOffset, read_decision
from spark_runner.scenario.columns import READ_COLUMN

SOURCE_NAME = "headroom_feed"
OPTION_POINT = "point"
PLANS_KEPT = 8
"""Plans older than this many batches are deleted when a batch commits."""
DECISION_WAIT_S = 1.0
"""The longest the source waits for the controller's step on the last batch."""
DECISION_POLL_S = 0.005
OPTION_SPEC = "spec"
GO = "go"
"""A start offset's verdict once a source said its batch is due (see :func:`due`)."""

BASE_FIELDS = (
    ("point", IntegerType(), pa.int32()),
    ("seq", LongType(), pa.int64()),
    ("arrival_s", DoubleType(), pa.float64()),
)
SPARK_TYPES = {
    "long": LongType(),
    "double": DoubleType(),
    "string": StringType(),
    "boolean": BooleanType(),
    "timestamp": TimestampType(),
}


def stream_columns(spec: FeedSpec, point: int) -> tuple[ColumnSpec, ...]:
    return spec.streams[spec.points[point].stream].columns


def spark_schema(spec: FeedSpec, point: int) -> StructType:
    """``point, seq, arrival_s``, the point's stream's columns, a ``shed_<k>`` per
    edge-shedding class and ``read_s``."""
    fields = [StructField(name, spark_type) for name, spark_type, _ in BASE_FIELDS]
    fields += [StructField(c.name, SPARK_TYPES[c.type]) for c in stream_columns(spec, point)]
    fields += [StructField(shed_column(k), DoubleType()) for k, _ in spec.edge_classes]
    return StructType([*fields, StructField(READ_COLUMN, DoubleType())])


def read_times(rows: int, seconds: float) -> np.ndarray:
    """The ``read_s`` column of a batch of ``rows`` rows the reader took ``seconds`` to
    produce: the whole on its first row (the dataflow sums it per point and batch)."""
    times = np.zeros(rows)
    if rows:
        times[0] = seconds
    return times


def event_seconds(values: Any) -> np.ndarray:
    """Event instants as epoch seconds (NaN where null) from a generated column (epoch s,
    or µs for a timestamp) or an Arrow timestamp array."""
    if isinstance(values, pa.Array):
        if pa.types.is_timestamp(values.type):
            values = values.cast(pa.int64())
            return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64) / 1e6
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    array = np.asarray(values)
    return array / 1e6 if array.dtype.kind in "iu" else np.asarray(array, dtype=np.float64)


def now_us() -> int:
    return time.time_ns() // 1_000


class FeedPartition(InputPartition):
    """A group of slices one task reads, the batch's edge shed fractions and the event
    time its point keeps (None: all; a class moving between jobs); picklable."""

    def __init__(
        self,
        slices: Sequence[Slice],
        edge_shed: Sequence[float],
        origin_us: int,
        range_s: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(tuple((s.point, s.j0, s.j1) for s in slices))
        self.slices = tuple(slices)
        self.edge_shed = tuple(edge_shed)
        self.origin_us = origin_us
        self.range_s = range_s


class FeedReader(DataSourceStreamReader):
    def __init__(self, spec: FeedSpec, point: int) -> None:
        self.spec = spec
        self.point = point
        self._logs: dict[int, Log] = {}
        self._initial: dict[str, Any] | None = None
        self._asked: tuple[str, int] = ("", 0)  # a start offset's digest, calls with it

    def __getstate__(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "point": self.point,
            "_logs": {},
            "_initial": self._initial,
            "_asked": ("", 0),
        }

    @property
    def _plans(self) -> Path:
        return Path(self.spec.decision_path).parent / "plans"

    def log(self, origin_us: int) -> Any:
        """The log of a run whose scenario time 0 is ``origin_us`` (from the offsets)."""
        if origin_us not in self._logs:
            if self.spec.kind == REDIS:
                from spark_runner.engine.sources.redis_log import RedisLog

                self._logs[origin_us] = RedisLog(self.spec)
            elif self.spec.kind == FILES:
                from spark_runner.engine.sources.file_log import FileLog

                self._logs[origin_us] = FileLog(self.spec, Path(self.spec.decision_path).parent)
            else:
                self._logs[origin_us] = GeneratedLog(self.spec, origin_us)
        return self._logs[origin_us]

    def initialOffset(self) -> dict[str, Any]:
        # Spark asks twice for the first batch: once to plan its end offset (latestOffset's
        # start) and again when it runs it (MicroBatchExecution: no committed offset yet,
        # so ``initialOffset``). Both must be the same offset, or the batch's start cursor
        # and counts disagree (a Redis range then held fewer entries than it counted).
        # Every point's source must start from the same joint offset: the first one
        # writes it, the others read it.
        if self._initial is None:

            def first() -> dict[str, Any]:
                now = now_us()
                return initial_offset(self.spec, self.log(origin_at(self.spec, now)), now).to_json()

            self._initial = shared(self._plans / "initial.json", self._plans, first)
        return self._initial

    # The (start, limit) signature (Spark >= 4.2) makes Spark call this once per trigger
    # with the last offset; the limit is ignored: the class scheduler bounds a batch.
    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        decision = read_decision(self.spec.decision_path)
        key = digest(start)
        if decision.hold and not (self._plans / f"{key}.json").exists():
            return start  # no new data: Spark plans no batch (one planned stays planned)
        round_ = self._asked[1] if self._asked[0] == key else 0
        self._asked = (key, round_ + 1)
        if start != self._initial and decision.pace_s > 0:
            due_us = SourceOffset.from_json(start).t_us + round(decision.pace_s * 1e6)
            if not due(self._plans, key, round_, now_us(), due_us):
                return start
        return shared(self._plans / f"{key}.json", self._plans, lambda: self._plan(start))

    def _plan(self, start: dict[str, Any]) -> dict[str, Any]:
        """The joint end offset of the batch that starts at ``start``."""
        begin = SourceOffset.from_json(start)
        decision = self._decision_after(begin, start)
        if decision.hold:
            return start
        log = self.log(begin.origin_us)
        return next_offset(self.spec, log, begin, decision, now_us()).to_json()

    def _decision_after(self, begin: SourceOffset, start: dict[str, Any]) -> Decision:
        """The newest decision, once the controller has stepped on the batch that ended at
        ``begin`` (it steps when that batch's progress is reported, a few ms after its
        commit); after ``DECISION_WAIT_S`` the newest one there is."""
        decision = read_decision(self.spec.decision_path)
        if decision.admit_all or start == self._initial:
            return decision
        deadline = time.monotonic() + DECISION_WAIT_S
        while decision.after_us < begin.t_us and not decision.hold:
            if time.monotonic() >= deadline:
                break
            time.sleep(DECISION_POLL_S)
            decision = read_decision(self.spec.decision_path)
        return decision

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        a, b = SourceOffset.from_json(start), SourceOffset.from_json(end)
        decision = b.decision or ADMIT_ALL
        edge_shed = [b.edge_shed(name) for _, name in self.spec.edge_classes]
        groups = (
            [piece for piece in group if piece.point == self.point]
            for group in plan_partitions(self.spec, a, b, decision.costs_s)
        )
        point = self.spec.points[self.point]
        kept = decision.range_s(point.class_name, self.spec.margin_s(self.point))
        return [FeedPartition(group, edge_shed, b.origin_us, kept) for group in groups if group]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FeedPartition)
        log = self.log(partition.origin_us)
        own = stream_columns(self.spec, self.point)
        names = [name for name, _, _ in BASE_FIELDS] + [c.name for c in own]
        names += [shed_column(k) for k, _ in self.spec.edge_classes] + [READ_COLUMN]
        event_time = self.spec.streams[self.spec.points[self.point].stream].event_time
        began = time.perf_counter()
        for piece in partition.slices:
            columns = log.rows(piece)
            rows = len(columns["seq"])
            arrays = [pa.array(columns[name], type=t) for name, _, t in BASE_FIELDS]
            arrays += [arrow_array(c, columns[c.name]) for c in own]
            arrays += [pa.array(np.full(rows, fraction)) for fraction in partition.edge_shed]
            batch = pa.RecordBatch.from_arrays(arrays, names=names[:-1])
            if partition.range_s is not None:
                seconds = event_seconds(columns[event_time or "arrival_s"])
                low, high = partition.range_s
                batch = batch.filter(pa.array((seconds >= low) & (seconds < high)))
            now = time.perf_counter()
            read_s = pa.array(read_times(batch.num_rows, now - began))
            began = now
            yield pa.RecordBatch.from_arrays([*batch.columns, read_s], names=names)

    def stop(self) -> None:
        """The query stops. Spark closes its connection to the process running this
        reader, which then fails to send its end-of-file error back over it and prints
        both tracebacks on the job's log (when it notices before Spark ends it): nothing
        is lost, so the rest of this process's error output is dropped. An error while
        the query runs still reaches Spark over the connection, which is open then."""
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 -- open until the process exits

    def commit(self, end: dict[str, Any]) -> None:
        # Nothing to release (the offsets say what every batch held) but old plans.
        for pattern in ("[0-9a-f]*.json", "[0-9a-f]*.wait"):
            files = sorted(self._plans.glob(pattern), key=lambda p: p.stat().st_mtime)
            for old in files[:-PLANS_KEPT]:
                old.unlink(missing_ok=True)


def digest(offset: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(offset, sort_keys=True).encode()).hexdigest()[:32]


def due(directory: Path, key: str, round_: int, at_us: int, due_us: int) -> bool:
    """Whether the batch after the start offset ``key`` may be planned at ``at_us``, asked
    by a source for the ``round_``-th time with that start (0 first). The first source
    asked in a round decides it, yes once ``due_us`` has passed, and every source asked
    later in that round follows its verdict, however late its call comes or whatever
    pace a newer decision says. The verdicts are recorded for the others: the rounds
    declined, then ``GO``."""
    directory.mkdir(parents=True, exist_ok=True)
    verdict = directory / f"{key}.wait"
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            said = verdict.read_text(encoding="utf-8")
        except FileNotFoundError:
            said = "0"
        if said == GO or (directory / f"{key}.json").exists():
            return True
        if round_ < (int(said) if said.isdigit() else 0):
            return False
        go = at_us >= due_us
        verdict.write_text(GO if go else str(round_ + 1), encoding="utf-8")
        return go


def shared(path: Path, directory: Path, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The JSON at ``path``, computed (and written) by the first caller under a lock."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            pass
        value = compute()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(value), encoding="utf-8")
        os.replace(tmp, path)
        return value


class FeedSource(DataSource):
    """The ``headroom_feed`` source; options ``spec`` (path of a :class:`FeedSpec` JSON)
    and ``point`` (the index of the point it reads)."""

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
        return spark_schema(self._spec(), self._point(self._spec()))

    def _point(self, spec: FeedSpec) -> int:
        try:
            point = int(self.options[OPTION_POINT])
            spec.points[point]
        except (KeyError, ValueError, IndexError) as exc:
            raise ValueError(
                f"data source {SOURCE_NAME!r} needs option {OPTION_POINT!r}, the index of one "
                f"of the feed's {len(spec.points)} points: {exc}"
            ) from exc
        return point

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        spec = self._spec()
        return FeedReader(spec, self._point(spec))

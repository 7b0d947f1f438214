"""The scenario's operator network as Spark operators on the streaming DataFrame.

Built once when the query starts, from one headroom source per point (where a class reads
a stream; rows ``point, seq, arrival_s``, the stream's own columns and a ``shed_<k>`` per
edge-shedding class). Every operator is a Spark operator that runs in the executors;
nothing of a batch's tuples comes to the driver:

- a filter is ``where`` of its checked predicate; a projection keeps its columns (and the
  engine's own); a map computes its checked expression (into an existing column: cast to
  its type) and burns its CPU cost (see :mod:`expressions`);
- a window aggregate is ``groupBy(window(event_time, size, slide), group…)`` with its
  function as ``value``, ``max(arrival_s)`` and the update output mode, its state in
  Spark's state store (RocksDB) under the checkpoint;
- a window join is a stream-stream inner join on ``on_column`` with the time range
  ``|left − right| ≤ size`` on event time, its state in the state store too; its output
  has the left side's columns and the right side's (``<name>_r`` where both have one,
  compared case-insensitively: :func:`~spark_runner.scenario.columns.join_columns`);
- event time is the stream's ``event_time`` column, else the tuple's arrival instant,
  with a watermark ``watermark_s`` behind the newest: older state is dropped, and a tuple
  that waited longer than that in the log is late for a window (Spark drops it; the
  counts show it);
- where a lower class starts after a higher class's shared segment it sheds its fraction
  on the edge (a deterministic hash, :func:`expressions.edge_shed_sql`).

Every query's output — ``class``, ``query``, its own columns and ``arrival_s`` — is
unioned by name into the one DataFrame the sink writes (a column a query lacks is null
in its rows; a name two queries give different types is written as a string). Every
*use* of a node's tuples (an edge, or the output) carries an ``observe`` whose counts and
arrival statistics come back with the batch's progress event (:mod:`measures` reads them);
a use of a point also sums its rows' ``read_s`` (the time its source took to produce them,
which Spark's executor CPU does not count) and drops that column.

A DataFrame used by two consumers is computed once per consumer (Spark reuses no
subplan between the branches of a streaming union): a point read by two queries of its
class is scanned twice, and a shared segment runs once per reader.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from spark_runner.engine.dataflow.expressions import checked_sql, edge_shed_sql
from spark_runner.engine.dataflow.network import LEFT, RIGHT, NetworkPlan, PlanNode
from spark_runner.engine.measure.measures import QUANTILE_LEVELS, Use
from spark_runner.scenario.columns import (
    CLASS_COLUMN,
    EVENT_TIME,
    QUERY_COLUMN,
    READ_COLUMN,
    WINDOW_BOUNDS,
    data_column,
    join_columns,
)
from spark_runner.scenario.models import (
    FilterOp,
    MapOp,
    ProjectOp,
    SqlOp,
    WindowAggregateOp,
    WindowJoinOp,
)
from spark_runner.scenario.sql_query import check_query

QUANTILE_ACCURACY = 100
"""percentile_approx accuracy: rank error about 1 %, sketches of a few kB per task."""


@dataclass(frozen=True)
class Dataflow:
    """The union of every query's output, and what each ``observe`` in it measures."""

    output: DataFrame
    uses: tuple[Use, ...]


def build_dataflow(
    points: Sequence[DataFrame],
    plan: NetworkPlan,
    *,
    origin_s: float,
    watermark_s: float,
    burn: Mapping[int, int],
    burn_sql: Callable[[str], str],
) -> Dataflow:
    """The network of ``plan`` on the sources of its ``points`` (lazy). ``burn``: per map
    node, the amount its
    CPU burn takes; ``burn_sql``: a function of that amount (as SQL text) to a predicate
    that is never true and burns it."""
    return _Builder(plan, origin_s, watermark_s, burn, burn_sql).build(points)


class _Builder:
    def __init__(
        self,
        plan: NetworkPlan,
        origin_s: float,
        watermark_s: float,
        burn: Mapping[int, int],
        burn_sql: Callable[[str], str],
    ) -> None:
        self.plan = plan
        self.origin_s = origin_s
        self.watermark_s = watermark_s
        self.burn = burn
        self.burn_sql = burn_sql
        self.frames: dict[int, DataFrame] = {}
        self.uses: list[Use] = []
        self.outputs: list[DataFrame] = []
        self.token = uuid.uuid4().hex[:8]  # names this build's temporary views
        self._answering = self._answering_uses()

    def _answering_uses(self) -> dict[tuple[int, int | None], str]:
        """(node, child) of every use whose tuples are answers (see :mod:`measures`)."""
        found: dict[tuple[int, int | None], str] = {}
        for node in self.plan.nodes:
            if node.output is None:
                continue
            if isinstance(node.model, WindowAggregateOp | SqlOp):
                for parent in self.plan.graph.parents[node.index]:
                    found[(parent, node.index)] = node.output[0]
            else:
                found[(node.index, None)] = node.output[0]
        return found

    def build(self, points: Sequence[DataFrame]) -> Dataflow:
        delay = f"{max(1, round(self.watermark_s * 1000))} milliseconds"
        arrival = F.expr("timestamp_micros(CAST(round(arrival_s * 1000000) AS BIGINT))")
        sources = []
        for point, rows in zip(self.plan.points, points, strict=True):
            # One watermarked column per stream (Spark allows no second): ``event_time``, a
            # copy of the stream's event-time column, else the arrival instant.
            column = self.plan.scenario.stream(point.stream).event_time
            event_time = arrival if column is None else F.col(column)
            sources.append(rows.withColumn(EVENT_TIME, event_time).withWatermark(EVENT_TIME, delay))
        for i in self.plan.graph.order:
            node = self.plan.nodes[i]
            self.frames[i] = self._node(sources, node)
            if node.output is not None:
                self.outputs.append(self._output(node))
        return Dataflow(_union(self.outputs), tuple(self.uses))

    # --- uses ----------------------------------------------------------------------------

    def _observe(self, df: DataFrame, use: Use) -> DataFrame:
        metrics: list[Column] = [F.count(F.lit(1)).alias("n")]
        if use.answers is not None:
            rel = F.col("arrival_s") - F.lit(self.origin_s)
            levels = F.array(*(F.lit(level) for level in QUANTILE_LEVELS))
            metrics += [
                F.sum(rel).alias("sum"),
                F.min(rel).alias("min"),
                F.max(rel).alias("max"),
                F.percentile_approx(rel, levels, QUANTILE_ACCURACY).alias("q"),
            ]
        self.uses.append(use)
        return df.observe(use.name, *metrics)

    def _edge(self, parent: int, child: int, side: int) -> DataFrame:
        route = next(
            r for r in self.plan.nodes[parent].routes if r.child == child and r.side == side
        )
        use = Use(
            name=f"e{parent}_{child}_{side}",
            node=parent,
            child=child,
            side=side,
            shed_class=route.shed_class,
            answers=self._answering.get((parent, child)),
            reads=self.plan.nodes[parent].point is not None,
        )
        df = self.frames[parent]
        if use.reads:  # each use of a point scans it: the scan's read time, then no more
            df = df.observe(use.read_name, F.sum(READ_COLUMN).alias("s")).drop(READ_COLUMN)
        if route.shed_class >= 0:
            df = df.observe(use.shed_name, F.count(F.lit(1)).alias("n"))
            df = df.where(f"NOT ({edge_shed_sql(route.shed_class, child)})")
        return self._observe(df, use)

    # --- operators -----------------------------------------------------------------------

    def _node(self, sources: Sequence[DataFrame], node: PlanNode) -> DataFrame:
        model = node.model
        if node.point is not None:
            return sources[node.point]
        parents = self.plan.graph.parents[node.index]
        if isinstance(model, WindowJoinOp):
            assert node.left is not None and node.right is not None
            left = self._edge(node.left, node.index, LEFT)
            return _join(model, left, self._edge(node.right, node.index, RIGHT))
        if isinstance(model, SqlOp):
            return self._sql(model, node)
        (parent,) = parents
        df = self._edge(parent, node.index, LEFT)
        if isinstance(model, FilterOp):
            return df.where(checked_sql(model))
        if isinstance(model, ProjectOp):
            return df.select(*[c for c in df.columns if c in model.columns or not data_column(c)])
        if isinstance(model, MapOp):
            value = F.expr(checked_sql(model))
            if model.output in df.columns:
                value = value.cast(df.schema[model.output].dataType)
            df = df.withColumn(model.output, value)
            if node.index in self.burn:
                df = df.where(f"NOT ({self.burn_sql(str(self.burn[node.index]))})")
            return df
        assert isinstance(model, WindowAggregateOp)
        return _aggregate(model, df)

    def _sql(self, model: SqlOp, node: PlanNode) -> DataFrame:
        """The statement on temporary views of its inputs' rows (checked again here)."""
        scenario = self.plan.scenario
        checked = check_query(model.statement, {s.name: s.sql_columns for s in scenario.streams})
        inputs = [(checked.streams[0], node.left, LEFT)]
        if node.right is not None:
            inputs.append((checked.streams[1], node.right, RIGHT))
        views: dict[str, str] = {}
        df: DataFrame | None = None
        for stream, parent, side in inputs:
            assert parent is not None
            df = self._edge(parent, node.index, side)
            views[stream] = f"headroom_{self.token}_{node.index}_{side}"
            df.createOrReplaceTempView(views[stream])
        assert df is not None
        return df.sparkSession.sql(checked.render(views))

    def _output(self, node: PlanNode) -> DataFrame:
        assert node.output is not None
        cls, query = node.output
        df = self.frames[node.index]
        columns = [F.lit(cls).alias(CLASS_COLUMN), F.lit(query).alias(QUERY_COLUMN)]
        columns += [F.col(f"`{c}`") for c in df.columns if data_column(c)]
        if "arrival_s" in df.columns:
            columns.append(F.col("arrival_s"))
        use = Use(
            name=f"o{node.index}",
            node=node.index,
            child=None,
            answers=self._answering.get((node.index, None)),
        )
        return self._observe(df.select(*columns), use)


def _union(outputs: Sequence[DataFrame]) -> DataFrame:
    """Every output by name; a column two outputs give different types becomes a string."""
    types: dict[str, set[str]] = {}
    for df in outputs:
        for f in df.schema.fields:
            types.setdefault(f.name, set()).add(f.dataType.simpleString())
    mixed = {name for name, kinds in types.items() if len(kinds) > 1}
    frames = [
        df.select(*[F.col(c).cast("STRING").alias(c) if c in mixed else c for c in df.columns])
        for df in outputs
    ]
    union = frames[0]
    for other in frames[1:]:
        union = union.unionByName(other, allowMissingColumns=True)
    return union


def _aggregate(model: WindowAggregateOp, df: DataFrame) -> DataFrame:
    size = f"{round(model.window.size_s * 1000)} milliseconds"
    slide = f"{round((model.window.slide_s or model.window.size_s) * 1000)} milliseconds"
    function = {"count": F.count, "sum": F.sum, "avg": F.avg, "min": F.min, "max": F.max}[
        model.function
    ]
    value = F.count(F.lit(1)) if model.function == "count" else function(F.col(model.column))
    grouped = df.groupBy(F.window(EVENT_TIME, size, slide).alias("w"), *model.group_by).agg(
        value.cast("DOUBLE").alias("value"), F.max("arrival_s").alias("arrival_s")
    )
    start, end = WINDOW_BOUNDS
    return grouped.select(
        *model.group_by,
        F.col("value"),
        (F.unix_micros(F.col("w.start")) / 1e6).alias(start),
        (F.unix_micros(F.col("w.end")) / 1e6).alias(end),
        F.col("arrival_s"),
    )


def _join(model: WindowJoinOp, left: DataFrame, right: DataFrame) -> DataFrame:
    mine = [c for c in left.columns if data_column(c)]
    theirs = [c for c in right.columns if data_column(c)]
    size = f"INTERVAL {round(model.window.size_s * 1000)} MILLISECONDS"
    on = model.on_column
    joined = left.alias("l").join(
        right.alias("r"),
        F.expr(
            f"l.`{on}` = r.`{on}` AND r.{EVENT_TIME} BETWEEN l.{EVENT_TIME} - {size} "
            f"AND l.{EVENT_TIME} + {size}"
        ),
    )
    named = zip(theirs, join_columns(mine, theirs), strict=True)
    return joined.select(
        *[F.col(f"l.`{c}`").alias(c) for c in mine],
        *[F.col(f"r.`{c}`").alias(name) for c, name in named],
        F.greatest(F.col("l.arrival_s"), F.col("r.arrival_s")).alias("arrival_s"),
    )


__all__ = ["Dataflow", "build_dataflow"]

"""Executor CPU time per query branch of a batch, read from Spark's status store.

Spark fuses a branch's operators into a few code-generated stages, so no operator's own
time can be read; what Spark does record exactly is every task's CPU time (the
executor's thread; waits — a state store's commit, the shuffle — are not in it and
stay in the batch's fixed time; the Python reader's work, not in it either, the reader
measures itself: ``read_s`` in :mod:`source`). A batch's tasks split by *branch* —
one query's output and every operator above it (its union child in the dataflow; a
shared segment is computed once per reader, so its time falls to each reader's branch):

- a stage whose code-generated stages (``WholeStageCodegen (n)`` in its operation graph)
  all lie under one branch's output — the map side of a window or a join, or the whole
  batch when one query runs — belongs to that branch, all its tasks;
- the final stage computes the union: its task ``i`` is the union's partition ``i``, and
  the union's partitions are its children's, in order, so each task belongs to the branch
  whose partitions hold ``i``;
- a stage that fits neither (e.g. the Redis sink coalesces the union into one task) is
  *unattributed*: its time is reported apart.

:class:`BranchLayout` is that mapping (pure, built once from the executed plan);
:class:`TaskTimes` reads the status store through the driver's JVM gateway after each
batch: the jobs of the query's run (Spark names them by the run's id as their job
group; ``batch = <id>`` in their description), their stages' CPU time, and for the
final stage its tasks'. It takes a handful of gateway calls per stage (its operation graph
included: 1–3 ms). It imports no Spark: the caller hands in the JVM handles.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

CODEGEN = re.compile(r"WholeStageCodegen \((\d+)\)")
BATCH_DESCRIPTION = re.compile(r"\bbatch = (\d+)\s*$")
OUTPUT_OBSERVATION = re.compile(r"o(\d+)")
"""The dataflow's observe on a query output: ``o<node index>``."""


@dataclass(frozen=True)
class Branch:
    """One query output's share of the executed plan."""

    output: int
    """The output node's index in the network plan."""
    partitions: int
    """Its union child's partitions (tasks of the final stage), when Spark fixed them (a
    shuffle's); 0 when they are its point's, which change from batch to batch."""
    codegen: frozenset[int]
    """The code-generated stages under it."""
    point: int | None = None
    """The point whose partitions a branch without a shuffle on top has."""


@dataclass(frozen=True)
class BranchLayout:
    """Which branch a stage or a final-stage task belongs to."""

    branches: tuple[Branch, ...]

    def owner_of_codegen(self, ids: Sequence[int]) -> int | None:
        """The output whose branch holds every one of the code-generated stages ``ids``
        that lie in any branch; None when they span several branches or none."""
        owners = {b.output for b in self.branches for i in ids if i in b.codegen}
        return next(iter(owners)) if len(owners) == 1 else None

    def partitions(self, point_partitions: Sequence[int]) -> list[int] | None:
        """Every branch's partitions in a batch whose points had ``point_partitions``
        (None when a branch's cannot be told)."""
        counts = []
        for b in self.branches:
            if b.partitions:
                counts.append(b.partitions)
            elif b.point is not None and b.point < len(point_partitions):
                counts.append(point_partitions[b.point])
            else:
                return None
        return counts

    def owner_of_task(self, index: int, partitions: Sequence[int]) -> int | None:
        """The output whose union child holds the final stage's partition ``index``."""
        first = 0
        for b, n in zip(self.branches, partitions, strict=True):
            if first <= index < first + n:
                return b.output
            first += n
        return None


@dataclass
class BatchTaskTimes:
    """Executor CPU seconds of the jobs read: per output node, and what fits no branch."""

    by_output: dict[int, float] = field(default_factory=dict)
    unattributed_s: float = 0.0

    def add(self, output: int | None, seconds: float) -> None:
        if output is None:
            self.unattributed_s += seconds
        else:
            self.by_output[output] = self.by_output.get(output, 0.0) + seconds


def layout_of(plan: Any, point_of: Mapping[int, int]) -> BranchLayout | None:
    """The branches of an executed plan (a JVM ``SparkPlan``): the children of its union,
    or the plan itself when it has one output; None when no output observation is
    found (a plan this module does not know). ``point_of``: the point each output reads
    when it reads one."""
    union = _find(plan, lambda node: node.nodeName() == "Union")
    children = _children(union) if union is not None else [plan]
    branches = []
    for child in children:
        output = _output_of(child)
        if output is None:
            return None
        codegen = frozenset(_codegen_ids(child))
        fixed = int(child.outputPartitioning().numPartitions())
        branches.append(Branch(output, fixed, codegen, point_of.get(output)))
    return BranchLayout(tuple(branches))


def _children(node: Any) -> list[Any]:
    seq = node.children()
    return [seq.apply(i) for i in range(seq.size())]


def _find(node: Any, wanted: Any) -> Any | None:
    if wanted(node):
        return node
    for child in _children(node):
        found = _find(child, wanted)
        if found is not None:
            return found
    return None


def _output_of(node: Any) -> int | None:
    """The output node of the first ``o<index>`` observation at or under ``node``."""
    found = _find(
        node,
        lambda n: (
            n.nodeName() == "CollectMetrics"
            and OUTPUT_OBSERVATION.fullmatch(str(n.name())) is not None
        ),
    )
    if found is None:
        return None
    match = OUTPUT_OBSERVATION.fullmatch(str(found.name()))
    return int(match.group(1)) if match else None


def _codegen_ids(node: Any) -> list[int]:
    ids = []
    match = CODEGEN.fullmatch(str(node.nodeName()))
    if match:
        ids.append(int(match.group(1)))
    for child in _children(node):
        ids += _codegen_ids(child)
    return ids


class TaskTimes:
    """Reads the executor CPU time of a query's batches from the driver's status store.

    Args:
        jvm: the gateway's JVM view (``spark.sparkContext._jvm``).
        context: the JVM ``SparkContext`` (``spark.sparkContext._jsc.sc()``).
        streaming_query: the JVM ``StreamExecution`` (``query._jsq.streamingQuery()``).
        run_id: the query's run id, Spark's job group for its batches.
        point_of: the point each query output reads, where it reads one.
        settle_s: how long to wait for the store to see a batch's last tasks (its
            listener runs behind the scheduler), s.
    """

    def __init__(
        self,
        jvm: Any,
        context: Any,
        streaming_query: Any,
        run_id: str,
        point_of: Mapping[int, int],
        settle_s: float = 0.1,
    ) -> None:
        self._jvm = jvm
        self._store = context.statusStore()
        self._tracker = context.statusTracker()
        self._query = streaming_query
        self._group = run_id
        self._point_of = dict(point_of)
        self._settle_s = settle_s
        self._last_job = -1
        self.layout: BranchLayout | None = None

    def _ensure_layout(self) -> BranchLayout | None:
        if self.layout is None:
            execution = self._query.lastExecution()
            if execution is not None:
                self.layout = layout_of(execution.executedPlan(), self._point_of)
                if self.layout is None:
                    log.warning("the executed plan has no branch this engine knows")
        return self.layout

    def read(self, batch_id: int, point_partitions: Sequence[int]) -> BatchTaskTimes | None:
        """Executor seconds of batch ``batch_id``'s jobs, whose points had
        ``point_partitions`` partitions; None when they cannot be read whole (the plan
        is unknown, or a job did not finish within ``settle_s``)."""
        layout = self._ensure_layout()
        if layout is None:
            return None
        deadline = time.monotonic() + self._settle_s
        while True:
            times = self._read_batch(layout, batch_id, point_partitions)
            if times is not None or time.monotonic() >= deadline:
                return times
            time.sleep(0.01)

    def _read_batch(
        self, layout: BranchLayout, batch_id: int, point_partitions: Sequence[int]
    ) -> BatchTaskTimes | None:
        times = BatchTaskTimes()
        partitions = layout.partitions(point_partitions)
        jobs = sorted(int(j) for j in self._tracker.getJobIdsForGroup(self._group))
        mine = [j for j in jobs if j > self._last_job and self._batch_of(j) == batch_id]
        for job_id in mine:
            info = self._tracker.getJobInfo(job_id)
            if info.isEmpty() or str(info.get().status().toString()) != "SUCCEEDED":
                return None
            stages = sorted(int(s) for s in info.get().stageIds())
            if not self._read_job(layout, stages, partitions, times):
                return None
        if mine:
            self._last_job = max(mine)
        return times

    def _batch_of(self, job_id: int) -> int | None:
        """The batch a job ran for (Spark describes a batch's jobs ``… batch = <id>``)."""
        description = self._store.job(job_id).description()
        if description.isEmpty():
            return None
        match = BATCH_DESCRIPTION.search(str(description.get()))
        return int(match.group(1)) if match else None

    def _read_job(
        self,
        layout: BranchLayout,
        stages: Sequence[int],
        partitions: Sequence[int] | None,
        times: BatchTaskTimes,
    ) -> bool:
        """Add a job's stages to ``times``; False when a stage has not finished (the
        caller then drops the whole batch's reading)."""
        for stage_id in stages:
            try:
                stage = self._store.lastStageAttempt(stage_id)
            except Exception:  # py4j: a skipped stage has no attempt
                continue
            status = str(stage.status().toString())
            if status == "SKIPPED":
                continue
            if status != "COMPLETE" or stage.numCompleteTasks() < stage.numTasks():
                return False
            tasks = int(stage.numTasks())
            owner = self._owner(layout, stage_id)
            if owner is not None or partitions is None or tasks != sum(partitions):
                times.add(owner, int(stage.executorCpuTime()) / 1e9)
                continue
            task_list = self._store.taskList(stage_id, int(stage.attemptId()), tasks)
            for i in range(task_list.size()):
                task = task_list.apply(i)
                metrics = task.taskMetrics()
                if metrics.isDefined():
                    seconds = int(metrics.get().executorCpuTime()) / 1e9
                    times.add(layout.owner_of_task(int(task.index()), partitions), seconds)
        return True

    def _owner(self, layout: BranchLayout, stage_id: int) -> int | None:
        """The output a stage belongs to, from its operation graph (read for every stage:
        the same stages come in another order from one batch to the next; 1–3 ms each
        here)."""
        if len(layout.branches) == 1:
            return layout.branches[0].output
        return layout.owner_of_codegen(self._codegen_of(stage_id))

    def _codegen_of(self, stage_id: int) -> list[int]:
        graph = self._store.operationGraphForStage(stage_id)
        dot = str(self._jvm.org.apache.spark.ui.scope.RDDOperationGraph.makeDotFile(graph))
        return [int(i) for i in CODEGEN.findall(dot)]

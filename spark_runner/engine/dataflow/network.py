"""The scenario's operator network as the Spark engine runs it (no Spark import).

The network is the simulator's (:func:`spark_runner.control.network.build_network`): the same
operator ids, the same source operator per (class, stream) pair — a *point*, where the
class's tuples enter and where it sheds —, the same shared segments owned by the
highest-priority class that reads them (the core's :class:`SharingPlan`). This module adds
what execution needs:

- each node's *routes*: the edges to the operators it feeds, with the side of a join (from
  the inputs the simulator's network records) and the class that sheds on the edge (a
  lower class reading a higher class's segment sheds where it starts).

Rules of the Spark engine beyond the scenario format (:func:`engine_issues`): window
aggregates and window joins are the last operator of a query and do not appear in shared
segments (their updates cannot feed another operator: see :mod:`dataflow`). That a map
overwrites none of the engine's own columns (``seq``, ``arrival_s`` …) the scenario format
itself checks (:class:`~spark_runner.scenario.models.MapOp`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from spark_runner.control.network import build_network
from spark_runner.core.operator_graph import OperatorGraph
from spark_runner.core.sharing import SharingPlan
from spark_runner.engine.sources.columns import ColumnSpec
from spark_runner.engine.sources.streams import StreamSpec
from spark_runner.scenario.arrivals import build_schedule
from spark_runner.scenario.errors import Issue, ScenarioError
from spark_runner.scenario.models import (
    OperatorModel,
    Scenario,
    SqlOp,
    WindowAggregateOp,
    WindowJoinOp,
)
from spark_runner.scenario.validate import segment_operators

STATEFUL_KINDS = ("window_aggregate", "window_join")

LEFT, RIGHT = 0, 1


@dataclass(frozen=True, slots=True)
class Route:
    """An edge a tuple takes after its node's operation.

    Attributes:
        child: index of the node it goes to.
        side: ``LEFT``/``RIGHT`` when ``child`` is a join, else ``LEFT``.
        shed_class: index (in ``NetworkPlan.class_names``) of the class that sheds on
            this edge, or -1.
    """

    child: int
    side: int
    shed_class: int


@dataclass(frozen=True, slots=True)
class PlanNode:
    """One operator of the network.

    Attributes:
        index: position in ``NetworkPlan.nodes`` (also the core graph's index).
        op_id: the operator id (the simulator's and the core's).
        kind: ``source`` or an operator kind.
        owner: the class that owns the node (runs it in its quota).
        model: the scenario operator (``None`` for a source).
        routes: where its tuples go after its operation.
        output: ``(class, query)`` when it is a query's last operator.
        point: the point index of a source node.
        left, right: a join's two input nodes.
    """

    index: int
    op_id: str
    kind: str
    owner: str
    model: OperatorModel | None
    routes: tuple[Route, ...]
    output: tuple[str, str] | None = None
    point: int | None = None
    left: int | None = None
    right: int | None = None

    @property
    def stateful(self) -> bool:
        return self.kind in STATEFUL_KINDS or (
            isinstance(self.model, SqlOp) and self.model.stateful
        )


@dataclass(frozen=True, slots=True)
class Point:
    """Where one class reads one stream: its source node, and its shedding point."""

    index: int
    node: int
    op_id: str
    class_name: str
    stream: str


@dataclass(frozen=True)
class NetworkPlan:
    """The compiled network of a scenario (see module docstring)."""

    scenario: Scenario
    nodes: tuple[PlanNode, ...]
    points: tuple[Point, ...]
    class_names: tuple[str, ...]
    """Highest priority first (ties by name): the core's order."""
    graph: OperatorGraph
    sharing: SharingPlan

    @property
    def priorities(self) -> dict[str, float]:
        return {c.name: c.priority for c in self.scenario.classes}

    def class_index(self, name: str) -> int:
        return self.class_names.index(name)

    @property
    def edge_classes(self) -> tuple[int, ...]:
        """Indices of the classes that shed on an edge inside Spark (after a higher
        class's shared segment); the source gives their shed fraction to every row."""
        return tuple(
            sorted({r.shed_class for n in self.nodes for r in n.routes if r.shed_class >= 0})
        )

    @property
    def outputs(self) -> list[PlanNode]:
        return [n for n in self.nodes if n.output is not None]

    def output_rank(self, node: PlanNode) -> int:
        """An output node's class's rank (0: the highest priority)."""
        assert node.output is not None, f"{node.op_id} is no query's output"
        return self.class_index(node.output[0])

    def point_of_node(self, index: int) -> Point | None:
        node = self.nodes[index]
        return self.points[node.point] if node.point is not None else None

    def needed_by(self, index: int) -> list[int]:
        """The nodes whose tuples node ``index`` needs: it and every node upstream of it."""
        found, todo = {index}, [index]
        while todo:
            for parent in self.graph.parents[todo.pop()]:
                if parent not in found:
                    found.add(parent)
                    todo.append(parent)
        return sorted(found)

    def point_read_by(self, index: int) -> int | None:
        """The point node ``index`` reads, when it reads one (not a join's two)."""
        points = [p for i in self.needed_by(index) if (p := self.nodes[i].point) is not None]
        return points[0] if len(points) == 1 else None


class EngineScenarioError(ScenarioError):
    """The scenario is valid but uses something the Spark engine does not run."""


def engine_issues(scenario: Scenario) -> list[Issue]:
    """Rules the Spark engine adds to the scenario format (see module docstring)."""
    issues: list[Issue] = []
    stateful = (WindowAggregateOp, WindowJoinOp)
    for path, op in segment_operators(scenario):
        if isinstance(op, stateful):
            issues.append(
                Issue(
                    path,
                    f"{op.kind} in a shared segment: the Spark engine runs window "
                    "operators only as a query's last operator",
                )
            )
    for i, qc in enumerate(scenario.classes):
        for j, query in enumerate(qc.queries):
            last = len(query.operators) - 1
            for k, op in enumerate(query.operators):
                path = f"classes[{i}].queries[{j}].operators[{k}]"
                if isinstance(op, stateful) and k != last:
                    issues.append(
                        Issue(
                            path,
                            f"{op.kind} followed by {len(query.operators) - 1 - k} more "
                            "operator(s): the Spark engine runs window operators only as a "
                            "query's last operator",
                        )
                    )
    return issues


def compile_network(scenario: Scenario) -> NetworkPlan:
    """The executable network of a validated scenario (``EngineScenarioError`` if the
    Spark engine cannot run it)."""
    issues = engine_issues(scenario)
    if issues:
        raise EngineScenarioError(issues, scenario.name)
    net = build_network(scenario)
    graph = net.graph
    priorities = net.priorities
    sharing = SharingPlan.build(graph, priorities)
    class_names = net.class_order
    class_index = {name: k for k, name in enumerate(class_names)}

    points: list[Point] = []
    point_of: dict[int, int] = {}
    for i, node in enumerate(net.nodes):
        if node.kind == "source":
            assert node.stream is not None
            point_of[i] = len(points)
            points.append(Point(len(points), i, node.op_id, sharing.owner[i], node.stream))

    nodes: list[PlanNode] = []
    for i, node in enumerate(net.nodes):
        left_id, right_id = node.inputs or (None, None)
        left = graph.index(left_id) if left_id is not None else None
        right = graph.index(right_id) if right_id is not None else None
        routes: list[Route] = []
        for j in graph.children[i]:
            child = net.nodes[j]
            shed_class = (
                class_index[sharing.owner[j]] if sharing.owner[j] != sharing.owner[i] else -1
            )
            c_left, c_right = child.inputs or (None, None)
            if c_right is not None:
                if c_left == node.op_id:
                    routes.append(Route(j, LEFT, shed_class))
                if c_right == node.op_id:
                    routes.append(Route(j, RIGHT, shed_class))
            else:
                routes.append(Route(j, LEFT, shed_class))
        nodes.append(
            PlanNode(
                index=i,
                op_id=node.op_id,
                kind=node.kind,
                owner=sharing.owner[i],
                model=node.model,
                routes=tuple(routes),
                output=node.output,
                point=point_of.get(i),
                left=left,
                right=right,
            )
        )
    return NetworkPlan(
        scenario=scenario,
        nodes=tuple(nodes),
        points=tuple(points),
        class_names=tuple(class_names),
        graph=graph,
        sharing=sharing,
    )


def stream_specs(scenario: Scenario) -> dict[str, StreamSpec]:
    """Every stream's schedule, drawn exactly as the simulator draws it."""
    out: dict[str, StreamSpec] = {}
    for s in scenario.streams:
        schedule = build_schedule(
            s.arrival,
            scenario.duration_s,
            random.Random(f"{scenario.seed}:stream:{s.name}"),
            scenario.control.period_s,
        )
        out[s.name] = StreamSpec(
            name=s.name,
            seed=scenario.seed,
            starts=schedule.starts,
            rates=schedule.rates,
            columns=tuple(
                ColumnSpec(c.name, c.type, c.generator.kind, c.generator.model_dump())
                for c in s.column_specs
            ),
            event_time=s.event_time,
        )
    return out

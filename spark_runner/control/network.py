"""From a scenario to the operator network the simulator runs (and the core's graph of it).

Nodes:

- one *source operator* per (class, stream) pair a class reads directly, id
  ``src:<class>:<stream>``: it reads the stream's tuples (``engine.source_cost_per_tuple_s``
  per tuple) and is where the class sheds (001 §6.1.1). A shared segment reads its stream
  through the source operator of the class that owns it;
- one node per operator of every shared segment (once, whoever uses it) and of every
  query, id ``<class>.<query>.<i>.<kind>`` / ``seg.<segment>.<i>.<kind>`` unless the
  operator is named.

Edges follow the data: a query's first operator reads its source (a stream's source
operator or a segment's last operator); a join also reads its ``right`` input; a query's
last operator is its output. A segment used by several classes belongs to the
highest-priority one (ties: the name that sorts first, as in the core's ``SharingPlan``).

Each node carries the classes that use it, so the core's :class:`OperatorGraph` and
:class:`SharingPlan` decide ownership and shedding points exactly as the Spark runner's
control plane will.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from spark_runner.core.load_model import LoadModel
from spark_runner.core.operator_graph import Operator as GraphOperator
from spark_runner.core.operator_graph import OperatorGraph
from spark_runner.scenario.columns import StreamColumn
from spark_runner.scenario.models import (
    OperatorModel,
    Scenario,
    operator_cost,
    operator_selectivity,
    right_input,
)

Columns = tuple[StreamColumn, ...]
"""A stream's columns, which an operator's selectivity depends on."""


@dataclass
class Node:
    """One operator of the simulated network.

    Attributes:
        op_id: unique id (also its id in the core's graph).
        kind: ``source`` or the operator kind.
        cost_s: true processing cost per input tuple, s.
        selectivity: output tuples per input tuple.
        classes: classes whose queries use the node.
        downstream: ids of the nodes it feeds.
        output: ``(class, query)`` when the node is a query's last operator.
        stream: the stream a source operator reads.
        model: the scenario operator (``None`` for a source).
        inputs: an operator's input node ids: (upstream, a join's right input or
            ``None``); ``None`` for a source.
    """

    op_id: str
    kind: str
    cost_s: float
    selectivity: float
    classes: set[str] = field(default_factory=set)
    downstream: list[str] = field(default_factory=list)
    output: tuple[str, str] | None = None
    stream: str | None = None
    model: OperatorModel | None = None
    inputs: tuple[str, str | None] | None = None


@dataclass
class Network:
    """The simulated operator network of a scenario."""

    nodes: list[Node]
    graph: OperatorGraph
    priorities: dict[str, float]

    def node(self, op_id: str) -> Node:
        return self.nodes[self.graph.index(op_id)]

    @property
    def class_order(self) -> tuple[str, ...]:
        """Class names, highest priority first (ties by name)."""
        return tuple(sorted(self.priorities, key=lambda c: (-self.priorities[c], c)))

    def longest_paths(self) -> dict[str, tuple[float, int]]:
        """Per class, the most expensive way a lone tuple takes from a source to one of
        the class's outputs: (its cost per tuple summed, s; the operators on it)."""
        by_id = {n.op_id: n for n in self.nodes}
        memo: dict[str, dict[str, tuple[float, int]]] = {}

        def ahead(node: Node) -> dict[str, tuple[float, int]]:
            """Per class, the most expensive path from ``node`` (included) to its outputs."""
            if node.op_id not in memo:
                best: dict[str, tuple[float, int]] = {}
                if node.output is not None:
                    best[node.output[0]] = (0.0, 0)
                for d in node.downstream:
                    for name, path in ahead(by_id[d]).items():
                        best[name] = max(best.get(name, path), path)
                memo[node.op_id] = {n: (c + node.cost_s, k + 1) for n, (c, k) in best.items()}
            return memo[node.op_id]

        paths: dict[str, tuple[float, int]] = {}
        for node in self.nodes:
            if node.stream is not None:
                for name, path in ahead(node).items():
                    paths[name] = max(paths.get(name, path), path)
        return paths


def _owner(classes: set[str], priorities: dict[str, float]) -> str:
    return min(classes, key=lambda c: (-priorities[c], c))


def expected_load(network: Network, rates: Mapping[str, float]) -> float:
    """Processor seconds per second the network's operators take at its declared costs
    and selectivities for ``rates`` (tuples/s per stream), nothing shed (Eq. 3.1): the
    expected load ESJ's initial size reads."""
    model = LoadModel(network.graph)
    declare_statistics(model, network)
    model.update(
        source_rates={
            n.op_id: rates.get(n.stream, 0.0) for n in network.nodes if n.stream is not None
        },
    )
    return model.total_load()


def declare_statistics(model: LoadModel, network: Network) -> None:
    """Give ``model`` the network's declared operator costs and selectivities: its prior,
    before anything is measured."""
    model.update(
        costs={n.op_id: n.cost_s for n in network.nodes},
        selectivities={n.op_id: n.selectivity for n in network.nodes},
    )


def _segment_classes(scenario: Scenario) -> dict[str, set[str]]:
    """The classes using each shared segment, transitively through segments feeding
    segments (as a source or a join's right input)."""
    segments = {s.name: s for s in scenario.shared_segments}
    seg_classes: dict[str, set[str]] = {name: set() for name in segments}

    def mark(name: str, cls: str) -> None:
        if name not in segments or cls in seg_classes[name]:
            return
        seg_classes[name].add(cls)
        seg = segments[name]
        mark(seg.source, cls)
        for op in seg.operators:
            if (right := right_input(op)) is not None:
                mark(right, cls)

    for qc in scenario.classes:
        for query in qc.queries:
            mark(query.source, qc.name)
            for op in query.operators:
                if (right := right_input(op)) is not None:
                    mark(right, qc.name)
    return seg_classes


def build_network(scenario: Scenario) -> Network:
    """Build the network of a validated scenario."""
    priorities = {c.name: c.priority for c in scenario.classes}
    streams = {s.name: s for s in scenario.streams}
    segments = {s.name: s for s in scenario.shared_segments}
    seg_classes = _segment_classes(scenario)
    nodes: dict[str, Node] = {}
    order: list[str] = []
    engine = scenario.engine

    def add(node: Node) -> Node:
        if node.op_id in nodes:
            raise ValueError(f"operator id {node.op_id!r} is used twice; name the operators apart")
        nodes[node.op_id] = node
        order.append(node.op_id)
        return node

    def link(src: str, dst: str) -> None:
        if dst not in nodes[src].downstream:
            nodes[src].downstream.append(dst)

    def source_node(owner: str, stream: str, classes: set[str]) -> tuple[str, Columns]:
        op_id = f"src:{owner}:{stream}"
        if op_id not in nodes:
            add(Node(op_id, "source", engine.source_cost_per_tuple_s, 1.0, stream=stream))
        nodes[op_id].classes |= classes
        return op_id, streams[stream].column_specs

    seg_out: dict[str, tuple[str, Columns]] = {}

    def input_node(name: str, owner: str, classes: set[str]) -> tuple[str, Columns]:
        if name in streams:
            return source_node(owner, name, classes)
        return segment_output(name)

    def chain(
        prefix: str,
        ops: list[OperatorModel],
        upstream: tuple[str, Columns],
        owner: str,
        classes: set[str],
    ) -> str:
        up, columns = upstream
        for i, op in enumerate(ops):
            op_id = op.name or f"{prefix}.{i}.{op.kind}"
            node = add(
                Node(
                    op_id,
                    op.kind,
                    operator_cost(op, engine),
                    operator_selectivity(op, columns),
                    set(classes),
                    model=op,
                )
            )
            link(up, node.op_id)
            right: str | None = None
            if (second := right_input(op)) is not None:
                right, _ = input_node(second, owner, classes)
                link(right, node.op_id)
            node.inputs = (up, right)
            up = node.op_id
        return up

    def segment_output(name: str) -> tuple[str, Columns]:
        if name in seg_out:
            return seg_out[name]
        seg = segments[name]
        classes = seg_classes[name]
        owner = _owner(classes, priorities)
        upstream = input_node(seg.source, owner, classes)
        last = chain(f"seg.{name}", list(seg.operators), upstream, owner, classes)
        seg_out[name] = (last, upstream[1])
        return seg_out[name]

    for qc in scenario.classes:
        for query in qc.queries:
            upstream = input_node(query.source, qc.name, {qc.name})
            last = chain(
                f"{qc.name}.{query.name}", list(query.operators), upstream, qc.name, {qc.name}
            )
            nodes[last].output = (qc.name, query.name)

    ordered = [nodes[i] for i in order]
    graph = OperatorGraph(
        GraphOperator(n.op_id, tuple(n.downstream), frozenset(n.classes)) for n in ordered
    )
    return Network(nodes=ordered, graph=graph, priorities=priorities)

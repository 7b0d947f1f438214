"""The static side of a simulated run, as index arrays the hot loop reads.

Built once per run from the network and the load model's plan: who owns each operator,
what it costs and keeps, where its tuples go (and which class sheds on the way), the
expected outputs of a tuple entering it, each class's operators and shedding points, and
the work on each class's most expensive path (its floor). Classes and nodes are indices:
class ``k`` is ``names[k]``, node ``i`` is ``op_ids[i]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from spark_runner.control.network import Network
from spark_runner.core.sharing import SharingPlan
from spark_runner.scenario.models import Engine


@dataclass(frozen=True)
class Topology:
    """Index arrays of one run's network (see the module docstring)."""

    names: tuple[str, ...]
    targets: list[float]
    """Each class's delay target in force: a live change rewrites it in place (the
    operator turns read it for every output)."""
    op_ids: list[str]
    owner: list[int]
    cost: list[float]
    sel: list[float]
    sink: list[int]
    """The class whose output a node is (-1: none)."""
    children: list[list[tuple[int, int]]]
    """Per node, its children with the class that sheds on the edge (-1: same owner)."""
    dout_items: list[list[tuple[int, float]]]
    """Per node, the expected outputs per class of one tuple entering it (no shedding)."""
    owned: list[list[int]]
    """Per class, its operators in topological order."""
    shed_points: list[list[int]]
    sources: list[int]
    """The nodes that read a stream."""
    stream_nodes: dict[str, list[int]]
    floor_work: list[float]
    """Per class, the work of its most expensive path at speed 1 (:meth:`Network.longest_paths`)."""

    @property
    def classes(self) -> range:
        return range(len(self.names))

    @property
    def nodes(self) -> range:
        return range(len(self.op_ids))


def build_topology(
    network: Network, plan: SharingPlan, targets: dict[str, float], engine: Engine
) -> Topology:
    """The index arrays of ``network`` under ``plan``'s ownership and shedding points."""
    graph = network.graph
    names = list(network.class_order)
    kidx = {n: k for k, n in enumerate(names)}
    n_nodes = len(network.nodes)
    owner = [kidx[plan.owner[i]] for i in range(n_nodes)]
    sel = [n.selectivity for n in network.nodes]
    sink = [kidx[n.output[0]] if n.output else -1 for n in network.nodes]
    children: list[list[tuple[int, int]]] = [
        [(j, owner[j] if owner[j] != owner[i] else -1) for j in graph.children[i]]
        for i in range(n_nodes)
    ]
    stream_nodes: dict[str, list[int]] = {}
    for i, node in enumerate(network.nodes):
        if node.stream is not None:
            stream_nodes.setdefault(node.stream, []).append(i)
    return Topology(
        names=tuple(names),
        targets=[targets[n] for n in names],
        op_ids=list(graph.ids),
        owner=owner,
        cost=[n.cost_s for n in network.nodes],
        sel=sel,
        sink=sink,
        children=children,
        dout_items=_expected_outputs(graph.order, sink, sel, children),
        owned=[[i for i in graph.order if owner[i] == k] for k in range(len(names))],
        shed_points=[list(plan.shedding_points.get(n, ())) for n in names],
        sources=[i for i, node in enumerate(network.nodes) if node.stream is not None],
        stream_nodes=stream_nodes,
        floor_work=_floor_work(network, names, engine),
    )


def _expected_outputs(
    order: tuple[int, ...],
    sink: list[int],
    sel: list[float],
    children: list[list[tuple[int, int]]],
) -> list[list[tuple[int, float]]]:
    """Per node, the expected outputs per class of one tuple entering it (no shedding)."""
    dout: list[dict[int, float]] = [{} for _ in sink]
    for i in reversed(order):
        acc: dict[int, float] = {}
        if sink[i] >= 0:
            acc[sink[i]] = sel[i]
        for j, _ in children[i]:
            for k, f in dout[j].items():
                acc[k] = acc.get(k, 0.0) + sel[i] * f
        dout[i] = acc
    return [list(d.items()) for d in dout]


def _floor_work(network: Network, names: list[str], engine: Engine) -> list[float]:
    """Per class, the processor time of its most expensive path at speed 1: its operators'
    costs and batch overheads, the hidden share, and a dispatch per operator."""
    paths = network.longest_paths()
    hidden = 1.0 + engine.hidden_overhead_fraction
    ovh = engine.batch_overhead_s
    return [
        (paths[n][0] + paths[n][1] * ovh) * hidden + paths[n][1] * engine.dispatch_overhead_s
        if n in paths
        else 0.0
        for n in names
    ]

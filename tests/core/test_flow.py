"""The oracle's maximum flow: the window flow takes FlowGraph's paths, so its flows are
FlowGraph's to the bit, and each phase of both adds the most flow a plain augmenting-path
search finds while keeping the flow earlier phases sent from the source."""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from itertools import pairwise

import pytest

from spark_runner.core.flow import WindowFlow
from tests.core.flow_reference import FlowGraph

FLOAT_TOL = 1e-9


@dataclass(frozen=True)
class Case:
    """Items with windows of slots, and the phases run on them: each phase sets every
    slot's capacity to the sink, then lets some items take more from the source."""

    slots: int
    windows: list[tuple[int, int]]
    capacities: list[float]
    phases: list[tuple[list[float], list[int]]]


def random_case(rng: random.Random) -> Case:
    """Small cases as the oracle makes them: items of a few classes, each with a window
    of a few slots from a release that grows with the item (sometimes an arbitrary
    window, possibly empty), several items to a slot and about as much work as the
    slots take, each phase raising the slots' capacities (or not) and letting one class,
    or all, take more. Amounts in thirds and tenths, so that rounding leaves residuals
    at the flow's tolerance."""
    slots = rng.randint(1, 10)
    items = rng.randint(1, 24)

    def amount(scale: float) -> float:
        unit = rng.choice((0.0, rng.randint(1, 9) / 3, rng.randint(1, 9) / 10, rng.random()))
        return scale * unit

    windows = []
    for k in range(items):
        first = min(slots, k * slots // items + rng.randint(0, 1))
        if rng.random() < 0.2:
            first = rng.randint(0, slots)
        windows.append((first, min(slots, first + rng.randint(0, 5))))
    capacities = [amount(1.0) for _ in range(items)]
    classes = [rng.randint(0, 2) for _ in range(items)]
    phases = []
    slot_capacity = [0.0] * slots
    for _ in range(rng.randint(1, 8)):
        scale = items / slots / 3
        slot_capacity = [c + amount(scale) * rng.randint(0, 1) for c in slot_capacity]
        chosen = rng.randint(0, 3)  # 3: every class
        allowed = [i for i, c in enumerate(classes) if chosen in (c, 3)]
        phases.append((list(slot_capacity), allowed))
    return Case(slots, windows, capacities, phases)


Run = list[tuple[float, list[float], dict[tuple[int, int], float]]]
"""Per phase: the flow it added, each item's flow from the source, and every item → slot
flow that is not zero."""


def run_window_flow(case: Case) -> Run:
    flow = WindowFlow(case.slots)
    items = [flow.item(a, b, c) for (a, b), c in zip(case.windows, case.capacities, strict=True)]
    run = []
    for slot_capacity, allowed in case.phases:
        for j, c in enumerate(slot_capacity):
            flow.set_slot_capacity(j, c)
        added = flow.augment(items[k] for k in allowed)
        inner = {(i, j): f for j, into in enumerate(flow.flows) for i, f in into.items()}
        run.append((added, [flow.served[i] for i in items], inner))
    return run


def run_flow_graph(case: Case) -> Run:
    """The same on the graph the oracle used to build: sink edges first, then each
    item's window edges and its source edge."""
    graph = FlowGraph()
    nodes = [graph.node() for _ in range(case.slots)]
    sinks = [graph.edge(n, FlowGraph.SINK, 0.0) for n in nodes]
    sources, edges = [], {}
    for i, ((first, last), capacity) in enumerate(zip(case.windows, case.capacities, strict=True)):
        node = graph.node()
        for j in range(first, last):
            edges[i, j] = graph.edge(node, nodes[j], math.inf)
        sources.append(graph.edge(FlowGraph.SOURCE, node, capacity))
    run = []
    for slot_capacity, allowed in case.phases:
        for e, c in zip(sinks, slot_capacity, strict=True):
            graph.set_capacity(e, c)
        added = graph.augment(sources[k] for k in allowed)
        inner = {key: graph.flow(e) for key, e in edges.items() if graph.flow(e) != 0.0}
        run.append((added, [graph.flow(e) for e in sources], inner))
    return run


def plain_max_flow(case: Case, slot_capacity: list[float], item_capacity: list[float]) -> float:
    """The maximum flow by shortest augmenting paths on a capacity matrix (node 0 the
    source, 1 the sink, then the slots, then the items), no tolerance but exact zeros."""
    slots, items = case.slots, len(case.windows)
    size = 2 + slots + items
    cap = [[0.0] * size for _ in range(size)]
    for j, c in enumerate(slot_capacity):
        cap[2 + j][1] = c
    for i, ((first, last), c) in enumerate(zip(case.windows, item_capacity, strict=True)):
        cap[0][2 + slots + i] = c
        for j in range(first, last):
            cap[2 + slots + i][2 + j] = math.inf
    total = 0.0
    while True:
        parent = [-1] * size
        parent[0] = 0
        queue = deque([0])
        while queue and parent[1] < 0:
            a = queue.popleft()
            for b in range(size):
                if parent[b] < 0 and cap[a][b] > 0.0:
                    parent[b] = a
                    queue.append(b)
        if parent[1] < 0:
            return total
        path = [1]
        while path[-1] != 0:
            path.append(parent[path[-1]])
        pushed = min(cap[a][b] for b, a in pairwise(path))
        for b, a in pairwise(path):
            cap[a][b] -= pushed
            cap[b][a] += pushed
        total += pushed


@pytest.mark.parametrize("seed", range(1000))
def test_the_window_flow_takes_flow_graphs_paths(seed: int) -> None:
    case = random_case(random.Random(seed))
    assert run_window_flow(case) == run_flow_graph(case)


@pytest.mark.parametrize("seed", range(200))
def test_each_phase_adds_the_most_flow_keeping_the_earlier_phases(seed: int) -> None:
    """A phase's total is the plain maximum flow with the items it lets take more at
    their capacity and the others at what they were served: the most there is, as no
    augmenting path takes back flow sent from the source. No item is served less, nor
    more than its capacity; an item the phase leaves out keeps its amount."""
    case = random_case(random.Random(1000 + seed))
    before = [0.0] * len(case.windows)
    for (slot_capacity, allowed), (got, after, _) in zip(
        case.phases, run_window_flow(case), strict=True
    ):
        caps = [c if i in allowed else before[i] for i, c in enumerate(case.capacities)]
        best = plain_max_flow(case, slot_capacity, caps)
        assert sum(after) == pytest.approx(best, abs=FLOAT_TOL)
        assert got == pytest.approx(sum(after) - sum(before), abs=FLOAT_TOL)
        for i, (x, y) in enumerate(zip(before, after, strict=True)):
            assert y >= x and y <= case.capacities[i] + FLOAT_TOL
            assert i in allowed or y == x
        before = after


def test_an_item_takes_the_free_slot_another_item_leaves_it_by_moving() -> None:
    """Item 0 may use slots 0 and 1, item 1 only slot 0: item 0 first fills slot 0, and
    item 1 is served only by an augmenting path that moves item 0 to slot 1."""
    flow = WindowFlow(2)
    first, second = flow.item(0, 2, 1.0), flow.item(0, 1, 1.0)
    flow.set_slot_capacity(0, 1.0)
    flow.set_slot_capacity(1, 1.0)
    assert flow.augment([first]) == 1.0
    assert flow.augment([second]) == 1.0
    assert flow.served == [1.0, 1.0]


def test_a_window_outside_the_slots_is_refused() -> None:
    flow = WindowFlow(3)
    with pytest.raises(ValueError, match="window"):
        flow.item(2, 4, 1.0)
    with pytest.raises(ValueError, match="window"):
        flow.item(2, 1, 1.0)

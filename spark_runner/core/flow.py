"""Maximum flow (Dinic) on the oracle's graph of float capacities, augmented in phases.

The oracle (:mod:`spark_runner.core.oracle`) serves work from a source through pieces of
work and time intervals to a sink: each piece reaches a window of consecutive intervals,
without bound, and each interval the sink (:class:`WindowFlow`). It augments in phases:
in each phase only some of the source's edges may carry more flow
(:meth:`WindowFlow.augment`). An augmenting path starts at the source and never returns
to it, so no phase lowers the flow an earlier phase sent through a source edge: the flow
each phase adds is the most it can add while keeping every earlier phase's amounts,
which makes the phases a lexicographic maximum.

How the shed work splits among pieces is not unique; :class:`WindowFlow` takes the paths
a Dinic on the general graph takes (``tests/core/flow_reference.py``), in the same order
and with the same arithmetic, so its flows are that Dinic's to the bit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

EPS = 1e-12
"""Residual capacities at or below this are treated as used up."""


class _Round(NamedTuple):
    """One round's level graph of a :class:`WindowFlow` (source 0, items odd, slots even;
    0 marks a node not reached below the sink)."""

    item_level: list[int]
    slot_level: list[int]
    sink: int  # the sink's level
    starts: list[int]  # the items at level 1, in order
    last_slots: list[int]  # the slots at level sink - 1


class WindowFlow:
    """Source → items → slots → sink, each item linked without bound to a window of
    consecutive slots: the graph the oracle builds, solved as the reference Dinic on the
    general graph solves it (``FlowGraph``, see the module docstring).

    Built as the reference would be (the slots' sink edges first, then each item's
    window edges in slot order and its source edge), it takes the same augmenting paths
    in the same order and does the same arithmetic, so every flow comes out the same to
    the bit. It does less per round: a window stands for its edges (an unbounded edge's
    residual stays infinite), a slot keeps only the flows into it that are not zero, the
    breadth-first search takes each slot once through a list that skips the slots
    already reached, and a search back from the sink marks the nodes from which the sink
    can be reached along the levels, so that the depth-first search enters only those
    (the reference enters every dead end too, and gives up on it: the paths found are
    the same)."""

    def __init__(self, slots: int) -> None:
        self.first: list[int] = []  # item i's window: slots first[i] <= j < last[i]
        self.last: list[int] = []
        self.residual: list[float] = []  # source → item
        self.served: list[float] = []  # source → item flow
        self.slot_residual = [0.0] * slots  # slot → sink
        self.slot_flow = [0.0] * slots
        self.cover: list[list[int]] = [[] for _ in range(slots)]  # items whose window holds j
        self.flows: list[dict[int, float]] = [{} for _ in range(slots)]  # item → flow into j

    def item(self, first: int, last: int, capacity: float) -> int:
        """Add an item taking at most ``capacity`` from the source for the slots
        ``first <= j < last``; returns its index."""
        if not 0 <= first <= last <= len(self.cover):
            raise ValueError(f"window [{first}, {last}) outside 0..{len(self.cover)}")
        i = len(self.first)
        self.first.append(first)
        self.last.append(last)
        self.residual.append(max(capacity, 0.0))
        self.served.append(0.0)
        for j in range(first, last):
            self.cover[j].append(i)
        return i

    def set_slot_capacity(self, j: int, capacity: float) -> None:
        """Change slot j's capacity to the sink, keeping its flow (as the
        reference's ``set_capacity``)."""
        self.slot_residual[j] = max(capacity - self.slot_flow[j], 0.0)

    def augment(self, items: Iterable[int]) -> float:
        """Push the most flow possible through the source edges of ``items`` only (as the
        reference's ``augment``); returns the flow added."""
        allowed = sorted(set(items))
        added = 0.0
        while (levels := self._levels(allowed)) is not None:
            live_items, live_slots = self._live(levels)
            added = self._blocking(added, levels, live_items, live_slots)
        return added

    def _levels(self, allowed: list[int]) -> _Round | None:
        """Breadth-first levels from the source through the ``allowed`` items (in order),
        up to the sink's (None: the sink is out of reach). A slot's level comes from the
        first item level whose windows reach it, found through ``skip`` (the next slot
        not yet reached)."""
        first, last, flows, slot_residual = self.first, self.last, self.flows, self.slot_residual
        item_level = [0] * len(first)
        slot_level = [0] * len(slot_residual)
        skip = list(range(len(slot_residual) + 1))
        res, eps = self.residual, EPS
        starts = [i for i in allowed if res[i] > eps]
        frontier, depth = starts, 1
        for i in starts:
            item_level[i] = 1
        while frontier:
            reached: list[int] = []
            for i in frontier:
                j, end = first[i], last[i]
                while True:
                    root = j
                    while skip[root] != root:
                        root = skip[root]
                    while j != root:
                        skip[j], j = root, skip[j]
                    if root >= end:
                        break
                    slot_level[root] = depth + 1
                    reached.append(root)
                    skip[root] = j = root + 1
            tops = [j for j in reached if slot_residual[j] > eps]
            if tops:
                return _Round(item_level, slot_level, depth + 2, starts, tops)
            depth += 2
            frontier = []
            for j in reached:
                for i, f in flows[j].items():
                    if not item_level[i] and f > eps:
                        item_level[i] = depth
                        frontier.append(i)
        return None

    def _live(self, levels: _Round) -> tuple[list[int], list[int]]:
        """Per item and per slot, its level if the sink can be reached from it along the
        levels, else 0."""
        item_level, slot_level = levels.item_level, levels.slot_level
        cover, flows, first, last = self.cover, self.flows, self.first, self.last
        eps = EPS
        live_items = [0] * len(item_level)
        live_slots = [0] * len(slot_level)
        slots = levels.last_slots
        for j in slots:
            live_slots[j] = slot_level[j]
        while slots:
            items: list[int] = []
            for j in slots:
                below = slot_level[j] - 1
                for i in cover[j]:
                    if item_level[i] == below and not live_items[i]:
                        live_items[i] = below
                        items.append(i)
            slots = []
            for i in items:
                below = item_level[i] - 1
                for j in range(first[i], last[i]) if below else ():
                    if slot_level[j] == below and not live_slots[j] and flows[j].get(i, 0.0) > eps:
                        live_slots[j] = below
                        slots.append(j)
        return live_items, live_slots

    def _blocking(
        self, added: float, levels: _Round, live_items: list[int], live_slots: list[int]
    ) -> float:
        """Saturate the round's level graph, path by path, each the first in edge order
        (items' windows in slot order; at a slot its sink edge, then the items in the
        order they were added), through the live nodes (``live_*``: their level, 0 once
        found dead); returns ``added`` plus each path's flow in turn."""
        sink, starts, ends = levels.sink, levels.starts, len(levels.starts)
        last, cover, flows, slot_residual, res = (
            self.last,
            self.cover,
            self.flows,
            self.slot_residual,
            self.residual,
        )
        eps = EPS
        item_at = list(self.first)  # each node's cursor: the next edge to try
        slot_at = [0] * len(live_slots)  # 0: the sink edge; k: the item cover[j][k - 1]
        path: list[int] = []  # item, slot, item, slot, ...: a node's level is its place + 1
        start = 0
        while True:
            want = len(path) + 1  # the level of the next node
            if want == 1:
                while start < ends and not (live_items[starts[start]] and res[starts[start]] > eps):
                    start += 1
                if start == ends:
                    return added
                path.append(starts[start])
                continue
            a = path[-1]
            if want & 1:  # a slot: the sink, or an item whose flow into it can go back
                k = slot_at[a]
                if not k:
                    if want == sink and slot_residual[a] > eps:
                        pushed, keep = self._push(path)
                        added += pushed
                        del path[keep:]
                        continue
                    k = 1
                here, into = cover[a], flows[a]
                count = len(here)
                while k <= count and not (
                    live_items[i := here[k - 1]] == want and into.get(i, 0.0) > eps
                ):
                    k += 1
                slot_at[a] = k
                if k <= count:
                    path.append(here[k - 1])
                    continue
                live_slots[a] = 0
            else:  # an item: the first live slot of its window
                j, end = item_at[a], last[a]
                while j < end and live_slots[j] != want:
                    j += 1
                item_at[a] = j
                if j < end:
                    path.append(j)
                    continue
                live_items[a] = 0
            path.pop()  # a dead end: back to the node before, past the edge to it
            if not path:
                start += 1
            elif want & 1:
                item_at[path[-1]] += 1
            else:
                slot_at[path[-1]] += 1

    def _push(self, path: list[int]) -> tuple[float, int]:
        """Push the path's bottleneck (source → path[0] → ... → path[-1] → sink); returns
        it and how much of the path to keep: up to the tail of its first used-up edge."""
        flows, res = self.flows, self.residual
        top, last = path[0], path[-1]
        pushed = res[top]
        for p in range(1, len(path) - 1, 2):  # the flows that go back
            pushed = min(pushed, flows[path[p]][path[p + 1]])
        pushed = min(pushed, self.slot_residual[last])
        res[top] -= pushed
        self.served[top] += pushed
        for p in range(0, len(path) - 1, 2):
            into = flows[path[p + 1]]
            into[path[p]] = into.get(path[p], 0.0) + pushed
        for p in range(1, len(path) - 1, 2):
            into = flows[path[p]]
            if (left := into[path[p + 1]] - pushed) == 0.0:
                del into[path[p + 1]]
            else:
                into[path[p + 1]] = left
        self.slot_residual[last] -= pushed
        self.slot_flow[last] += pushed
        if res[top] <= EPS:
            return pushed, 0
        for p in range(1, len(path) - 1, 2):
            if flows[path[p]].get(path[p + 1], 0.0) <= EPS:
                return pushed, p + 1
        return pushed, len(path)

"""The reference for :class:`spark_runner.core.flow.WindowFlow`: Dinic on any graph of
float capacities, augmented in phases. Built edge by edge in the order the oracle's graph
has (the slots' sink edges, then each piece's window edges in slot order and its source
edge: ``test_flow.run_flow_graph``), it takes the window flow's paths."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from spark_runner.core.flow import EPS


class FlowGraph:
    """A directed graph with float capacities; node 0 is the source, node 1 the sink."""

    SOURCE = 0
    SINK = 1

    def __init__(self) -> None:
        self.to: list[int] = []
        self.cap: list[float] = []  # residual capacity of each edge; edge e ^ 1 is its reverse
        self.out: list[list[int]] = [[], []]

    def node(self) -> int:
        self.out.append([])
        return len(self.out) - 1

    def edge(self, a: int, b: int, capacity: float) -> int:
        """Add an edge a → b; returns its id (its flow is the reverse edge's residual)."""
        e = len(self.to)
        self.to += [b, a]
        self.cap += [max(capacity, 0.0), 0.0]
        self.out[a].append(e)
        self.out[b].append(e + 1)
        return e

    def flow(self, e: int) -> float:
        return self.cap[e ^ 1]

    def set_capacity(self, e: int, capacity: float) -> None:
        """Change an edge's capacity, keeping its flow (capacity at least the flow)."""
        self.cap[e] = max(capacity - self.flow(e), 0.0)

    def augment(self, sources: Iterable[int]) -> float:
        """Push the most flow possible from the source through the source edges
        ``sources`` only (the others stay as they are); returns the flow added."""
        allowed = set(sources)
        added = 0.0
        while True:
            level = self._levels(allowed)
            if level[self.SINK] < 0:
                return added
            cursor = [0] * len(self.out)
            while (pushed := self._path(level, cursor, allowed)) > EPS:
                added += pushed

    def _levels(self, allowed: set[int]) -> list[int]:
        level = [-1] * len(self.out)
        level[self.SOURCE] = 0
        queue = deque([self.SOURCE])
        while queue:
            a = queue.popleft()
            for e in self.out[a]:
                b = self.to[e]
                if level[b] < 0 and self.cap[e] > EPS and (a != self.SOURCE or e in allowed):
                    level[b] = level[a] + 1
                    queue.append(b)
        return level

    def _path(self, level: list[int], cursor: list[int], allowed: set[int]) -> float:
        """Find one source → sink path along increasing levels (advancing each node's
        cursor past dead ends) and push its bottleneck; 0 when there is none."""
        stack: list[int] = []  # edges of the path so far
        a = self.SOURCE
        while True:
            if a == self.SINK:
                pushed = min(self.cap[e] for e in stack)
                for e in stack:
                    self.cap[e] -= pushed
                    self.cap[e ^ 1] += pushed
                return pushed
            edges = self.out[a]
            while cursor[a] < len(edges):
                e = edges[cursor[a]]
                b = self.to[e]
                ok = self.cap[e] > EPS and level[b] == level[a] + 1
                if ok and (a != self.SOURCE or e in allowed):
                    break
                cursor[a] += 1
            else:  # a dead end: retreat
                if not stack:
                    return 0.0
                level[a] = -1
                e = stack.pop()
                a = self.to[e ^ 1]
                cursor[a] += 1
                continue
            stack.append(edges[cursor[a]])
            a = self.to[edges[cursor[a]]]

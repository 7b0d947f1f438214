"""Inter-class sharing (001 §3.2, §6.1.4): who owns a shared segment, where each class sheds.

A segment used by several classes belongs to the highest-priority class among them (ties:
the class name that sorts first). For load management each class sees only the operators
it owns; its *shedding points* are its owned operators that are fed from outside the class
(by an operator another class owns) or by an input stream directly. A lower class that
shares a segment with a higher one therefore treats the first operator after the shared
segment as its source and sheds there, after the owner has shed at the segment's sources.
Claim 1 (001 §3.2.2): while the lower class's manager holds its delay target D, at most
``D / c`` of its tuples wait in the shared queue, so the higher class is never blocked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from spark_runner.core.errors import ParameterError
from spark_runner.core.operator_graph import OperatorGraph


@dataclass(frozen=True)
class SharingPlan:
    """Ownership of every operator and the shedding points of every class.

    Attributes:
        owner: class that owns each operator, indexed like ``graph.ids``.
        shedding_points: per class, the indices of its shedding points.
        owned: per class, the indices of the operators it owns.
    """

    graph: OperatorGraph
    owner: tuple[str, ...]
    shedding_points: Mapping[str, tuple[int, ...]]
    owned: Mapping[str, tuple[int, ...]]

    @classmethod
    def build(cls, graph: OperatorGraph, priorities: Mapping[str, float]) -> SharingPlan:
        """Plan for ``graph`` given class priorities (classes without one get priority 0)."""
        for name, priority in priorities.items():
            if not priority > 0:
                raise ParameterError(f"priority.{name}", priority, "must be > 0")
        owner = tuple(
            min(classes, key=lambda c: (-priorities.get(c, 0.0), c)) for classes in graph.classes
        )
        owned: dict[str, list[int]] = {}
        points: dict[str, list[int]] = {}
        for i in range(len(graph)):
            k = owner[i]
            owned.setdefault(k, []).append(i)
            parents = graph.parents[i]
            if not parents or any(owner[p] != k for p in parents):
                points.setdefault(k, []).append(i)
        return cls(
            graph=graph,
            owner=owner,
            shedding_points=MappingProxyType({k: tuple(v) for k, v in points.items()}),
            owned=MappingProxyType({k: tuple(v) for k, v in owned.items()}),
        )

    def owner_of(self, op_id: str) -> str:
        """The class that owns ``op_id``."""
        return self.owner[self.graph.index(op_id)]

    def shedding_point_ids(self, class_name: str) -> tuple[str, ...]:
        """Operator ids where ``class_name`` sheds (empty if it owns nothing)."""
        return tuple(self.graph.ids[i] for i in self.shedding_points.get(class_name, ()))

    def shared_segments(self) -> dict[str, tuple[str, frozenset[str]]]:
        """Shared operator id → (owner, the lower classes that shed after it)."""
        out: dict[str, tuple[str, frozenset[str]]] = {}
        for i, classes in enumerate(self.graph.classes):
            if len(classes) > 1:
                out[self.graph.ids[i]] = (self.owner[i], classes - {self.owner[i]})
        return out

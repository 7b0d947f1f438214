"""The operator DAG of continuous queries: who feeds whom, and which classes use what.

An operator has an id, its downstream operators (fan-out allowed, joins merge several
inputs into one operator) and the set of query classes whose queries use it. An operator
without upstream operators is a *source*: one input stream enters there. Operators whose
``classes`` are left empty inherit the union of their downstream operators' classes; an
output operator (no downstream) with no classes belongs to :data:`DEFAULT_CLASS`. Declared
classes must include every class of the operators they feed (a tuple that reaches a
class-k output passed through every operator upstream of it).

The graph is immutable and validated once (ids unique, references exist, acyclic); it
precomputes a topological order as integer indices so the load model's passes are plain
list loops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from spark_runner.core.errors import ParameterError

DEFAULT_CLASS = "default"


@dataclass(frozen=True, slots=True)
class Operator:
    """One operator node.

    Attributes:
        op_id: unique id.
        downstream: ids of the operators this one feeds (its outputs go to each).
        classes: query classes using this operator; empty = inherit (see module).
    """

    op_id: str
    downstream: tuple[str, ...] = ()
    classes: frozenset[str] = field(default_factory=frozenset)


class OperatorGraph:
    """A validated, immutable operator DAG (see module docstring)."""

    def __init__(self, operators: Iterable[Operator]) -> None:
        ops = list(operators)
        if not ops:
            raise ParameterError("operators", [], "a graph needs at least one operator")
        index: dict[str, int] = {}
        for i, op in enumerate(ops):
            if op.op_id in index:
                raise ParameterError("operators", op.op_id, "operator ids must be unique")
            index[op.op_id] = i
        n = len(ops)
        children: list[list[int]] = [[] for _ in range(n)]
        parents: list[list[int]] = [[] for _ in range(n)]
        for i, op in enumerate(ops):
            for d in op.downstream:
                j = index.get(d)
                if j is None:
                    raise ParameterError(
                        f"operators.{op.op_id}.downstream", d, "must name an existing operator"
                    )
                if j in children[i]:
                    continue
                children[i].append(j)
                parents[j].append(i)
        order = _topological_order(children, parents, [op.op_id for op in ops])
        classes = _resolve_classes(ops, children, order)

        self._ops = tuple(ops)
        self.index_map: Mapping[str, int] = MappingProxyType(index)
        """Operator id → position (read-only)."""
        self.ids: tuple[str, ...] = tuple(op.op_id for op in ops)
        self.children: tuple[tuple[int, ...], ...] = tuple(tuple(c) for c in children)
        self.parents: tuple[tuple[int, ...], ...] = tuple(tuple(p) for p in parents)
        self.order: tuple[int, ...] = tuple(order)
        """Topological order (every operator before the operators it feeds)."""
        self.classes: tuple[frozenset[str], ...] = tuple(classes)
        self.sources: tuple[int, ...] = tuple(i for i in range(n) if not parents[i])

    def __len__(self) -> int:
        return len(self._ops)

    def index(self, op_id: str) -> int:
        """Position of ``op_id`` (``ParameterError`` if unknown)."""
        try:
            return self.index_map[op_id]
        except KeyError:
            raise ParameterError("op_id", op_id, "must name an operator of the graph") from None

    def classes_of(self, op_id: str) -> frozenset[str]:
        return self.classes[self.index(op_id)]

    @property
    def all_classes(self) -> frozenset[str]:
        out: set[str] = set()
        for c in self.classes:
            out |= c
        return frozenset(out)

    @property
    def source_ids(self) -> tuple[str, ...]:
        return tuple(self.ids[i] for i in self.sources)

    def shared_operators(self) -> tuple[str, ...]:
        """Operators used by more than one class (inter-class shared segments)."""
        return tuple(self.ids[i] for i in range(len(self)) if len(self.classes[i]) > 1)


def _topological_order(
    children: Sequence[Sequence[int]], parents: Sequence[Sequence[int]], ids: Sequence[str]
) -> list[int]:
    indegree = [len(p) for p in parents]
    ready = [i for i, d in enumerate(indegree) if d == 0]
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for j in children[i]:
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
    if len(order) != len(ids):
        stuck = sorted(ids[i] for i, d in enumerate(indegree) if d > 0)
        raise ParameterError("operators", stuck, "the operator graph must be acyclic")
    return order


def _resolve_classes(
    ops: Sequence[Operator], children: Sequence[Sequence[int]], order: Sequence[int]
) -> list[frozenset[str]]:
    resolved: list[frozenset[str]] = [frozenset()] * len(ops)
    for i in reversed(order):
        below: set[str] = set()
        for j in children[i]:
            below |= resolved[j]
        declared = ops[i].classes
        if declared:
            if not below <= declared:
                raise ParameterError(
                    f"operators.{ops[i].op_id}.classes",
                    sorted(declared),
                    f"must include the classes of the operators it feeds: {sorted(below)}",
                )
            resolved[i] = frozenset(declared)
        else:
            resolved[i] = frozenset(below) if below else frozenset({DEFAULT_CLASS})
    return resolved

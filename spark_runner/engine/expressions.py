"""The network's stateless operators as Spark SQL expressions, layer by layer (no Spark).

Every row of the pipeline is one tuple at one node: ``point, seq, key, value,
<map outputs>, arrival_s, <edge shed fractions>, node, side, status`` (status: see
:mod:`network`). A layer is a few row-wise projections over *all* rows, so the plan has one
scan and a handful of projections however many queries the scenario has, and it is built
once per run on the streaming DataFrame:

- ``apply`` runs the operation of every node at the layer's depth on the rows that are
  there: a filter marks the rows it drops (``status`` 1; the row stays so the driver can
  count what every operator took in and let out), a projection nulls the columns it
  drops, a map computes its SQL expression into its output column and burns its
  calibrated CPU cost (see :func:`burn_sql`);
- ``route`` sends each live row along its node's routes: one copy per downstream operator
  (``explode``), the side of a join, and on an edge where a lower class starts after a
  higher class's shared segment, the lower class's shed fraction of the copies are
  marked shed (``status`` 2) by a hash of (seq, point, node). The fraction comes with the
  row (column ``shed_<k>``, written by the source from the batch's decision), so a batch
  replayed from the offset log sheds the same copies.

Rows whose node is a query's last operator become outputs (``status`` 3); rows reaching a
window operator are parked (``status`` 4) for the driver.

The CPU burn of a map: the Java UDF ``headroom_burn(ns)`` (:mod:`jvm_burn`), which spins on
its thread's CPU clock for exactly the map's cost; without a JDK,
``length(sha2(repeat(lpad(seq, 16, '0'), N), 256)) < 0``, which hashes ``16 × N`` bytes (never
true, never skipped), with ``N = cost / (cost of one repetition)`` measured at start-up.
The hash's cost per repetition drifts with the JIT compiler (measured here: 300 ns with
C1 only, 20–40 ns once C2 has compiled it), hence the UDF.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spark_runner.engine.jvm_burn import burn_udf_sql
from spark_runner.engine.network import (
    ACTIVE,
    FILTERED,
    SHED,
    NetworkPlan,
    PlanNode,
    Route,
)
from spark_runner.scenario.models import FilterOp, MapOp, ProjectOp
from spark_runner.scenario.predicates import parse_predicate
from spark_runner.scenario.sql_allowlist import check_expression

ROUTE_TYPE = "ARRAY<STRUCT<c: INT, s: INT, k: INT, st: INT>>"
UNIFORM = "shiftrightunsigned(xxhash64(seq, point, r.c), 11) * 1.1102230246251565E-16"
"""A deterministic uniform number in [0, 1) per (tuple, point, destination node)."""
BURN_BYTES_PER_REPETITION = 16


def burn_sql(repetitions: str) -> str:
    """An expression that is never true and costs ``repetitions`` hash rounds per row."""
    return (
        f"length(sha2(repeat(lpad(CAST(seq AS STRING), {BURN_BYTES_PER_REPETITION}, '0'), "
        f"{repetitions}), 256)) < 0"
    )


def checked_sql(op: MapOp | FilterOp) -> str:
    """The Spark SQL of a map's expression or a filter's predicate, checked again at launch
    and rebuilt from its parsed form: the user's text itself never reaches Spark."""
    if isinstance(op, MapOp):
        return check_expression(op.expression).sql
    return parse_predicate(op.predicate).sql


def shed_column(class_index: int) -> str:
    return f"shed_{class_index}"


@dataclass(frozen=True)
class CompiledPipeline:
    """The projections that carry a batch through every stateless operator.

    Attributes:
        stages: ``selectExpr`` argument lists, in order (the last one drops helpers).
        edge_classes: indices of the classes that shed on an edge inside Spark; the
            source adds a column ``shed_<k>`` for each.
        burn_repetitions: per map node index, the hash rounds of its CPU burn.
    """

    stages: tuple[tuple[str, ...], ...]
    edge_classes: tuple[int, ...]
    burn_repetitions: dict[int, int]
    """Per burning map node: nanoseconds (UDF burn) or hash repetitions."""


def compile_pipeline(
    plan: NetworkPlan, repetition_s: float | None = None, *, udf: bool = False
) -> CompiledPipeline:
    """The projections of ``plan``. Maps burn their cost through the UDF when ``udf``,
    else through the hash with ``repetition_s`` per repetition (None: they burn nothing)."""
    edge = sorted({r.shed_class for n in plan.nodes for r in n.routes if r.shed_class >= 0})
    payload = ("key", "value", *plan.extra_columns, "arrival_s")
    carried = (*payload, *(shed_column(k) for k in edge))
    burn: dict[int, int] = {}
    unit = 1e-9 if udf else repetition_s
    if unit is not None and unit > 0:
        for n in plan.nodes:
            if isinstance(n.model, MapOp) and n.model.cpu_cost_per_tuple_s > 0:
                burn[n.index] = max(1, round(n.model.cpu_cost_per_tuple_s / unit))
    routes = _routes_literal(plan.nodes)
    point_nodes = "array(" + ", ".join(str(p.node) for p in plan.points) + ")"
    extras = [f"CAST(NULL AS DOUBLE) AS `{c}`" for c in plan.extra_columns]
    start = (
        "point",
        "seq",
        "key",
        "value",
        *extras,
        "arrival_s",
        *(shed_column(k) for k in edge),
        f"element_at({point_nodes}, point + 1) AS node",
        "0 AS side",
        f"{ACTIVE} AS status",
    )
    stages: list[tuple[str, ...]] = [start, *_route(carried, routes, edge)]
    for depth in range(1, plan.layers + 1):
        nodes = plan.nodes_at(depth)
        stages.append(_apply(payload, carried, nodes, burn, burn_udf_sql if udf else burn_sql))
        stages.extend(_route(carried, routes, edge))
    stages.append(("point", "seq", *(f"`{c}`" for c in payload), "node", "side", "status"))
    return CompiledPipeline(tuple(stages), tuple(edge), burn)


def _route(carried: Sequence[str], routes: str, edge: Sequence[int]) -> list[tuple[str, ...]]:
    cols = tuple(f"`{c}`" for c in carried)
    keep_self = "array(named_struct('c', node, 's', side, 'k', -1, 'st', status))"
    explode = (
        f"explode(CASE WHEN status = {ACTIVE} THEN element_at({routes}, node + 1) "
        f"ELSE {keep_self} END) AS r"
    )
    if edge:
        fraction = "CASE r.k " + " ".join(f"WHEN {k} THEN {shed_column(k)}" for k in edge) + " END"
        status = (
            f"CASE WHEN r.k >= 0 AND {UNIFORM} < {fraction} THEN {SHED} ELSE r.st END AS status"
        )
    else:
        status = "r.st AS status"
    return [
        ("point", "seq", *cols, explode),
        ("point", "seq", *cols, "r.c AS node", "r.s AS side", status),
    ]


def _routes_literal(nodes: Sequence[PlanNode]) -> str:
    def route(r: Route) -> str:
        return f"named_struct('c', {r.child}, 's', {r.side}, 'k', {r.shed_class}, 'st', {r.status})"

    items = [
        f"array({', '.join(route(r) for r in n.routes)})"
        if n.routes
        else f"CAST(array() AS {ROUTE_TYPE})"
        for n in nodes
    ]
    return f"CAST(array({', '.join(items)}) AS ARRAY<{ROUTE_TYPE}>)"


def _apply(
    payload: Sequence[str],
    carried: Sequence[str],
    nodes: Sequence[PlanNode],
    burn: dict[int, int],
    burn_expr: Callable[[str], str],
) -> tuple[str, ...]:
    live = f"status = {ACTIVE}"
    out: list[str] = ["point", "seq"]
    for col in carried:
        branches: list[str] = []
        if col in payload and col != "arrival_s":
            for n in nodes:
                if isinstance(n.model, ProjectOp) and col not in n.model.columns:
                    branches.append(f"WHEN node = {n.index} THEN NULL")
                elif isinstance(n.model, MapOp) and n.model.output == col:
                    cast = "BIGINT" if col == "key" else "DOUBLE"
                    branches.append(
                        f"WHEN node = {n.index} THEN CAST(({checked_sql(n.model)}) AS {cast})"
                    )
        if branches:
            out.append(
                f"CASE WHEN {live} THEN CASE {' '.join(branches)} ELSE `{col}` END "
                f"ELSE `{col}` END AS `{col}`"
            )
        else:
            out.append(f"`{col}`")
    out += ["node", "side"]
    whens: list[str] = []
    filters = [(n.index, checked_sql(n.model)) for n in nodes if isinstance(n.model, FilterOp)]
    if filters:
        cases = " ".join(f"WHEN {i} THEN ({pred})" for i, pred in filters)
        ids = ", ".join(str(i) for i, _ in filters)
        whens.append(
            f"WHEN {live} AND node IN ({ids}) AND NOT coalesce(CASE node {cases} END, false) "
            f"THEN {FILTERED}"
        )
    burning = [(n.index, burn[n.index]) for n in nodes if n.index in burn]
    if burning:
        ids = ", ".join(str(i) for i, _ in burning)
        reps = "CASE node " + " ".join(f"WHEN {i} THEN {r}" for i, r in burning) + " END"
        whens.append(f"WHEN {live} AND node IN ({ids}) AND {burn_expr(reps)} THEN {FILTERED}")
    out.append(f"CASE {' '.join(whens)} ELSE status END AS status" if whens else "status")
    return tuple(out)

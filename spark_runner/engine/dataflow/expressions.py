"""The Spark SQL the dataflow uses for a scenario's expressions, shedding and CPU burn
(no Spark).

- A map's expression and a filter's predicate are checked again at launch and rebuilt
  from their parsed form (:func:`checked_sql`): the user's text itself never reaches
  Spark.
- On an edge where a lower class starts after a higher class's shared segment, the lower
  class's shed fraction of the tuples are shed by a hash of (seq, point, destination)
  against the fraction the source wrote into the row (column ``shed_<k>``), so a batch
  replayed from the offset log sheds the same tuples (:func:`edge_shed_sql`).
- The CPU burn of a map: the Java UDF ``headroom_burn(ns)`` (:mod:`jvm_burn`), which spins
  on its thread's CPU clock for exactly the map's cost; without a JDK,
  ``length(sha2(repeat(lpad(seq, 16, '0'), N), 256)) < 0``, which hashes ``16 × N`` bytes
  (never true, never skipped), with ``N = cost / (cost of one repetition)`` measured at
  start-up. The hash's cost per repetition drifts with the JIT compiler (measured here:
  300 ns with C1 only, 20–40 ns once C2 has compiled it), hence the UDF.
"""

from __future__ import annotations

from spark_runner.engine.dataflow.network import NetworkPlan
from spark_runner.engine.sources.columns import shed_column
from spark_runner.scenario.models import FilterOp, MapOp
from spark_runner.scenario.predicates import parse_predicate
from spark_runner.scenario.sql_allowlist import check_expression

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


def edge_shed_sql(class_index: int, child: int) -> str:
    """True for the rows class ``class_index`` sheds on the edge into node ``child``: a
    deterministic uniform number in [0, 1) per (tuple, point, destination) below the
    fraction the source wrote into the row."""
    uniform = f"shiftrightunsigned(xxhash64(seq, point, {child}), 11) * 1.1102230246251565E-16"
    return f"{uniform} < {shed_column(class_index)}"


def burn_amounts(plan: NetworkPlan, unit_s: float | None) -> dict[int, int]:
    """Per map node that burns CPU: its cost in units of ``unit_s`` (nanoseconds for the
    UDF, hash repetitions otherwise); none when ``unit_s`` is None."""
    if unit_s is None or unit_s <= 0:
        return {}
    return {
        n.index: max(1, round(n.model.cpu_cost_per_tuple_s / unit_s))
        for n in plan.nodes
        if isinstance(n.model, MapOp) and n.model.cpu_cost_per_tuple_s > 0
    }

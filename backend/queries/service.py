"""Continuous-query use cases; every spec is checked by the scenario format's own rules
inside a scenario composed around it, so what is stored also runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from backend.classes import service as classes
from backend.classes.models import QueryClass
from backend.classes.repository import QueryClassRepository
from backend.errors import Conflict, FieldErrors, NotFound
from backend.queries.models import ContinuousQuery
from backend.queries.repository import QueryRepository
from backend.queries.schemas import QuerySpec, query_part
from backend.streams.repository import StreamRepository
from backend.streams.schemas import TypeChange
from spark_runner.contract.control import LiveConfig
from spark_runner.scenario.columns import RIGHT_SUFFIX
from spark_runner.scenario.compose import QUERY_PREFIX, QueryPart, compose
from spark_runner.scenario.errors import ScenarioError
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Scenario
from spark_runner.scenario.validate import columns_named

# A shared query is validated with this as its reader. It reads no column: the output of a
# shared query over a declared stream need not have one in particular (``value``).
_NOOP = {"kind": "map", "expression": "1", "output": "stand_in", "cpu_cost_per_tuple_s": 0}


def shared_closure(session: Session, queries: Sequence[QueryPart]) -> list[QueryPart]:
    """The shared queries ``queries`` read, directly or through other shared queries.

    Raises ``FieldErrors`` naming the reference when a shared query does not exist."""
    repo = QueryRepository(session)
    found: dict[str, QueryPart] = {}
    pending = list(queries)
    while pending:
        query = pending.pop()
        for path, ref in _references(query):
            name = ref.removeprefix(QUERY_PREFIX)
            if name in found:
                continue
            shared = repo.shared_named(name)
            if shared is None:
                raise FieldErrors(
                    [(path, f"{ref!r} names no shared query (mark a query shared to read it)")]
                )
            found[name] = query_part(shared)
            pending.append(found[name])
    return list(found.values())


def _references(query: QueryPart) -> list[tuple[str, str]]:
    refs = [("source", query.source)]
    refs += [
        (f"operators[{i}].right", str(op.get("right")))
        for i, op in enumerate(query.operators)
        if op.get("kind") == "window_join"
    ]
    return [(path, ref) for path, ref in refs if ref.startswith(QUERY_PREFIX)]


def validate(session: Session, query_class: QueryClass, spec: QuerySpec) -> Scenario:
    """The scenario ``spec`` runs in (its shared queries, the declared streams), checked;
    ``FieldErrors`` with paths in ``spec`` if it breaks a rule."""
    part = query_part(spec)
    shared = shared_closure(session, [part])
    if spec.shared:
        shared = [part, *[s for s in shared if s.name != part.name]]
        own = [QueryPart("reader", QUERY_PREFIX + part.name, [_NOOP])]
        prefix = "shared_segments[0]."
    else:
        own = [part]
        prefix = "classes[0].queries[0]."
    document = compose(
        LiveConfig(classes={query_class.name: classes.class_control(query_class)}),
        {query_class.name: own},
        shared,
        rate_per_s=1.0,
        period_s=1.0,
        duration_s=10.0,
        declared=StreamRepository(session).declarations(),
        name="validation",
    )
    try:
        return scenario_from_dict(document)
    except ScenarioError as error:
        raise FieldErrors(
            [(issue.path.removeprefix(prefix), issue.message) for issue in error.issues]
        ) from None


def readers(session: Session, stream: str) -> list[ContinuousQuery]:
    """The stored queries that read ``stream``."""
    return QueryRepository(session).reading(stream)


def dependents(session: Session, source: str) -> list[ContinuousQuery]:
    """The stored queries that read ``source`` (a stream, or ``query:<name>``), directly
    or through shared queries."""
    repo = QueryRepository(session)
    found: dict[int, ContinuousQuery] = {}
    pending = [source]
    while pending:
        for query in repo.reading(pending.pop()):
            if query.id not in found:
                found[query.id] = query
                if query.shared:
                    pending.append(QUERY_PREFIX + query.name)
    return list(found.values())


def check_readers(
    session: Session,
    source: str,
    *,
    field: str = "columns",
    retyped: Mapping[str, TypeChange] | None = None,
) -> None:
    """``FieldErrors`` if a stored query that reads ``source`` (a stream, or
    ``query:<name>``), directly or through shared queries, no longer passes its checks
    after ``source`` changed (reported on ``field``), or reads a column of ``retyped``.

    A query was checked against its columns' types too: a type it was not checked with
    can fail it at run time (a string compared with a number, a sum of strings, a join of
    a long with a string), and the checks do not infer types, so a column a stored query
    reads keeps its type (the query names it, or a join's ``_r`` copy of it; compared
    regardless of case, as Spark resolves names)."""
    name = source.removeprefix(QUERY_PREFIX)
    what = f"stream {name!r}" if name == source else f"shared query {name!r}"
    broken: list[tuple[str, str]] = []
    for query in dependents(session, source):
        query_class = QueryClassRepository(session).require(query.class_id)
        who = f"query {query.name!r} of class {query_class.name!r}"
        spec = QuerySpec.model_validate(query, from_attributes=True)
        try:
            scenario = validate(session, query_class, spec)
        except FieldErrors as error:
            broken += [
                (
                    field,
                    f"{who} reads {what} and would fail ({path}: {message}); "
                    "change the query first",
                )
                for path, message in error.errors
            ]
            continue
        read = {name.lower() for name in _columns_read(scenario, shared=spec.shared)}
        broken += [
            (
                change.path,
                f"{who} reads column {column!r} of {what}, checked as {change.old}: the "
                f"columns a stored query reads keep their types ({change.old} -> "
                f"{change.new} refused); change or delete the query first, or declare "
                "a new column",
            )
            for column, change in (retyped or {}).items()
            if {column.lower(), (column + RIGHT_SUFFIX).lower()} & read
        ]
    if broken:
        raise FieldErrors(broken)


def _columns_read(scenario: Scenario, *, shared: bool) -> frozenset[str]:
    """The columns a query's validation scenario (:func:`validate`) reads: its shared
    segments', and its class query's unless the query is shared (its class query is then
    only a stand-in reader)."""
    operators = [op for segment in scenario.shared_segments for op in segment.operators]
    if not shared:
        operators += [op for c in scenario.classes for q in c.queries for op in q.operators]
    return columns_named(operators, {s.name: s.sql_columns for s in scenario.streams})


def list_queries(session: Session, class_id: int) -> Sequence[ContinuousQuery]:
    QueryClassRepository(session).require(class_id)
    return QueryRepository(session).for_classes([class_id])


def get_query(session: Session, class_id: int, query_id: int) -> ContinuousQuery:
    query = QueryRepository(session).get(query_id)
    if query is None or query.class_id != class_id:
        raise NotFound(f"query {query_id} of class {class_id} does not exist")
    return query


def save(
    session: Session, class_id: int, spec: QuerySpec, query_id: int | None = None
) -> ContinuousQuery:
    """Store ``spec``. A change of a shared query that other queries read is checked
    against them: they keep reading it (no rename, no unsharing), and still pass."""
    query_class = QueryClassRepository(session).require(class_id)
    siblings = QueryRepository(session).for_classes([class_id])
    if any(q.name == spec.name and q.id != query_id for q in siblings):
        raise Conflict(f"name={spec.name!r} is taken in class {query_class.name!r}")
    validate(session, query_class, spec)
    if query_id is None:
        query = ContinuousQuery(class_id=class_id)
        read_by: list[ContinuousQuery] = []
    else:
        query = get_query(session, class_id, query_id)
        read_by = QueryRepository(session).output_readers(query)
    if read_by and (spec.name != query.name or not spec.shared):
        change = f"renaming it to {spec.name!r}" if spec.name != query.name else "unsharing it"
        raise Conflict(
            f"shared query {query.name!r} is read by {_names(session, read_by)}; "
            f"{change} would leave them reading nothing: change them first"
        )
    query.name, query.source, query.operators, query.shared = (
        spec.name,
        spec.source,
        list(spec.operators),
        spec.shared,
    )
    if query_id is None:
        QueryRepository(session).add(query)
    session.flush()
    if read_by:
        check_readers(session, QUERY_PREFIX + query.name, field="operators")
    return query


def delete(session: Session, class_id: int, query_id: int) -> None:
    """Delete a query; a shared query that other queries read is kept (409 naming them),
    as a stream that queries read is."""
    repo = QueryRepository(session)
    query = get_query(session, class_id, query_id)
    read_by = repo.output_readers(query)
    if read_by:
        raise Conflict(
            f"shared query {query.name!r} is read by {_names(session, read_by)}; "
            "delete or change them first"
        )
    repo.delete(query)


def _names(session: Session, queries: Sequence[ContinuousQuery]) -> str:
    """``queries 'a' of class 'x', 'b' of class 'y'``, sorted."""
    named = sorted(f"{q.name!r} of class {_quoted_class_name(session, q)}" for q in queries)
    return ("query " if len(named) == 1 else "queries ") + ", ".join(named)


def _quoted_class_name(session: Session, query: ContinuousQuery) -> str:
    return repr(QueryClassRepository(session).require(query.class_id).name)


def check_class_delete(session: Session, query_class: QueryClass) -> None:
    """``Conflict`` while queries of other classes read one of the shared queries of
    ``query_class``, which a deletion of the class would take with it."""
    queries = QueryRepository(session)
    read = sorted(
        f"{reader.name!r} of class {_quoted_class_name(session, reader)} reads "
        f"shared query {shared.name!r}"
        for shared in queries.for_classes([query_class.id])
        for reader in queries.output_readers(shared)
        if reader.class_id != query_class.id
    )
    if read:
        raise Conflict(
            f"class {query_class.name!r} owns shared queries that other classes read "
            f"(query {'; query '.join(read)}); delete or change those queries first"
        )


def scenario_for(
    session: Session,
    chosen: Sequence[QueryClass],
    config: LiveConfig,
    *,
    rate_per_s: float,
    period_s: float,
    duration_s: float,
) -> dict[str, Any]:
    """The scenario of the chosen classes' registered queries (a class without one runs a
    generated stream) with their parameters from ``config``."""
    queries = QueryRepository(session).for_classes([c.id for c in chosen])
    by_class = {c.name: [query_part(q) for q in queries if q.class_id == c.id] for c in chosen}
    readers = [q for qs in by_class.values() for q in qs if not q.shared]
    return compose(
        config,
        by_class,
        shared_closure(session, readers),
        rate_per_s=rate_per_s,
        period_s=period_s,
        duration_s=duration_s,
        declared=StreamRepository(session).declarations(),
    )

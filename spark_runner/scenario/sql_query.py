"""The allow-list a class's SQL query passes before it reaches Spark.

A query is one SELECT over the class's streams, parsed with sqlglot's Spark dialect; its
clauses, streams and columns are checked here, and every expression in it passes the
expression allow-list of :mod:`spark_runner.scenario.sql_allowlist`. What Spark runs is the
checked tree rendered back to Spark SQL over temporary views of the admitted tuples
(:meth:`CheckedQuery.render`). Pure Python; no Spark import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from spark_runner.scenario.sql_allowlist import (
    AGGREGATES,
    MAX_QUERY_CHARS,
    NAME,
    WINDOW_FUNCTION,
    WINDOW_STAND_IN,
    SqlNotAllowed,
    aggregates,
    check_nesting,
    check_node,
    parse_error_message,
    snippet,
    stand_in_windows,
    stateful,
)
from spark_runner.scenario.sql_scope import Scope, check_outputs, clause_of

_QUERY_NODES: frozenset[type[exp.Expr]] = frozenset(
    {exp.Alias, exp.Star, exp.Interval, exp.Var, exp.From, exp.Join, exp.Where, exp.Group}
    | {exp.Having, exp.Table, exp.TableAlias}
)
_CLAUSES = frozenset({"expressions", "from_", "joins", "where", "group", "having"})
"""The parts of a SELECT a query may have (no DISTINCT, ORDER BY, LIMIT, WITH, …)."""
_DURATION = re.compile(r"\s*\d+(\.\d+)?\s+(millisecond|second|minute|hour)s?\s*\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CheckedQuery:
    """A query that passed the allow-list.

    Attributes:
        streams: the streams it reads, in order: the ``FROM`` one, then the joined one.
        columns: per stream, the columns it reads there.
        stateful: it aggregates or joins (Spark keeps state for it).
        tree: the checked tree (:meth:`render` renders it).
    """

    streams: tuple[str, ...]
    columns: dict[str, frozenset[str]]
    stateful: bool
    tree: exp.Select

    def render(self, views: dict[str, str]) -> str:
        """The checked query as Spark SQL, every stream read from ``views[stream]``."""
        tree = self.tree.copy()
        for table in tree.find_all(exp.Table):
            if not table.alias:  # columns may be qualified by the stream's name
                alias = exp.to_identifier(table.name, quoted=not NAME.match(table.name))
                table.set("alias", exp.TableAlias(this=alias))
            table.set("this", exp.to_identifier(views[table.name]))
        for call in tree.find_all(exp.Anonymous):
            if str(call.name).lower() == WINDOW_STAND_IN:
                call.set("this", WINDOW_FUNCTION)
        return tree.sql(dialect="spark")


def check_query(text: str, streams: dict[str, frozenset[str]]) -> CheckedQuery:
    """Parse the SELECT ``text`` over ``streams`` (name → its columns) and check it.

    A query reads one stream, or two joined by an inner ``JOIN … ON``; it may filter
    (``WHERE``), aggregate (``count sum avg min max``) per ``GROUP BY`` keys and time
    windows (``window(time column, 'N seconds'[, 'M seconds'])``) and filter groups
    (``HAVING``); every expression passes the expression allow-list. Refused with the
    construct named: several statements, ``WITH``, subqueries, ``DISTINCT``, ``ORDER BY``,
    ``LIMIT``, outer joins, a join and an aggregate in one query (Spark's update mode
    runs one stateful operator per branch), ``*`` outside ``count(*)``, streams or
    columns that do not exist, and every function or construct the expression allow-list
    refuses.

    Raises:
        SqlNotAllowed: naming what is not allowed, with its position (1-based character).
    """
    if len(text) > MAX_QUERY_CHARS:
        raise SqlNotAllowed(f"is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    check_nesting(text)
    prepared = stand_in_windows(text)
    try:
        trees = sqlglot.parse(prepared, dialect="spark")
    except ParseError as exc:
        raise SqlNotAllowed(parse_error_message(text, exc).replace("expression", "query")) from None
    except (TokenError, RecursionError) as exc:
        raise SqlNotAllowed(f"cannot be read as a SQL query ({exc})") from None
    if len([t for t in trees if t is not None]) != 1:
        raise SqlNotAllowed("must be exactly one SELECT statement")
    tree = trees[0]
    if not isinstance(tree, exp.Select):
        raise SqlNotAllowed(f"is a {type(tree).__name__}; only a SELECT is allowed")
    extra = sorted(k for k, v in tree.args.items() if v and k not in _CLAUSES)
    if extra:
        raise SqlNotAllowed(
            f"uses {extra[0].upper().rstrip('_')} at position {_position(text, extra[0])}; a "
            "query has SELECT, FROM, JOIN … ON, WHERE, GROUP BY and HAVING only"
        )
    tables = _tables(tree, text, streams)
    check_outputs(tree)
    scope = Scope.of(tree, tables, streams)
    columns: dict[str, set[str]] = {name: set() for name in tables.values()}
    for node in tree.walk():
        if node.comments:
            raise SqlNotAllowed("contains a comment; comments are not allowed")
        if node is tree:
            continue
        if type(node) in AGGREGATES:
            _check_aggregate(node, text)
        elif isinstance(node, exp.Anonymous) and str(node.name).lower() == WINDOW_STAND_IN:
            _check_window(node, text)
        elif isinstance(node, exp.Column):
            read = scope.resolve(node, clause_of(node, tree))
            if read is not None:
                columns[read[0]].add(read[1])
        elif isinstance(node, exp.Star):
            if not isinstance(node.parent, exp.Count):
                raise SqlNotAllowed(
                    f"uses * at position {_position(text, '*')}; name the columns (only "
                    "count(*) may use *)"
                )
        elif isinstance(node, exp.Literal) and isinstance(node.parent, exp.Interval):
            continue
        elif type(node) not in _QUERY_NODES:
            check_node(node, set())
    if aggregates(tree) and tree.args.get("joins"):
        raise SqlNotAllowed(
            "both joins and aggregates; Spark runs one or the other in a query's update "
            "mode (write two queries)"
        )
    return CheckedQuery(
        streams=tuple(dict.fromkeys(tables.values())),
        columns={name: frozenset(used) for name, used in columns.items()},
        stateful=stateful(tree),
        tree=tree,
    )


def _position(text: str, fragment: str) -> int:
    at = text.lower().find(fragment.lower().rstrip("_"))
    return at + 1 if at >= 0 else 1


def _tables(tree: exp.Select, text: str, streams: dict[str, frozenset[str]]) -> dict[str, str]:
    """Qualifier (the alias, else the name) → stream of the FROM and the JOIN."""
    source = tree.args.get("from_")
    joins = tree.args.get("joins") or []
    if source is None:
        raise SqlNotAllowed("has no FROM; a query reads a stream")
    if len(joins) > 1:
        raise SqlNotAllowed(f"joins {len(joins) + 1} streams; a query joins at most two")
    tables: dict[str, str] = {}
    for clause in [source, *joins]:
        table = clause.this
        if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
            raise SqlNotAllowed(
                f"reads {snippet(table)!r}; FROM and JOIN name a stream (no subquery, no "
                "qualified name)"
            )
        if table.name not in streams:
            raise SqlNotAllowed(
                f"reads {table.name!r} at position {_position(text, table.name)}, which is not "
                f"a stream here (streams: {', '.join(sorted(streams))})"
            )
        tables[table.alias_or_name] = table.name  # what qualifies its columns
    for join in joins:
        if join.args.get("side") or join.args.get("kind") not in (None, "INNER"):
            kind = " ".join(str(join.args.get(k) or "") for k in ("side", "kind")).strip()
            raise SqlNotAllowed(
                f"uses a {kind} JOIN at position {_position(text, kind.split()[0])}; only an "
                "inner JOIN … ON is allowed"
            )
        if join.args.get("on") is None or isinstance(join.args["on"], exp.Boolean):
            raise SqlNotAllowed("joins without ON; write JOIN <stream> ON <condition>")
    return tables


def _check_aggregate(node: exp.Expr, text: str) -> None:
    if node.args.get("distinct") or isinstance(node.this, exp.Distinct):
        raise SqlNotAllowed(
            f"uses DISTINCT in {snippet(node)!r} at position {_position(text, 'distinct')}; "
            "distinct aggregates are not allowed on streams"
        )


def _check_window(node: exp.Anonymous, text: str) -> None:
    args = node.expressions
    durations = args[1:]
    if not 2 <= len(args) <= 3 or not isinstance(args[0], exp.Column):
        raise SqlNotAllowed(
            f"calls window at position {_position(text, 'window')} with "
            f"{len(args)} argument(s); write window(<time column>, '<N> seconds'[, "
            "'<M> seconds'])"
        )
    for d in durations:
        if not (isinstance(d, exp.Literal) and d.is_string and _DURATION.match(d.this)):
            raise SqlNotAllowed(
                f"gives window the duration {snippet(d)!r} at position "
                f"{_position(text, 'window')}; write a string like '10 seconds'"
            )

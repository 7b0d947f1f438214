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
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, TokenError

from spark_runner.scenario.columns import EVENT_TIME
from spark_runner.scenario.models import (
    MAX_DURATION_S,
    MAX_WINDOWS_PER_ROW,
    MIN_WINDOW_S,
    windows_per_row,
)
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
    check_string_sizes,
    function_name,
    parse_error_message,
    position,
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
INTERVAL_UNITS: dict[str, float | None] = {
    "microsecond": 1e-6, "millisecond": 0.001, "second": 1.0, "minute": 60.0,
    "hour": 3600.0, "day": 86_400.0, "week": 604_800.0, "month": None, "year": None,
}  # fmt: skip
"""The units of an interval Spark reads (singular or plural, any case), in seconds (months
and years have no fixed length: an INTERVAL may use them, a window may not); a fraction
only of seconds (Spark refuses ``1.5 hours``)."""
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?\Z")


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
    ``LIMIT``, outer joins, a join whose ``ON`` holds no key and no time range, a join and
    an aggregate in one query (Spark's update mode runs one stateful operator per branch),
    ``*`` outside ``count(*)``, a window that puts a row in more than
    :data:`~spark_runner.scenario.models.MAX_WINDOWS_PER_ROW` windows, streams or columns
    that do not exist (:mod:`sql_scope`), and every function, construct or size the
    expression allow-list refuses.

    Raises:
        SqlNotAllowed: naming what is not allowed, with its position (1-based character).
    """
    tree = _parse_select(text)
    tables = _tables(tree, text, streams)
    check_outputs(tree)
    scope = Scope.of(tree, tables, streams)
    columns = _check_nodes(tree, text, scope)
    _check_group(tree, scope)
    check_string_sizes(tree)
    for join in tree.args.get("joins") or []:
        _check_join_condition(join.args["on"], scope, tree)
    if aggregates(tree) and tree.args.get("joins"):
        raise SqlNotAllowed(
            "both joins and aggregates; Spark runs one or the other in a query's update "
            "mode (write two queries)"
        )
    return CheckedQuery(
        streams=tuple(dict.fromkeys(tables.values())),
        columns={name: frozenset(columns.get(name, ())) for name in tables.values()},
        stateful=stateful(tree),
        tree=tree,
    )


def _parse_select(text: str) -> exp.Select:
    """The one SELECT of ``text``, with only the clauses a query may have."""
    if len(text) > MAX_QUERY_CHARS:
        raise SqlNotAllowed(f"is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    check_nesting(text)
    try:
        trees = sqlglot.parse(stand_in_windows(text), dialect="spark")
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
        keyword = extra[0].upper().rstrip("_")
        raise SqlNotAllowed(
            f"uses {keyword} at position {_keyword_position(text, keyword)}; a "
            "query has SELECT, FROM, JOIN … ON, WHERE, GROUP BY and HAVING only"
        )
    return tree


def _check_nodes(tree: exp.Select, text: str, scope: Scope) -> dict[str, set[str]]:
    """Check every node of ``tree``; per stream, the columns it reads."""
    columns: dict[str, set[str]] = {}
    for node in tree.walk():
        if node.comments:
            raise SqlNotAllowed("contains a comment; comments are not allowed")
        if node is tree:
            continue
        if type(node) in AGGREGATES:
            _check_aggregate(node)
        elif isinstance(node, exp.Anonymous) and str(node.name).lower() == WINDOW_STAND_IN:
            _check_window(node)
        elif isinstance(node, exp.Column):
            read = scope.resolve(node, clause_of(node, tree))
            if read is not None:
                columns.setdefault(read[0], set()).add(read[1])
        elif isinstance(node, exp.Star):
            if not isinstance(node.parent, exp.Count):
                raise SqlNotAllowed(
                    f"uses * at position {position(node)}; name the columns (only count(*) "
                    "may use *)"
                )
        elif isinstance(node, exp.Interval):
            _check_interval(node, text)
        elif isinstance(node, exp.Literal) and isinstance(node.parent, exp.Interval):
            continue
        elif type(node) not in _QUERY_NODES:
            check_node(node, set())
    return columns


def _keyword_position(text: str, keyword: str, nth: int = 0) -> int:
    """Where the ``nth`` keyword ``keyword`` stands in ``text`` (1-based; 1 if it does not):
    read from sqlglot's tokens, so a word in a string or a quoted name does not count."""
    starts = [
        token.start + 1
        for token in Dialect.get_or_raise("spark").tokenize(text)
        if token.token_type.name not in ("STRING", "IDENTIFIER")
        and token.text.split()[0].upper() == keyword.upper()
    ]
    return starts[nth] if nth < len(starts) else 1


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
        if isinstance(table, exp.Table) and isinstance(table.this, exp.Func):
            raise SqlNotAllowed(
                f"reads the table function {function_name(table.this)!r} at position "
                f"{position(table)}; FROM and JOIN name a stream"
            )
        if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
            raise SqlNotAllowed(
                f"reads {snippet(table)!r} at position {position(table)}; FROM and JOIN name a "
                "stream (no subquery, no qualified name)"
            )
        if table.name not in streams:
            raise SqlNotAllowed(
                f"reads {table.name!r} at position {position(table)}, which is not a stream "
                f"here (streams: {', '.join(sorted(streams))})"
            )
        tables[table.alias_or_name] = table.name  # what qualifies its columns
    for join in joins:
        if join.args.get("side") or join.args.get("kind") not in (None, "INNER"):
            kind = " ".join(str(join.args.get(k) or "") for k in ("side", "kind")).strip()
            raise SqlNotAllowed(
                f"uses a {kind} JOIN at position {_keyword_position(text, kind.split()[0])}; "
                "only an inner JOIN … ON is allowed"
            )
        if join.args.get("on") is None or isinstance(join.args["on"], exp.Boolean):
            raise SqlNotAllowed("joins without ON; write JOIN <stream> ON <condition>")
    return tables


def _check_group(tree: exp.Select, scope: Scope) -> None:
    """Every GROUP BY ordinal names a SELECT item (1 to their count), and no ordinal or
    alias names an aggregate: Spark refuses both only when it analyses the query, as the
    job starts."""
    group = tree.args.get("group")
    items = tree.expressions
    for written in group.expressions if group else []:
        key = written.unnest()
        number = key.this if isinstance(key, exp.Neg) else key
        named: exp.Expr | None = None
        if isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit():
            ordinal = -int(number.this) if isinstance(key, exp.Neg) else int(number.this)
            if not 1 <= ordinal <= len(items):
                raise SqlNotAllowed(
                    f"uses GROUP BY {ordinal} at position {position(key)}, which names no "
                    f"SELECT item (the SELECT has {len(items)}: ordinals 1 to {len(items)})"
                )
            named = items[ordinal - 1]
        elif isinstance(key, exp.Column) and scope.resolve(key, "group") is None:
            named = next(i for i in items if i.alias_or_name.lower() == key.name.lower())
        if named is not None and any(type(n) in AGGREGATES for n in named.walk()):
            raise SqlNotAllowed(
                f"uses GROUP BY {snippet(key)} at position {position(key)}, which names "
                f"{snippet(named)!r}, an aggregate; Spark groups by no aggregate"
            )


def _check_aggregate(node: exp.Expr) -> None:
    if node.args.get("distinct") or isinstance(node.this, exp.Distinct):
        raise SqlNotAllowed(
            f"uses DISTINCT in {snippet(node)!r} at position {position(node)}; "
            "distinct aggregates are not allowed on streams"
        )


def _check_window(node: exp.Anonymous) -> None:
    """``window(<time column>, '<size>'[, '<slide>'])``: durations Spark reads, at least
    MIN_WINDOW_S, at most MAX_DURATION_S, the slide at most the size, and at most
    MAX_WINDOWS_PER_ROW windows per row (Spark copies every row into each of its windows)."""
    args = node.expressions
    if not 2 <= len(args) <= 3 or not isinstance(args[0], exp.Column):
        raise SqlNotAllowed(
            f"calls window at position {position(node)} with {len(args)} argument(s); write "
            "window(<time column>, '<N> seconds'[, '<M> seconds'])"
        )
    size_s, slide_s = (_duration_s(d) for d in (args[1], args[-1]))
    for d, seconds in ((args[1], size_s), (args[-1], slide_s)):
        if not MIN_WINDOW_S <= seconds <= MAX_DURATION_S:
            raise SqlNotAllowed(
                f"gives window the duration {d.this!r} at position {position(d)}; a window's "
                f"size and slide are from MIN_WINDOW_S ({MIN_WINDOW_S:g} s) to MAX_DURATION_S "
                f"({MAX_DURATION_S:g} s)"
            )
    if slide_s > size_s:
        raise SqlNotAllowed(
            f"slides window by {args[-1].this!r} at position {position(args[-1])}, more "
            f"than its size {args[1].this!r}; the slide is at most the size"
        )
    count = windows_per_row(size_s, slide_s)
    if count > MAX_WINDOWS_PER_ROW:
        raise SqlNotAllowed(
            f"puts every row in {count} windows ({args[1].this!r} every {args[-1].this!r}) "
            f"at position {position(node)}; MAX_WINDOWS_PER_ROW is {MAX_WINDOWS_PER_ROW}"
        )


def _duration_s(arg: exp.Expr) -> float:
    """A window duration in seconds: a string like '10 seconds' (or '1 minute 30 seconds')."""
    amounts = _amounts(arg.this) if isinstance(arg, exp.Literal) and arg.is_string else None
    seconds = [_seconds(n, unit) for n, unit in amounts or []]
    if not amounts or None in seconds or any(n.startswith(("-", "+")) for n, _ in amounts):
        raise SqlNotAllowed(
            f"gives window the duration {snippet(arg)} at position {position(arg)}; write a "
            "string like '10 seconds' (units: "
            f"{', '.join(u for u, s in INTERVAL_UNITS.items() if s is not None)}; a fraction "
            "only of seconds)"
        )
    return sum(s for s in seconds if s is not None)


def _check_interval(node: exp.Interval, text: str) -> None:
    """``INTERVAL <number> <unit>`` (or ``INTERVAL '<number> <unit> …'``) with units Spark
    reads: a wrong unit would fail only when Spark analyses the query, as the job starts."""
    this, unit = node.this, node.args.get("unit")
    amounts: list[tuple[str, str]] | None = None
    if isinstance(this, exp.Literal) and isinstance(unit, exp.Var):
        amounts = [(str(this.this), unit.name)]
    elif isinstance(this, exp.Literal) and this.is_string and unit is None:
        amounts = _amounts(this.this)
    for number, word in amounts or [("", "")]:
        if _unit(word) is None:
            raise SqlNotAllowed(
                f"{_interval_at(node, text)}; write INTERVAL <number> <unit> with a unit of "
                f"{', '.join(INTERVAL_UNITS)}"
            )
        if not _NUMBER.match(number) or ("." in number and _unit(word) != "second"):
            raise SqlNotAllowed(
                f"{_interval_at(node, text)}: {number!r} {word} is not an amount Spark reads "
                "(a whole number, or a decimal of seconds)"
            )


def _interval_at(node: exp.Interval, text: str) -> str:
    """The interval and where its INTERVAL keyword stands (sqlglot keeps no position of it:
    the n-th interval of the tree in text order is taken to be the n-th keyword)."""
    intervals = [n for n in node.root().walk(bfs=False) if isinstance(n, exp.Interval)]
    nth = next(i for i, n in enumerate(intervals) if n is node)
    return f"uses {snippet(node)} at position {_keyword_position(text, 'interval', nth)}"


def _amounts(text: str) -> list[tuple[str, str]] | None:
    """``'1 minute 30 seconds'`` as [("1", "minute"), ("30", "seconds")]; None when the words
    do not pair up."""
    words = text.split()
    if not words or len(words) % 2:
        return None
    return list(zip(words[::2], words[1::2], strict=True))


def _unit(word: str) -> str | None:
    """The unit ``word`` names (singular, lower case), None if none."""
    folded = word.lower()
    for unit in (folded, folded.removesuffix("s")):
        if unit in INTERVAL_UNITS:
            return unit
    return None


def _seconds(number: str, word: str) -> float | None:
    """``number`` ``word`` in seconds; None for a unit without a fixed length, a wrong unit
    or a number Spark does not read with it."""
    unit = _unit(word)
    seconds = INTERVAL_UNITS.get(unit) if unit else None
    if seconds is None or not _NUMBER.match(number) or ("." in number and unit != "second"):
        return None
    return float(number) * seconds


def _check_join_condition(on: exp.Expr, scope: Scope, tree: exp.Select) -> None:
    """``on`` holds, among the conditions it ANDs, a key (an equality between a column of
    each stream) or a time range (``event_time`` of one stream bounded from below and above
    by the other's): a join without either pairs every tuple with every other one."""
    bounds: set[tuple[str, str, str]] = set()  # (stream, other stream, ">" or "<")
    for condition in _conjuncts(on):
        sides = [_one_stream(part, scope, tree) for part in condition.iter_expressions()]
        if isinstance(condition, exp.EQ | exp.NullSafeEQ) and _two_streams(*sides):
            return
        if isinstance(condition, exp.Between):
            this, low, high = (condition.args[k] for k in ("this", "low", "high"))
            bounds |= _time_bound(this, ">", low, scope, tree)
            bounds |= _time_bound(this, "<", high, scope, tree)
        elif isinstance(condition, exp.GT | exp.GTE | exp.LT | exp.LTE):
            op = ">" if isinstance(condition, exp.GT | exp.GTE) else "<"
            bounds |= _time_bound(condition.this, op, condition.expression, scope, tree)
    if any((a, b, ">") in bounds and (a, b, "<") in bounds for a, b, _ in bounds):
        return
    raise SqlNotAllowed(
        f"joins ON {snippet(on)!r} at position {position(on)}, which holds no key and no time "
        "range; a join needs one of them: a column of each stream equal (t.k = q.k), or "
        f"one stream's {EVENT_TIME} between bounds on the other's (q.{EVENT_TIME} BETWEEN "
        f"t.{EVENT_TIME} - INTERVAL 2 SECONDS AND t.{EVENT_TIME} + INTERVAL 2 SECONDS)"
    )


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The conditions ``condition`` ANDs, out of their parentheses (iteratively: a long
    chain of ANDs nests as deep as it is long)."""
    found, pending = [], [condition]
    while pending:
        part = pending.pop().unnest()
        if isinstance(part, exp.And):
            pending += [part.expression, part.this]
        else:
            found.append(part)
    return found


def _reads(part: exp.Expr, scope: Scope, tree: exp.Select) -> set[tuple[str, str]]:
    """The (stream, column) pairs ``part`` reads."""
    found = set()
    for column in part.find_all(exp.Column):
        read = scope.resolve(column, clause_of(column, tree))
        if read is not None:
            found.add(read)
    return found


def _one_stream(part: exp.Expr, scope: Scope, tree: exp.Select) -> str | None:
    """The one stream whose columns ``part`` reads (None for none or two)."""
    streams = {stream for stream, _ in _reads(part, scope, tree)}
    return streams.pop() if len(streams) == 1 else None


def _two_streams(*sides: str | None) -> bool:
    return len(sides) == 2 and None not in sides and sides[0] != sides[1]


def _time_bound(
    bounded: exp.Expr, op: str, bound: exp.Expr, scope: Scope, tree: exp.Select
) -> set[tuple[str, str, str]]:
    """``bounded op bound`` as a bound of one stream's event time by the other's: (stream,
    other stream, ">" for a lower bound or "<" for an upper one), the streams in name
    order (a lower bound on one is an upper bound on the other); empty when it is none."""
    this, other = _one_stream(bounded, scope, tree), _one_stream(bound, scope, tree)
    times = [
        any(column == EVENT_TIME for _, column in _reads(part, scope, tree))
        for part in (bounded, bound)
    ]
    if this is None or other is None or this == other or not all(times):
        return set()
    if this > other:
        this, other, op = other, this, "<" if op == ">" else ">"
    return {(this, other, op)}

"""The allow-list every user-written SQL expression passes before it reaches Spark.

A map's ``expression`` (and, later, any SQL text a user stores) is parsed with sqlglot's
Spark dialect into a tree, and every node of the tree must be on the lists below:

- columns (plain identifiers, no table or struct qualifier), literals (numbers, booleans,
  ``NULL``, strings of printable characters without quotes or backslashes);
- arithmetic (``+ - * / % div``, unary minus), comparisons, ``AND``/``OR``/``NOT``,
  ``IS [NOT] NULL``, ``BETWEEN``, ``IN (<list>)``, ``LIKE``, ``CASE``, ``IF``, ``CAST``;
- calls of the pure, deterministic functions of :data:`PURE_FUNCTIONS`.

Everything else is refused with the function or construct named: ``reflect``,
``java_method``, ``input_file_name``, a UDF, ``rand``, ``current_timestamp``, a subquery, a
lambda, a statement (``CREATE FUNCTION …``), several statements, comments.

What Spark runs is not the user's text but the checked tree rendered back to Spark SQL
(:attr:`CheckedExpression.sql`), so a construct the two parsers read differently cannot
slip through. Pure Python; no Spark import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

MAX_EXPRESSION_CHARS = 1_000
"""Longest expression accepted (characters)."""
MAX_NESTING = 32
"""Deepest parenthesis nesting accepted (also keeps the parser's recursion bounded)."""

PURE_FUNCTIONS: dict[str, str] = {
    # name: a sample argument list, parsed once to learn the node sqlglot makes of a call
    "abs": "x",
    "acos": "x",
    "asin": "x",
    "atan": "x",
    "atan2": "x, y",
    "bround": "x, 2",
    "cbrt": "x",
    "ceil": "x",
    "ceiling": "x",
    "char_length": "x",
    "coalesce": "x, y",
    "concat": "x, y",
    "cos": "x",
    "cosh": "x",
    "crc32": "x",
    "degrees": "x",
    "exp": "x",
    "expm1": "x",
    "floor": "x",
    "greatest": "x, y",
    "hash": "x",
    "if": "x > 1, 1, 2",
    "isnotnull": "x",
    "isnull": "x",
    "least": "x, y",
    "length": "x",
    "ln": "x",
    "log": "x",
    "log10": "x",
    "log1p": "x",
    "log2": "x",
    "lower": "x",
    "lpad": "x, 3, 'a'",
    "ltrim": "x",
    "md5": "x",
    "nanvl": "x, y",
    "nullif": "x, y",
    "nvl": "x, y",
    "pmod": "x, 3",
    "pow": "x, 2",
    "power": "x, 2",
    "radians": "x",
    "replace": "x, 'a', 'b'",
    "round": "x, 2",
    "rpad": "x, 3, 'a'",
    "rtrim": "x",
    "sha1": "x",
    "sha2": "x, 256",
    "sign": "x",
    "signum": "x",
    "sin": "x",
    "sinh": "x",
    "sqrt": "x",
    "substr": "x, 1, 2",
    "substring": "x, 1, 2",
    "tan": "x",
    "tanh": "x",
    "trim": "x",
    "try_add": "x, y",
    "try_divide": "x, y",
    "try_multiply": "x, y",
    "try_subtract": "x, y",
    "upper": "x",
    "xxhash64": "x",
}
"""The functions an expression may call: pure and deterministic (no I/O, no clock, no
randomness, no JVM reflection, no user-defined code)."""

_OPERATORS: frozenset[type[exp.Expr]] = frozenset(
    {
        exp.Column,
        exp.Identifier,
        exp.Literal,
        exp.Boolean,
        exp.Null,
        exp.Paren,
        exp.Add,
        exp.Sub,
        exp.Mul,
        exp.Div,
        exp.Mod,
        exp.IntDiv,
        exp.Neg,
        exp.EQ,
        exp.NEQ,
        exp.GT,
        exp.GTE,
        exp.LT,
        exp.LTE,
        exp.NullSafeEQ,
        exp.And,
        exp.Or,
        exp.Not,
        exp.Is,
        exp.In,
        exp.Between,
        exp.Like,
        exp.Case,
        exp.If,
        exp.Cast,
        exp.TryCast,
        exp.DPipe,
        exp.DataType,
        exp.DataTypeParam,
    }
)
"""Non-function constructs allowed anywhere in an expression (matched by exact type, so a
subclass sqlglot may add for another construct is not let in by its parent)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SAFE_STRING = re.compile(r"[^'\"\\\x00-\x1f\x7f]*\Z")


class SqlNotAllowed(ValueError):
    """The text is not an allowed expression; the message names the construct or function
    and, for a syntax error, the position (1-based character)."""


@dataclass(frozen=True, slots=True)
class CheckedExpression:
    """An expression that passed the allow-list.

    Attributes:
        sql: the checked tree rendered as Spark SQL: the only text handed to Spark.
        columns: the columns it reads.
    """

    sql: str
    columns: frozenset[str]


def _learn_functions() -> tuple[frozenset[type[exp.Func]], frozenset[str]]:
    classes: set[type[exp.Func]] = set()
    anonymous: set[str] = set()
    for name, args in PURE_FUNCTIONS.items():
        node = sqlglot.parse_one(f"{name}({args})", dialect="spark")
        if isinstance(node, exp.Anonymous):
            anonymous.add(name)
        elif isinstance(node, exp.Func):
            classes.add(type(node))
        else:  # pragma: no cover - a sample that does not parse to a call is a typo here
            raise AssertionError(f"sample call of {name!r} parsed to {type(node).__name__}")
    return frozenset(classes), frozenset(anonymous)


_FUNCTION_CLASSES, _ANONYMOUS_FUNCTIONS = _learn_functions()


def check_expression(text: str) -> CheckedExpression:
    """Parse ``text`` and check every node against the allow-list.

    Raises:
        SqlNotAllowed: with a sentence naming what is not allowed, or where the text
            stops parsing.
    """
    if len(text) > MAX_EXPRESSION_CHARS:
        raise SqlNotAllowed(f"is {len(text)} characters long; the limit is {MAX_EXPRESSION_CHARS}")
    _check_nesting(text)
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except ParseError as exc:
        raise SqlNotAllowed(_parse_error_message(text, exc)) from None
    except (TokenError, RecursionError) as exc:
        raise SqlNotAllowed(f"cannot be read as a SQL expression ({exc})") from None
    columns: set[str] = set()
    for node in tree.walk():
        _check_node(node, columns)
    return CheckedExpression(sql=tree.sql(dialect="spark"), columns=frozenset(columns))


def _check_nesting(text: str) -> None:
    depth = deepest = 0
    for ch in text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    if deepest > MAX_NESTING:
        raise SqlNotAllowed(f"nests parentheses {deepest} deep; the limit is {MAX_NESTING}")


def _parse_error_message(text: str, exc: ParseError) -> str:
    first = exc.errors[0] if exc.errors else {}
    line, col = first.get("line"), first.get("col")
    if isinstance(line, int) and isinstance(col, int):
        lines = text.splitlines() or [""]
        position = sum(len(s) + 1 for s in lines[: line - 1]) + col
        near = first.get("highlight") or ""
        return f"is not a valid SQL expression: unexpected {near!r} at position {position}"
    return "is not a valid SQL expression"


def _check_node(node: exp.Expr, columns: set[str]) -> None:
    if node.comments:
        raise SqlNotAllowed("contains a comment; comments are not allowed")
    if type(node) in _OPERATORS:
        _check_operand(node, columns)
    elif isinstance(node, exp.Func):
        name = _function_name(node)
        allowed = (
            name in _ANONYMOUS_FUNCTIONS
            if isinstance(node, exp.Anonymous)
            else type(node) in _FUNCTION_CLASSES
        )
        if not allowed:
            raise SqlNotAllowed(
                f"calls function {name!r}, which is not on the allow-list of pure functions "
                f"({', '.join(sorted(PURE_FUNCTIONS))})"
            )
    else:
        raise SqlNotAllowed(
            f"uses {type(node).__name__} ({_snippet(node)!r}), which is not allowed in an "
            "expression"
        )


def _check_operand(node: exp.Expr, columns: set[str]) -> None:
    if isinstance(node, exp.Column):
        if node.table or not _NAME.match(node.name):
            raise SqlNotAllowed(
                f"reads {node.sql(dialect='spark')!r}; a column is a plain name "
                "(letters, digits, underscores)"
            )
        columns.add(node.name)
    elif isinstance(node, exp.Literal) and node.is_string and not _SAFE_STRING.match(node.this):
        raise SqlNotAllowed(
            "has a string literal with a quote, backslash or control character; "
            "those are not allowed in string literals"
        )
    elif isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")):
        raise SqlNotAllowed("uses IN with a subquery; only IN (<list of values>) is allowed")


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql(dialect="spark").split("(", 1)[0].strip().lower()


def _snippet(node: exp.Expr, limit: int = 40) -> str:
    rendered = node.sql(dialect="spark").strip()
    return rendered if len(rendered) <= limit else rendered[: limit - 1] + "…"


# --- queries ---------------------------------------------------------------------------------

MAX_QUERY_CHARS = 4_000
"""Longest query accepted (characters)."""
AGGREGATES: frozenset[type[exp.Expr]] = frozenset({exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max})
"""Aggregate functions a query may use (Spark keeps their state in the state store)."""
_QUERY_NODES: frozenset[type[exp.Expr]] = frozenset(
    {exp.Alias, exp.Star, exp.Interval, exp.Var, exp.From, exp.Join, exp.Where, exp.Group}
    | {exp.Having, exp.Table, exp.TableAlias}
)
_CLAUSES = frozenset({"expressions", "from_", "joins", "where", "group", "having"})
"""The parts of a SELECT a query may have (no DISTINCT, ORDER BY, LIMIT, WITH, …)."""
WINDOW_FUNCTION = "window"
_WINDOW_STAND_IN = "hrwin_"  # as long as "window": positions in messages stay right
_WINDOW_CALL = re.compile(r"(?<![\w.])window(?=\s*\()", re.IGNORECASE)
_DURATION = re.compile(r"\s*\d+(\.\d+)?\s+(millisecond|second|minute|hour)s?\s*\Z", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class CheckedQuery:
    """A query that passed the allow-list.

    Attributes:
        streams: the streams it reads, in order: the ``FROM`` one, then the joined one.
        columns: per stream, the columns it reads there.
        stateful: it aggregates or joins (Spark keeps state for it).
        tree: the checked tree (render it with :func:`render_query`).
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
                alias = exp.to_identifier(table.name, quoted=not _NAME.match(table.name))
                table.set("alias", exp.TableAlias(this=alias))
            table.set("this", exp.to_identifier(views[table.name]))
        for call in tree.find_all(exp.Anonymous):
            if str(call.name).lower() == _WINDOW_STAND_IN:
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
    _check_nesting(text)
    prepared = _stand_in_windows(text)
    try:
        trees = sqlglot.parse(prepared, dialect="spark")
    except ParseError as exc:
        raise SqlNotAllowed(
            _parse_error_message(text, exc).replace("expression", "query")
        ) from None
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
    columns: dict[str, set[str]] = {name: set() for name in tables.values()}
    for node in tree.walk():
        if node.comments:
            raise SqlNotAllowed("contains a comment; comments are not allowed")
        if node is tree:
            continue
        if type(node) in AGGREGATES:
            _check_aggregate(node, text)
        elif isinstance(node, exp.Anonymous) and str(node.name).lower() == _WINDOW_STAND_IN:
            _check_window(node, text)
        elif isinstance(node, exp.Column):
            _check_column(node, text, tables, streams, columns)
        elif isinstance(node, exp.Star):
            if not isinstance(node.parent, exp.Count):
                raise SqlNotAllowed(
                    f"uses * at position {_position(text, '*')}; name the columns (only "
                    "count(*) may use *)"
                )
        elif isinstance(node, exp.Literal) and isinstance(node.parent, exp.Interval):
            continue
        elif type(node) not in _QUERY_NODES:
            _check_node(node, set())
    if _aggregates(tree) and tree.args.get("joins"):
        raise SqlNotAllowed(
            "both joins and aggregates; Spark runs one or the other in a query's update "
            "mode (write two queries)"
        )
    return CheckedQuery(
        streams=tuple(dict.fromkeys(tables.values())),
        columns={name: frozenset(used) for name, used in columns.items()},
        stateful=_stateful(tree),
        tree=tree,
    )


def _aggregates(tree: exp.Select) -> bool:
    return bool(tree.args.get("group")) or any(type(n) in AGGREGATES for n in tree.walk())


def _stateful(tree: exp.Select) -> bool:
    """It aggregates or joins: Spark keeps state for it."""
    return _aggregates(tree) or bool(tree.args.get("joins"))


def _stand_in_windows(text: str) -> str:
    """``text`` with every ``window(`` call outside string literals renamed for sqlglot
    (which reads ``window`` as the WINDOW clause)."""
    parts = text.split("'")
    for i in range(0, len(parts), 2):  # outside quotes
        parts[i] = _WINDOW_CALL.sub(_WINDOW_STAND_IN, parts[i])
    return "'".join(parts)


def _position(text: str, fragment: str) -> int:
    at = text.lower().find(fragment.lower().rstrip("_"))
    return at + 1 if at >= 0 else 1


def _tables(tree: exp.Select, text: str, streams: dict[str, frozenset[str]]) -> dict[str, str]:
    """Alias (and name) → stream of the FROM and the JOIN."""
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
                f"reads {_snippet(table)!r}; FROM and JOIN name a stream (no subquery, no "
                "qualified name)"
            )
        if table.name not in streams:
            raise SqlNotAllowed(
                f"reads {table.name!r} at position {_position(text, table.name)}, which is not "
                f"a stream here (streams: {', '.join(sorted(streams))})"
            )
        tables[table.alias_or_name] = table.name
        tables[table.name] = table.name
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
            f"uses DISTINCT in {_snippet(node)!r} at position {_position(text, 'distinct')}; "
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
                f"gives window the duration {_snippet(d)!r} at position "
                f"{_position(text, 'window')}; write a string like '10 seconds'"
            )


def _check_column(
    node: exp.Column,
    text: str,
    tables: dict[str, str],
    streams: dict[str, frozenset[str]],
    columns: dict[str, set[str]],
) -> None:
    name = node.name
    if not _NAME.match(name) or node.args.get("db") or node.args.get("catalog"):
        raise SqlNotAllowed(f"reads {_snippet(node)!r}; a column is a plain name")
    if node.table:
        if node.table not in tables:
            raise SqlNotAllowed(
                f"reads {_snippet(node)!r} at position {_position(text, node.table)}: "
                f"{node.table!r} is not a stream of the query"
            )
        owners = [tables[node.table]]
    else:
        owners = [s for s in dict.fromkeys(tables.values()) if name in streams[s]]
        if not owners and _is_alias(node, name):
            return  # a SELECT alias used in GROUP BY or HAVING
    found = [s for s in owners if name in streams[s]]
    if not found:
        where = ", ".join(dict.fromkeys(tables.values()))
        raise SqlNotAllowed(
            f"reads column {name!r} at position {_position(text, name)}, which {where} "
            "does not have"
        )
    if len(found) > 1:
        raise SqlNotAllowed(
            f"reads column {name!r} at position {_position(text, name)}, which both "
            f"{' and '.join(found)} have; qualify it (e.g. {found[0]}.{name})"
        )
    columns[found[0]].add(name)


def _is_alias(node: exp.Column, name: str) -> bool:
    select = node.find_ancestor(exp.Select)
    return select is not None and any(
        isinstance(e, exp.Alias) and e.alias == name for e in select.expressions
    )


def query_shape(text: str) -> tuple[tuple[str, ...], bool]:
    """The streams a query names in FROM and JOIN, in order, and whether it keeps state
    (aggregates or joins); no other check (an unreadable text names none)."""
    try:
        tree = sqlglot.parse_one(_stand_in_windows(text), dialect="spark")
    except (ParseError, TokenError, RecursionError):
        return (), False
    if not isinstance(tree, exp.Select):
        return (), False
    clauses = [tree.args.get("from_"), *(tree.args.get("joins") or [])]
    names = [c.this.name for c in clauses if c is not None and isinstance(c.this, exp.Table)]
    return tuple(dict.fromkeys(names)), _stateful(tree)

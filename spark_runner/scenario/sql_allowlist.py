"""The allow-list every user-written SQL expression passes before it reaches Spark.

A map's ``expression``, and every expression of a class's SQL query
(:mod:`spark_runner.scenario.sql_query`), is parsed with sqlglot's Spark dialect into a
tree, and every node of the tree must be on the lists below:

- columns (plain identifiers, no table or struct qualifier), literals (numbers, booleans,
  ``NULL``, strings of printable characters without quotes or backslashes);
- arithmetic (``+ - * / % div``, unary minus), comparisons, ``AND``/``OR``/``NOT``,
  ``IS [NOT] NULL``, ``BETWEEN``, ``IN (<list>)``, ``LIKE``, ``CASE``, ``IF``, ``CAST``;
- calls of the pure, deterministic functions of :data:`PURE_FUNCTIONS`.

Everything else is refused with the function or construct named: ``reflect``,
``java_method``, ``input_file_name``, a UDF, ``rand``, ``current_timestamp``, a subquery, a
lambda, a statement (``CREATE FUNCTION …``), several statements, comments; so is a column
named like one of the functions Spark calls without parentheses (``user``, ``current_user``
… :data:`SPARK_NILADIC_NAMES`): Spark reads such a name as the function wherever no column
has it.

What a row costs is bounded as well: the arguments that size what a call builds or
computes are bounded literals (``lpad``/``rpad`` lengths, ``round`` scales, ``LIKE``
patterns), and no string an expression builds may outgrow its inputs more than
:data:`MAX_STRING_GROWTH` times or hold more than :data:`MAX_BUILT_STRING_CHARS` characters
from constants (:func:`check_string_sizes`).

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
MAX_BUILT_STRING_CHARS = 10_000
"""Most characters an expression may build from constants: ``lpad``/``rpad``'s length (a
literal whole number, at most this), and the constant part of any string it builds."""
MAX_STRING_GROWTH = 100
"""Most times a string an expression builds may hold its longest input column (``concat``
and ``||`` add their parts; ``replace`` multiplies by how much longer its replacement is than
what it replaces, so nested calls multiply)."""
MAX_ROUND_DIGITS = 38
"""Largest ``round``/``bround`` scale, either sign (Spark's largest decimal scale): Spark
rounds a double through a decimal of that scale, and a scale of 10⁶ takes seconds a row."""
MAX_LIKE_WILDCARDS = 2
"""Most ``%`` in a ``LIKE`` pattern (a literal string): Spark matches a pattern it cannot
reduce to a prefix, suffix or substring test with a backtracking regular expression, whose
time grows as the string's length to the power of the ``%`` count."""

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

SPARK_NILADIC_NAMES = frozenset(
    {
        # Spark reads these bare names, in any case and quoted or not, as the function
        # where no column of the query has the name (its LiteralFunctionResolution)
        "user", "current_user", "session_user", "current_date", "current_timestamp",
        "current_time", "grouping__id",
        # session state behind a function of the same name: refused as names as well
        "current_database", "current_schema", "current_catalog", "current_timezone",
        "localtimestamp",
    }
)  # fmt: skip
"""Names that are Spark functions as bare identifiers (``user`` reads the session's user):
no column, alias or stream column may take one."""
NILADIC_RULE = (
    "Spark reads that name as a function of the session where no column has it; no name "
    f"may be one of SPARK_NILADIC_NAMES ({', '.join(sorted(SPARK_NILADIC_NAMES))}; "
    "compared case-insensitively)"
)


def spark_function_name(name: str) -> bool:
    """``name`` is one of :data:`SPARK_NILADIC_NAMES`, compared case-insensitively."""
    return name.lower() in SPARK_NILADIC_NAMES


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

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
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
    check_nesting(text)
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except ParseError as exc:
        raise SqlNotAllowed(parse_error_message(text, exc)) from None
    except (TokenError, RecursionError) as exc:
        raise SqlNotAllowed(f"cannot be read as a SQL expression ({exc})") from None
    columns: set[str] = set()
    for node in tree.walk():
        check_node(node, columns)
    check_string_sizes(tree)
    return CheckedExpression(sql=tree.sql(dialect="spark"), columns=frozenset(columns))


def check_nesting(text: str) -> None:
    depth = deepest = 0
    for ch in text:
        if ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")":
            depth -= 1
    if deepest > MAX_NESTING:
        raise SqlNotAllowed(f"nests parentheses {deepest} deep; the limit is {MAX_NESTING}")


def parse_error_message(text: str, exc: ParseError) -> str:
    first = exc.errors[0] if exc.errors else {}
    line, col = first.get("line"), first.get("col")
    if isinstance(line, int) and isinstance(col, int):
        lines = text.splitlines() or [""]
        position = sum(len(s) + 1 for s in lines[: line - 1]) + col
        near = first.get("highlight") or ""
        return f"is not a valid SQL expression: unexpected {near!r} at position {position}"
    return "is not a valid SQL expression"


def check_node(node: exp.Expr, columns: set[str]) -> None:
    if node.comments:
        raise SqlNotAllowed("contains a comment; comments are not allowed")
    if type(node) in _OPERATORS:
        _check_operand(node, columns)
    elif isinstance(node, exp.Func):
        name = function_name(node)
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
        _check_arguments(node, name)
    else:
        raise SqlNotAllowed(
            f"uses {type(node).__name__} ({snippet(node)!r}), which is not allowed in an expression"
        )


def _check_operand(node: exp.Expr, columns: set[str]) -> None:
    if isinstance(node, exp.Column):
        if node.table or not NAME.match(node.name):
            raise SqlNotAllowed(
                f"reads {node.sql(dialect='spark')!r}; a column is a plain name "
                "(letters, digits, underscores)"
            )
        if spark_function_name(node.name):
            raise SqlNotAllowed(f"reads {node.name!r}: {NILADIC_RULE}")
        columns.add(node.name)
    elif isinstance(node, exp.Literal) and node.is_string and not _SAFE_STRING.match(node.this):
        raise SqlNotAllowed(
            "has a string literal with a quote, backslash or control character; "
            "those are not allowed in string literals"
        )
    elif isinstance(node, exp.In) and (node.args.get("query") or node.args.get("unnest")):
        raise SqlNotAllowed("uses IN with a subquery; only IN (<list of values>) is allowed")
    elif isinstance(node, exp.Like):
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            raise SqlNotAllowed(
                f"matches LIKE {snippet(pattern)!r} at position {position(node)}; a LIKE "
                "pattern is a string literal"
            )
        if pattern.this.count("%") > MAX_LIKE_WILDCARDS:
            raise SqlNotAllowed(
                f"matches LIKE {pattern.this!r} at position {position(pattern)}, with "
                f"{pattern.this.count('%')} %; MAX_LIKE_WILDCARDS is {MAX_LIKE_WILDCARDS}"
            )


def function_name(node: exp.Func) -> str:
    """The name ``node`` calls, in lower case."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql(dialect="spark").split("(", 1)[0].strip().lower()


def _check_arguments(node: exp.Func, name: str) -> None:
    """The arguments that size what a call builds or computes are bounded literals."""
    if isinstance(node, exp.Pad):
        _whole_number(node.expression, name, 0, MAX_BUILT_STRING_CHARS, "MAX_BUILT_STRING_CHARS")
    elif name in ("round", "bround"):
        digits = node.args.get("decimals") if isinstance(node, exp.Round) else None
        if isinstance(node, exp.Anonymous):
            digits = node.expressions[1] if len(node.expressions) > 1 else None
        if digits is not None:
            _whole_number(digits, name, -MAX_ROUND_DIGITS, MAX_ROUND_DIGITS, "MAX_ROUND_DIGITS")
    elif isinstance(node, exp.Replace) and node.args.get("replacement") is not None:
        for part in (node.expression, node.args["replacement"]):
            if not (isinstance(part, exp.Literal) and part.is_string):
                raise SqlNotAllowed(
                    f"calls replace with {snippet(part)!r} at position {position(part)}; "
                    "what replace finds and what it puts instead are string literals"
                )


def _whole_number(arg: exp.Expr, name: str, low: int, high: int, bound: str) -> None:
    negative = isinstance(arg, exp.Neg)
    number = arg.this if negative else arg
    value = None
    if isinstance(number, exp.Literal) and not number.is_string and number.this.isdigit():
        value = -int(number.this) if negative else int(number.this)
    if value is None or not low <= value <= high:
        raise SqlNotAllowed(
            f"calls {name} with {snippet(arg)!r} at position {position(arg)}; that argument "
            f"is a whole number literal from {low} to {high} ({bound} is {high})"
        )


def check_string_sizes(tree: exp.Expr) -> None:
    """No part of ``tree`` builds a string longer than :data:`MAX_STRING_GROWTH` times its
    longest input column plus :data:`MAX_BUILT_STRING_CHARS` characters.

    The bound of each part (times the longest input column, constant characters) comes
    from its children's: a column is (1, 0), a literal (0, its length), ``lpad``/``rpad``
    (0, their length), ``concat`` and ``||`` the sum of their parts, ``replace`` its input's
    times how much longer the replacement is than what it replaces, anything else the
    largest of its children's (it selects or shortens, or yields a number).
    """
    sizes: dict[int, tuple[float, float]] = {}
    for node in reversed(list(tree.walk(bfs=True))):  # children before their parents
        parts = [sizes[id(child)] for child in node.iter_expressions()]
        size = _string_size(node, parts)
        sizes[id(node)] = size
        if size[0] > MAX_STRING_GROWTH:
            raise SqlNotAllowed(
                f"{_builds(node)} up to {size[0]:g} times as long as its longest input "
                f"column; MAX_STRING_GROWTH is {MAX_STRING_GROWTH}"
            )
        if size[1] > MAX_BUILT_STRING_CHARS:
            raise SqlNotAllowed(
                f"{_builds(node)} with up to {size[1]:g} characters besides its input "
                f"columns; MAX_BUILT_STRING_CHARS is {MAX_BUILT_STRING_CHARS}"
            )


def _builds(node: exp.Expr) -> str:
    return f"builds a string in {snippet(node)!r} at position {position(node)}"


def _string_size(node: exp.Expr, parts: list[tuple[float, float]]) -> tuple[float, float]:
    if isinstance(node, exp.Column):
        return 1.0, 0.0
    if isinstance(node, exp.Literal):
        return 0.0, float(len(str(node.this)))
    if isinstance(node, exp.Pad):
        return 0.0, float(int(node.expression.this))  # a whole literal (checked before)
    if isinstance(node, exp.Concat | exp.DPipe):
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if isinstance(node, exp.Replace) and node.args.get("replacement") is not None:
        found, put = len(node.expression.this), len(node.args["replacement"].this)
        factor = max(1.0, put / found) if found else 1.0
        first = parts[0]
        return first[0] * factor, first[1] * factor
    return max((p[0] for p in parts), default=0.0), max((p[1] for p in parts), default=0.0)


def position(node: exp.Expr) -> int:
    """Where ``node`` starts in the parsed text (1-based character): its first token that
    sqlglot placed (an identifier, a literal, a function's name); 1 when none was."""
    starts = [n.meta["start"] for n in node.walk() if "start" in n.meta]
    return min(starts) + 1 if starts else 1


def snippet(node: exp.Expr, limit: int = 40) -> str:
    rendered = node.sql(dialect="spark").strip()
    return rendered if len(rendered) <= limit else rendered[: limit - 1] + "…"


# --- queries: the parts the scenario models read ---------------------------------------

MAX_QUERY_CHARS = 4_000
"""Longest query accepted (characters)."""
AGGREGATES: frozenset[type[exp.Expr]] = frozenset({exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max})
"""Aggregate functions a query may use (Spark keeps their state in the state store)."""
WINDOW_FUNCTION = "window"
WINDOW_STAND_IN = "hrwin_"
"""What ``window`` calls are renamed to for sqlglot: as long as "window", so positions in
messages stay right."""
_WINDOW_CALL = re.compile(r"(?<![\w.])window(?=\s*\()", re.IGNORECASE)


def aggregates(tree: exp.Select) -> bool:
    return bool(tree.args.get("group")) or any(type(n) in AGGREGATES for n in tree.walk())


def stateful(tree: exp.Select) -> bool:
    """It aggregates or joins: Spark keeps state for it."""
    return aggregates(tree) or bool(tree.args.get("joins"))


def stand_in_windows(text: str) -> str:
    """``text`` with every ``window(`` call outside string literals renamed for sqlglot
    (which reads ``window`` as the WINDOW clause)."""
    parts = text.split("'")
    for i in range(0, len(parts), 2):  # outside quotes
        parts[i] = _WINDOW_CALL.sub(WINDOW_STAND_IN, parts[i])
    return "'".join(parts)


def query_shape(text: str) -> tuple[tuple[str, ...], bool]:
    """The streams a query names in FROM and JOIN, in order, and whether it keeps state
    (aggregates or joins); no other check (an unreadable text names none)."""
    try:
        tree = sqlglot.parse_one(stand_in_windows(text), dialect="spark")
    except (ParseError, TokenError, RecursionError):
        return (), False
    if not isinstance(tree, exp.Select):
        return (), False
    clauses = [tree.args.get("from_"), *(tree.args.get("joins") or [])]
    names = [c.this.name for c in clauses if c is not None and isinstance(c.this, exp.Table)]
    return tuple(dict.fromkeys(names)), stateful(tree)

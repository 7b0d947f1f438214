"""What the names of a class's SQL query resolve to, as Spark resolves them.

Every identifier of a checked query is resolved against the query's actual scope, never
trusted because some SELECT item carries it as an alias:

- a column reads a column of the query's streams (their own, plus ``arrival_s`` and
  ``event_time``): unqualified, of the one stream that has it; qualified, of the stream
  (or its alias) that qualifies it; names compare case-insensitively, as Spark's do;
- a SELECT alias may be named only where Spark reads aliases and nothing else can take
  its place: as a whole ``GROUP BY`` key and in ``HAVING``. Not in the SELECT list (Spark
  resolves a "lateral" alias only where no column of the view has the name: the views
  carry the engine's own columns, ``seq`` and ``point``), not in ``JOIN … ON``, not in
  ``WHERE``;
- an output alias is a plain name, and none of the engine's own
  (:func:`~spark_runner.scenario.columns.engine_column`), in any case: the output rows
  carry ``class``, ``query`` and ``arrival_s`` beside the query's columns.

Names Spark reads as functions of the session (``user`` …) are refused before they are
resolved (:data:`~spark_runner.scenario.sql_allowlist.SPARK_NILADIC_NAMES`). Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from spark_runner.scenario.columns import engine_column, engine_column_rule
from spark_runner.scenario.sql_allowlist import (
    NAME,
    NILADIC_RULE,
    SqlNotAllowed,
    position,
    snippet,
    spark_function_name,
)

ALIAS_CLAUSES = frozenset({"group", "having"})
"""The clauses of a SELECT that may name one of its aliases."""


@dataclass(frozen=True)
class Scope:
    """The names a query may read.

    Attributes:
        tables: qualifier (a stream's alias, else its name; lower case) → stream.
        columns: per stream, each column's name in lower case → its declared names.
        aliases: the SELECT list's aliases, in lower case.
    """

    tables: dict[str, str]
    columns: dict[str, dict[str, tuple[str, ...]]]
    aliases: frozenset[str]

    @classmethod
    def of(
        cls, tree: exp.Select, tables: Mapping[str, str], streams: Mapping[str, frozenset[str]]
    ) -> Scope:
        """The scope of ``tree`` reading ``tables`` (qualifier → stream) of ``streams``."""
        columns: dict[str, dict[str, tuple[str, ...]]] = {}
        for stream in dict.fromkeys(tables.values()):
            folded: dict[str, tuple[str, ...]] = {}
            for name in sorted(streams[stream]):
                folded[name.lower()] = (*folded.get(name.lower(), ()), name)
            columns[stream] = folded
        aliases = frozenset(
            item.alias.lower() for item in tree.expressions if isinstance(item, exp.Alias)
        )
        return cls({q.lower(): s for q, s in tables.items()}, columns, aliases)

    def resolve(self, node: exp.Column, clause: str) -> tuple[str, str] | None:
        """The (stream, declared column) ``node`` reads, or None where it names a SELECT
        alias; ``clause``: the SELECT's part it stands in (``expressions``, ``where``,
        ``group`` …).

        Raises:
            SqlNotAllowed: naming the column and its position, and why it reads nothing.
        """
        name = node.name
        if not NAME.match(name) or node.args.get("db") or node.args.get("catalog"):
            raise SqlNotAllowed(f"reads {snippet(node)!r}; a column is a plain name")
        if spark_function_name(name):
            raise SqlNotAllowed(f"reads {name!r} at position {position(node)}: {NILADIC_RULE}")
        if node.table:
            stream = self.tables.get(node.table.lower())
            if stream is None:
                raise SqlNotAllowed(
                    f"reads {snippet(node)!r} at position {position(node)}: "
                    f"{node.table!r} is not a stream of the query"
                )
            owners = [stream]
        else:
            owners = [s for s in self.columns if name.lower() in self.columns[s]]
            if not owners and name.lower() in self.aliases:
                _check_alias_use(node, clause)
                return None
        return self._declared(node, owners)

    def _declared(self, node: exp.Column, owners: list[str]) -> tuple[str, str]:
        name = node.name
        found = [s for s in owners if name.lower() in self.columns[s]]
        if not found:
            raise SqlNotAllowed(
                f"reads column {name!r} at position {position(node)}, which "
                f"{' and '.join(owners or self.columns)} does not have"
            )
        if len(found) > 1:
            raise SqlNotAllowed(
                f"reads column {name!r} at position {position(node)}, which both "
                f"{' and '.join(found)} have; qualify it (e.g. {found[0]}.{name})"
            )
        declared = self.columns[found[0]][name.lower()]
        if len(declared) > 1:
            raise SqlNotAllowed(
                f"reads column {name!r} at position {position(node)}, which is "
                f"{' and '.join(declared)} of {found[0]} alike (Spark compares names "
                "case-insensitively)"
            )
        return found[0], declared[0]


def _check_alias_use(node: exp.Column, clause: str) -> None:
    """A SELECT alias stands as a whole GROUP BY key or in HAVING, nowhere else."""
    key: exp.Expr = node
    while isinstance(key.parent, exp.Paren):
        key = key.parent
    if clause == "having" or (clause == "group" and isinstance(key.parent, exp.Group)):
        return
    raise SqlNotAllowed(
        f"reads {node.name!r} at position {position(node)}, which is a SELECT alias and no "
        "column of the query's streams; an alias may stand as a whole GROUP BY key or in "
        "HAVING, not elsewhere in GROUP BY, in the SELECT list, JOIN … ON or WHERE"
    )


def clause_of(node: exp.Expr, tree: exp.Select) -> str:
    """The part of ``tree`` (``expressions``, ``joins``, ``where``, ``group`` …) that
    holds ``node``."""
    while node.parent is not None and node.parent is not tree:
        node = node.parent
    return node.arg_key or ""


def check_outputs(tree: exp.Select) -> None:
    """Every alias names a SELECT item with a plain name that is none of the engine's
    own columns and no Spark function of the session, in any case; no two output columns
    share a name, in any case.

    Raises:
        SqlNotAllowed: naming the alias, its position and the rule.
    """
    for alias in tree.find_all(exp.Alias):
        if alias.parent is not tree:
            raise SqlNotAllowed(
                f"uses AS in {snippet(alias)!r} at position {position(alias)}; an alias "
                "names a SELECT item only"
            )
        name = alias.alias
        where = f"names its output {name!r} at position {position(alias.args['alias'])}"
        if not NAME.match(name):
            raise SqlNotAllowed(f"{where}; an alias is a plain name (letters, digits, _)")
        if engine_column(name):
            raise SqlNotAllowed(f"{where}, which {engine_column_rule()}")
        if spark_function_name(name):
            raise SqlNotAllowed(f"{where}: {NILADIC_RULE}")
    names: dict[str, exp.Expr] = {}
    for item in tree.expressions:
        name = _output_name(item)
        if name.lower() in names:
            raise SqlNotAllowed(
                f"names two output columns {name!r} (at positions "
                f"{position(names[name.lower()])} and {position(item)}; names compare "
                "case-insensitively, as Spark resolves them): alias one of them"
            )
        names[name.lower()] = item
    for table in tree.find_all(exp.TableAlias):
        if table.columns:
            raise SqlNotAllowed(
                f"renames the columns of {snippet(table.parent or table)!r} at position "
                f"{position(table)}; a stream's alias is a plain name"
            )


def _output_name(item: exp.Expr) -> str:
    """The name of a SELECT item's output column: its alias, its column's name, else (as
    Spark names an expression by its text) the expression as written back."""
    if isinstance(item, exp.Alias | exp.Column):
        return item.alias_or_name
    return item.sql(dialect="spark")

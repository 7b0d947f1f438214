"""Rules that span several parts of a scenario (the models check each part on its own).

- names: streams and shared segments share one namespace; class names are unique; query
  names are unique within their class; explicit operator names are unique in the file;
- references: a query's or segment's ``source`` and a join's ``right`` name a stream or a
  shared segment (a join also needs ``sim.selectivity``); segments do not feed themselves
  (no cycles); every segment is used;
- managers: each class's manager kind and parameters are valid for the core's
  ``make_manager`` (the delay target comes from the class, never from ``params``);
- columns: every column an operator reads exists upstream (a filter's predicate, a map's
  expression, a projection, an aggregate's column and grouping, both sides of a join's
  ``on_column``);
- traces: a trace file parses;
- control: the control period fits in the run.

Each broken rule is an :class:`Issue` with the YAML path it concerns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from spark_runner.core.errors import ParameterError
from spark_runner.core.managers.registry import manager_params
from spark_runner.core.thresholds import TAUS
from spark_runner.scenario.arrivals import TraceError, read_trace
from spark_runner.scenario.columns import (
    RIGHT_SUFFIX,
    WINDOW_BOUNDS,
    data_column,
    join_columns,
    repeated_name,
)
from spark_runner.scenario.errors import Issue
from spark_runner.scenario.models import (
    FilterOp,
    ManagerSpec,
    MapOp,
    OperatorModel,
    ProjectOp,
    Scenario,
    SqlOp,
    TraceArrival,
    WindowAggregateOp,
    WindowJoinOp,
    right_input,
)
from spark_runner.scenario.predicates import parse_predicate
from spark_runner.scenario.sql_allowlist import SqlNotAllowed, check_expression
from spark_runner.scenario.sql_query import check_query

ENGINE_COLUMNS = frozenset({"seq", "arrival_s"})
"""Columns every tuple has besides its stream's own."""
WINDOW_COLUMNS = frozenset({"value", *WINDOW_BOUNDS, "arrival_s"})
"""What a window aggregate emits besides its grouping columns."""


def segment_operators(scenario: Scenario) -> Iterator[tuple[str, OperatorModel]]:
    """Every operator of the shared segments, with its path in the scenario."""
    for i, seg in enumerate(scenario.shared_segments):
        for j, op in enumerate(seg.operators):
            yield f"shared_segments[{i}].operators[{j}]", op


def check_scenario(scenario: Scenario) -> list[Issue]:
    """Every cross-part rule ``scenario`` breaks (empty when it is valid)."""
    issues: list[Issue] = []
    inputs = _check_names(scenario, issues)
    _check_references(scenario, inputs, issues)
    _check_sql(scenario, issues)
    _check_columns(scenario, inputs, issues)
    _check_managers(scenario, issues)
    _check_elastic(scenario, issues)
    _check_traces(scenario, issues)
    if scenario.control.period_s > scenario.duration_s:
        issues.append(
            Issue(
                "control.period_s",
                f"must be <= duration_s ({scenario.duration_s} s), got {scenario.control.period_s}",
            )
        )
    return issues


def _check_names(scenario: Scenario, issues: list[Issue]) -> dict[str, str]:
    """Unique names; returns input name → "stream" / "segment"."""
    inputs: dict[str, str] = {}
    where: dict[str, str] = {}
    for i, stream in enumerate(scenario.streams):
        path = f"streams[{i}].name"
        if _claim(where, stream.name, path, issues, "{name!r} is already defined at {at}"):
            inputs[stream.name] = "stream"
    for i, seg in enumerate(scenario.shared_segments):
        path = f"shared_segments[{i}].name"
        clash = (
            "{name!r} is already defined at {at} (streams and shared segments share one namespace)"
        )
        if _claim(where, seg.name, path, issues, clash):
            inputs[seg.name] = "segment"
    class_paths: dict[str, str] = {}
    op_paths: dict[str, str] = {}

    def check_ops(prefix: str, ops: list[object]) -> None:
        for j, op in enumerate(ops):
            name = getattr(op, "name", None)
            if name is None:
                continue
            path = f"{prefix}.operators[{j}].name"
            _claim(op_paths, name, path, issues, "operator name {name!r} is already used at {at}")

    for i, seg in enumerate(scenario.shared_segments):
        check_ops(f"shared_segments[{i}]", list(seg.operators))
    for i, cls in enumerate(scenario.classes):
        path = f"classes[{i}].name"
        _claim(class_paths, cls.name, path, issues, "class {name!r} is already defined at {at}")
        query_paths: dict[str, str] = {}
        for j, query in enumerate(cls.queries):
            qpath = f"classes[{i}].queries[{j}]"
            clash = "query {name!r} is already defined in this class at {at}"
            _claim(query_paths, query.name, f"{qpath}.name", issues, clash)
            check_ops(qpath, list(query.operators))
    return inputs


def _claim(seen: dict[str, str], name: str, path: str, issues: list[Issue], clash: str) -> bool:
    """Record ``name`` as defined at ``path`` in ``seen`` (name → path); False, with the
    issue ``clash`` (a template of ``{name}`` and the earlier path ``{at}``) at ``path``,
    when it is defined already."""
    earlier = seen.get(name)
    if earlier is not None:
        issues.append(Issue(path, clash.format(name=name, at=earlier)))
        return False
    seen[name] = path
    return True


def _known(inputs: Mapping[str, str]) -> str:
    streams = sorted(n for n, k in inputs.items() if k == "stream")
    segments = sorted(n for n, k in inputs.items() if k == "segment")
    out = f"streams: {', '.join(streams) or '-'}"
    return out + (f"; shared segments: {', '.join(segments)}" if segments else "")


def _check_references(scenario: Scenario, inputs: Mapping[str, str], issues: list[Issue]) -> None:
    def check_ref(path: str, name: str, what: str) -> None:
        if name not in inputs:
            issues.append(
                Issue(
                    path,
                    f"{what} {name!r} is neither a stream nor a shared segment ({_known(inputs)})",
                )
            )

    def check_joins(prefix: str, ops: list[object]) -> None:
        for j, op in enumerate(ops):
            if isinstance(op, WindowJoinOp):
                check_ref(f"{prefix}.operators[{j}].right", op.right, "right input")
                if op.sim.selectivity is None:
                    issues.append(
                        Issue(
                            f"{prefix}.operators[{j}].sim.selectivity",
                            "is required for window_join (matches per input tuple; "
                            "the simulator cannot derive it)",
                        )
                    )

    segment_deps: dict[str, set[str]] = {}
    for i, seg in enumerate(scenario.shared_segments):
        prefix = f"shared_segments[{i}]"
        check_ref(f"{prefix}.source", seg.source, "source")
        check_joins(prefix, list(seg.operators))
        deps = {seg.source} | {r for op in seg.operators if (r := right_input(op)) is not None}
        segment_deps[seg.name] = {d for d in deps if inputs.get(d) == "segment"}
    used: set[str] = set()
    for i, cls in enumerate(scenario.classes):
        for j, query in enumerate(cls.queries):
            prefix = f"classes[{i}].queries[{j}]"
            check_ref(f"{prefix}.source", query.source, "source")
            check_joins(prefix, list(query.operators))
            used.add(query.source)
            used.update(r for op in query.operators if (r := right_input(op)) is not None)
    # cycles among segments
    state: dict[str, int] = {}

    def visit(name: str, stack: list[str]) -> None:
        state[name] = 1
        for dep in sorted(segment_deps.get(name, ())):
            if state.get(dep) == 1:
                cycle = [*stack[stack.index(dep) :], dep] if dep in stack else [name, dep]
                i = next(k for k, s in enumerate(scenario.shared_segments) if s.name == name)
                issues.append(
                    Issue(
                        f"shared_segments[{i}].source",
                        f"segments must not feed themselves: {' -> '.join(cycle)}",
                    )
                )
            elif state.get(dep) is None:
                visit(dep, [*stack, dep])
        state[name] = 2

    for seg in scenario.shared_segments:
        if seg.name not in state:
            visit(seg.name, [seg.name])
    # every segment is used by some query (directly or through other segments)
    reachable: set[str] = set()
    frontier = [u for u in used if inputs.get(u) == "segment"]
    while frontier:
        name = frontier.pop()
        if name in reachable:
            continue
        reachable.add(name)
        frontier.extend(segment_deps.get(name, ()))
    for i, seg in enumerate(scenario.shared_segments):
        if seg.name in inputs and inputs[seg.name] == "segment" and seg.name not in reachable:
            issues.append(
                Issue(
                    f"shared_segments[{i}].name", f"segment {seg.name!r} is not used by any query"
                )
            )


def manager_issues(path: str, spec: ManagerSpec, delay_target_s: float) -> list[Issue]:
    """Issues with one manager spec, validated by the core's parameter rules."""
    if "delay_target_s" in spec.params:
        return [
            Issue(
                f"{path}.params.delay_target_s",
                "is set by the class (delay_target_s), not in the manager's params",
            )
        ]
    try:
        manager_params(spec.kind, {**spec.params, "delay_target_s": delay_target_s})
    except ParameterError as exc:
        if exc.field == "kind":
            return [Issue(f"{path}.kind", f"{spec.kind!r}: {exc.rule}")]
        return [Issue(f"{path}.params.{exc.field}", f"{exc.value!r}: {exc.rule}")]
    return []


def _check_managers(scenario: Scenario, issues: list[Issue]) -> None:
    for i, cls in enumerate(scenario.classes):
        issues.extend(manager_issues(f"classes[{i}].manager", cls.manager, cls.delay_target_s))
    if scenario.control.mode == "common":
        common = scenario.control.common_manager
        target = common.delay_target_s or min(c.delay_target_s for c in scenario.classes)
        issues.extend(manager_issues("control.common_manager", common, target))


def _check_elastic(scenario: Scenario, issues: list[Issue]) -> None:
    spec = scenario.control.elastic
    if spec is None:
        return
    for tau in TAUS:
        if tau in spec.params:
            issues.append(
                Issue(
                    f"control.elastic.params.{tau}",
                    "is set per class (classes[].thresholds): the job takes the lowest",
                )
            )
            return
    try:
        scenario.scaling()
    except ParameterError as exc:
        issues.append(Issue(f"control.elastic.params.{exc.field}", f"{exc.value!r}: {exc.rule}"))


def _check_traces(scenario: Scenario, issues: list[Issue]) -> None:
    for i, stream in enumerate(scenario.streams):
        if isinstance(stream.arrival, TraceArrival):
            try:
                read_trace(stream.arrival.path)
            except TraceError as exc:
                where = f"line {exc.line}: " if exc.line else ""
                issues.append(
                    Issue(f"streams[{i}].arrival.path", f"{exc.path}: {where}{exc.message}")
                )


def _check_columns(scenario: Scenario, inputs: Mapping[str, str], issues: list[Issue]) -> None:
    """Track the columns each operator sees; report every read of a missing column."""
    segments = {seg.name: seg for seg in scenario.shared_segments}
    resolved: dict[str, frozenset[str]] = {}

    def columns_of(name: str, seen: tuple[str, ...] = ()) -> frozenset[str] | None:
        if inputs.get(name) == "stream":
            return ENGINE_COLUMNS | {c.name for c in scenario.stream(name).column_specs}
        if name not in segments or name in seen:
            return None  # unknown input or a cycle: reported by the reference checks
        if name not in resolved:
            seg = segments[name]
            start = columns_of(seg.source, (*seen, name))
            if start is None:
                return None
            index = next(i for i, s in enumerate(scenario.shared_segments) if s.name == name)
            resolved[name] = walk(
                f"shared_segments[{index}]", start, list(seg.operators), (*seen, name)
            )
        return resolved[name]

    def missing(path: str, needed: list[str], have: frozenset[str], what: str) -> None:
        absent = [c for c in needed if c not in have]
        if absent:
            issues.append(
                Issue(
                    path,
                    f"{what} {', '.join(map(repr, absent))} is not a column here "
                    f"(available: {', '.join(sorted(have))})",
                )
            )

    def walk(
        prefix: str, have: frozenset[str], ops: list[object], seen: tuple[str, ...] = ()
    ) -> frozenset[str]:
        for j, op in enumerate(ops):
            path = f"{prefix}.operators[{j}]"
            if isinstance(op, FilterOp):
                used = sorted({c.column for c in parse_predicate(op.predicate).comparisons})
                missing(f"{path}.predicate", used, have, "column")
            elif isinstance(op, ProjectOp):
                missing(f"{path}.columns", list(op.columns), have, "column")
                have = frozenset(op.columns) | {"arrival_s"}
            elif isinstance(op, MapOp):
                used = sorted(check_expression(op.expression).columns)
                missing(f"{path}.expression", used, have, "column")
                have = have | {op.output}
            elif isinstance(op, WindowAggregateOp):
                missing(f"{path}.group_by", list(op.group_by), have, "grouping column")
                if op.function != "count":
                    missing(f"{path}.column", [op.column], have, "column")
                have = frozenset(op.group_by) | WINDOW_COLUMNS
            elif isinstance(op, WindowJoinOp):
                missing(f"{path}.on_column", [op.on_column], have, "join column")
                right = columns_of(op.right, seen)
                if right is not None:
                    missing(
                        f"{path}.on_column", [op.on_column], right, f"join column (in {op.right!r})"
                    )
                    have = have | _join_output(f"{path}.right", op.right, have, right, issues)
        return have

    for i, cls in enumerate(scenario.classes):
        for j, query in enumerate(cls.queries):
            start = columns_of(query.source)
            if start is not None:
                walk(f"classes[{i}].queries[{j}]", start, list(query.operators))
    for name in segments:
        columns_of(name)


def columns_named(
    operators: Iterable[object], streams: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """Every column name the ``operators`` of a valid scenario read (those
    :func:`_check_columns` checks, and a SQL operator's over ``streams``: name → the
    columns SQL reads there), whichever input it comes from. For a caller that must know
    whether a column is read at all, e.g. before its type changes."""
    named: set[str] = set()
    for op in operators:
        if isinstance(op, FilterOp):
            named |= parse_predicate(op.predicate).columns
        elif isinstance(op, MapOp):
            named |= check_expression(op.expression).columns
        elif isinstance(op, ProjectOp):
            named |= set(op.columns)
        elif isinstance(op, WindowAggregateOp):
            named |= set(op.group_by) | (set() if op.function == "count" else {op.column})
        elif isinstance(op, WindowJoinOp):
            named.add(op.on_column)
        elif isinstance(op, SqlOp):
            named.update(*check_query(op.statement, dict(streams)).columns.values())
    return frozenset(named)


def _join_output(
    path: str, name: str, left: frozenset[str], right: frozenset[str], issues: list[Issue]
) -> frozenset[str]:
    """The columns a window join adds to ``left`` from ``right`` (as the engine names them);
    an issue where two output columns would share a name (case-insensitively)."""
    mine = sorted(c for c in left if data_column(c))
    theirs = sorted(c for c in right if data_column(c))
    added = join_columns(mine, theirs)
    twice = repeated_name([*mine, *added])
    if twice is not None:
        issues.append(
            Issue(
                path,
                f"joining {name!r} gives two output columns named {twice!r} (a right column "
                f"the left side has too becomes <name>{RIGHT_SUFFIX}; names compare "
                "case-insensitively, as Spark resolves them): rename a column",
            )
        )
    return frozenset(added)


def _check_sql(scenario: Scenario, issues: list[Issue]) -> None:
    """A SQL operator is its query's only operator, reads the query's source stream (and
    at most one more stream) and passes the query allow-list."""
    streams = {s.name: s.sql_columns for s in scenario.streams}
    for path, op in segment_operators(scenario):
        if isinstance(op, SqlOp):
            issues.append(
                Issue(
                    path,
                    "a sql operator reads streams by name: it belongs to a class's query, "
                    "not to a shared segment",
                )
            )
    for i, cls in enumerate(scenario.classes):
        for j, query in enumerate(cls.queries):
            for k, op in enumerate(query.operators):
                if not isinstance(op, SqlOp):
                    continue
                path = f"classes[{i}].queries[{j}].operators[{k}]"
                if len(query.operators) != 1:
                    issues.append(Issue(path, "a sql operator must be its query's only operator"))
                try:
                    checked = check_query(op.statement, streams)
                except SqlNotAllowed as exc:
                    issues.append(Issue(f"{path}.statement", f"statement {exc}"))
                    continue
                if checked.streams[0] != query.source:
                    issues.append(
                        Issue(
                            f"{path}.statement",
                            f"statement reads FROM {checked.streams[0]!r}, but the query's "
                            f"source is {query.source!r}; FROM names the source",
                        )
                    )

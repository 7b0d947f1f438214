"""Read a scenario from YAML: parse, apply overrides, validate, report every problem at once.

Errors name the path in the file and the rule, with the line when it is known::

    scenarios/demo.yaml:41: classes[2].queries[0].operators[1].window.size_s: must be > 0, got 0

Overrides (``--set`` on the command line, and the benchmarks' variants) change the parsed
document before validation, so an overridden value is checked like any other:
``control.mode=common``, ``classes[0].manager.params.headroom=0.94``. The value is read as
YAML (``0.94`` is a number, ``true`` a boolean, ``[1, 2]`` a list).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from spark_runner.scenario.columns import IDENTIFIER_PATTERN
from spark_runner.scenario.errors import Issue, ScenarioError, format_path
from spark_runner.scenario.models import (
    ARRIVAL_KINDS,
    COLUMN_PATTERN,
    NAME_PATTERN,
    OPERATOR_KINDS,
    Scenario,
)
from spark_runner.scenario.validate import check_scenario

_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|(\.)")


def load_scenario(path: str | Path, overrides: Sequence[str] = ()) -> Scenario:
    """Load and validate the scenario file ``path`` (``ScenarioError`` on any problem)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(
            [Issue("", f"cannot read the file: {exc.strerror or exc}")], str(path)
        ) from None
    return parse_scenario(
        text, base_dir=file.resolve().parent, source=str(path), overrides=overrides
    )


def parse_scenario(
    text: str,
    *,
    base_dir: Path | None = None,
    source: str = "<scenario>",
    overrides: Sequence[str] = (),
) -> Scenario:
    """Validate YAML ``text``. Trace paths resolve against ``base_dir`` (a scenario file's
    folder) when given, else inside the trace folder only (``models.TRACE_DIR``)."""
    scenario, _document = parse_scenario_document(
        text, base_dir=base_dir, source=source, overrides=overrides
    )
    return scenario


def parse_scenario_document(
    text: str,
    *,
    base_dir: Path | None = None,
    source: str = "<scenario>",
    overrides: Sequence[str] = (),
) -> tuple[Scenario, dict[str, Any]]:
    """``parse_scenario``, also returning the parsed document (with the overrides applied),
    from one bounded parse of ``text``."""
    try:
        data, node = _load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise ScenarioError([Issue("", f"not valid YAML: {problem}", line)], source) from None
    issue = _unstorable_value(data)
    if issue is not None:
        raise ScenarioError([_with_line(issue, node)], source)
    if not isinstance(data, dict):
        raise ScenarioError(
            [Issue("", "must be a YAML mapping (version: 1, name: ..., ...)")], source
        )
    if overrides:
        data = _unshare(data)  # YAML aliases share objects; an override changes one place
    for override in overrides:
        apply_override(data, override, source)
    return scenario_from_dict(data, base_dir=base_dir, source=source, node=node), data


def scenario_from_dict(
    data: Mapping[str, Any],
    *,
    base_dir: Path | None = None,
    source: str = "<scenario>",
    node: yaml.Node | None = None,
) -> Scenario:
    """Validate an already parsed document (``node`` gives line numbers when known).

    Without ``base_dir`` (a stored scenario, a job's snapshot) trace files are read from
    the trace folder only; with it (a local file) relative to that folder."""
    try:
        scenario = Scenario.model_validate(data, context={"base_dir": base_dir})
    except ValidationError as exc:
        issues = [_issue_from_error(err, node) for err in exc.errors()]
        raise ScenarioError(issues, source) from None
    issues = check_scenario(scenario)
    if issues:
        raise ScenarioError([_with_line(i, node) for i in issues], source)
    return scenario


# --- reading YAML within bounds ----------------------------------------------------------

MAX_YAML_DEPTH = 50
"""Deepest nesting of mappings and lists in a scenario (real ones stay under 10)."""
MAX_YAML_NODES = 200_000
"""Most values in a scenario, counting every use of an alias (``*name``) in full: a
document of aliases of aliases would otherwise expand to billions of values."""
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses a nesting deeper than ``MAX_YAML_DEPTH`` while it
    composes, before any Python object is built (the composer recurses per level)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise yaml.composer.ComposerError(
                    problem=f"nested deeper than {MAX_YAML_DEPTH} levels",
                    problem_mark=self.get_mark(),  # where reading stopped
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _load_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """The document of ``text`` and its node tree (for line numbers), parsed once."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        size = _expanded_size(node)
        if size > MAX_YAML_NODES:
            raise yaml.YAMLError(
                f"holds more than {MAX_YAML_NODES} values once its aliases are expanded"
            )
        return loader.construct_document(node), node
    finally:
        loader.dispose()


def _expanded_size(root: yaml.Node) -> int:
    """Values in the document with every alias expanded, computed once per node (an
    alias is the same node object as its anchor), without recursion."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done or not children:
            sizes[id(node)] = min(1 + sum(sizes[id(c)] for c in children), MAX_YAML_NODES + 1)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _unstorable_value(document: Any) -> Issue | None:
    """The first value no database or JSON document can hold: text with a NUL character,
    a non-finite number, an integer beyond 64 bits."""
    stack: list[tuple[Any, list[str | int]]] = [(document, [])]
    while stack:
        value, loc = stack.pop()
        rule = None
        if isinstance(value, str) and "\x00" in value:
            rule = "text must not contain the NUL character (\\0)"
        elif isinstance(value, float) and not math.isfinite(value):
            rule = f"must be a finite number, got {value!r}"
        elif isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            rule = f"integers must lie within 64 bits ({INT64_MIN} to {INT64_MAX})"
        if rule is not None:
            return Issue(format_path(loc), rule)
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    return Issue(format_path(loc), "keys must not contain the NUL character")
                stack.append((item, [*loc, str(key)]))
        elif isinstance(value, list):
            stack.extend((item, [*loc, i]) for i, item in enumerate(value))
    return None


# --- overrides ----------------------------------------------------------------------------


def _unshare(value: Any) -> Any:
    """A copy in which no two places share a mapping or list (unlike ``deepcopy``)."""
    if isinstance(value, dict):
        return {k: _unshare(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshare(v) for v in value]
    return value


def parse_path(path: str) -> list[str | int]:
    """``classes[0].manager.kind`` → ``["classes", 0, "manager", "kind"]``."""
    parts: list[str | int] = []
    pos = 0
    expect_name = True
    while pos < len(path):
        m = _PATH_PART.match(path, pos)
        if m is None:
            raise ValueError(f"cannot read the path at {path[pos:]!r}")
        if m.group(1) is not None:
            if not expect_name:
                raise ValueError(f"expected '.' or '[' before {m.group(1)!r}")
            parts.append(m.group(1))
            expect_name = False
        elif m.group(2) is not None:
            if expect_name and parts:
                raise ValueError("an index must follow a name")
            parts.append(int(m.group(2)))
            expect_name = False
        else:
            if expect_name:
                raise ValueError("unexpected '.'")
            expect_name = True
        pos = m.end()
    if not parts or expect_name:
        raise ValueError("the path is empty or ends with '.'")
    return parts


def apply_override(data: dict[str, Any], override: str, source: str = "") -> None:
    """Apply ``path=value`` to the parsed document ``data`` in place."""
    if "=" not in override:
        raise ScenarioError(
            [Issue(override, "an override is path=value, e.g. control.mode=common")], source
        )
    path_text, value_text = override.split("=", 1)
    path_text = path_text.strip()
    try:
        parts = parse_path(path_text)
        value = yaml.safe_load(value_text) if value_text.strip() else None
    except (ValueError, yaml.YAMLError) as exc:
        raise ScenarioError([Issue(path_text, f"cannot override: {exc}")], source) from None
    target: Any = data
    for depth, part in enumerate(parts[:-1]):
        nxt = parts[depth + 1]
        where = format_path(parts[: depth + 1])
        if isinstance(part, int):
            if not isinstance(target, list) or part >= len(target):
                raise ScenarioError([Issue(where, "cannot override: no such list item")], source)
            target = target[part]
        else:
            if not isinstance(target, dict):
                raise ScenarioError([Issue(where, "cannot override: not inside a mapping")], source)
            if part not in target or target[part] is None:
                if isinstance(nxt, int):
                    raise ScenarioError([Issue(where, "cannot override: no such list")], source)
                target[part] = {}
            target = target[part]
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(target, list) or last >= len(target):
            raise ScenarioError([Issue(path_text, "cannot override: no such list item")], source)
        target[last] = value
    else:
        if not isinstance(target, dict):
            raise ScenarioError([Issue(path_text, "cannot override: not inside a mapping")], source)
        target[last] = value


# --- errors -------------------------------------------------------------------------------


def _strip_tags(loc: Sequence[str | int]) -> list[str | int]:
    """Drop the discriminator tags pydantic inserts into union locations."""
    out: list[str | int] = []
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i > 0 else None
        prev2 = loc[i - 2] if i > 1 else None
        if part in ARRIVAL_KINDS and prev == "arrival":
            continue
        if part in OPERATOR_KINDS and isinstance(prev, int) and prev2 == "operators":
            continue
        out.append(part)
    return out


PATTERN_RULES = {
    NAME_PATTERN: "a name (letters, digits, _ . -; not starting with . or -)",
    COLUMN_PATTERN: "a column name (letters, digits, _ . -; starting with a letter or _)",
    IDENTIFIER_PATTERN: "an SQL identifier (letters, digits and _; starting with a letter or _)",
}
"""What each name rule of the format asks, for its error message."""

_KIND_RULES = {
    "missing": "is required",
    "extra_forbidden": "is not a field here (check the spelling; see docs/scenario-format.md)",
    "string_too_short": "must not be empty",
}
"""The rule of a pydantic error its kind alone says."""

_TYPE_RULES = {
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "finite_number": "must be a finite number",
    "model_type": "must be a mapping (key: value)",
    "dict_type": "must be a mapping (key: value)",
    "model_attributes_type": "must be a mapping (key: value)",
    "list_type": "must be a list",
    "string_type": "must be a string",
}
"""The rule of a pydantic error for a value of the wrong type (the value follows it)."""


_CONTEXT_RULES: Mapping[str, str] = {
    "greater_than": "must be > {gt}{shown}",
    "greater_than_equal": "must be >= {ge}{shown}",
    "less_than": "must be < {lt}{shown}",
    "less_than_equal": "must be <= {le}{shown}",
    "string_too_long": "must be at most {max_length} characters",
    "literal_error": "must be one of {expected}{shown}",
}
"""The rule of a pydantic error whose context names the bound (``shown``: the value)."""


def _message(err: Mapping[str, Any]) -> tuple[str, str]:
    """(path suffix, rule) for one pydantic error."""
    kind = err.get("type", "")
    ctx = err.get("ctx") or {}
    got = err.get("input")
    shown = "" if isinstance(got, dict | list) else f", got {got!r}"
    if kind in _CONTEXT_RULES:
        return "", _CONTEXT_RULES[kind].format(shown=shown, **{k: _num(v) for k, v in ctx.items()})
    if kind in _KIND_RULES:
        return "", _KIND_RULES[kind]
    if kind in _TYPE_RULES:
        return "", f"{_TYPE_RULES[kind]}{shown}"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return "", f"needs at least {n} item{'s' if n != 1 else ''}"
    if kind == "string_pattern_mismatch":
        return "", f"must be {PATTERN_RULES.get(ctx.get('pattern', ''), 'a name')}{shown}"
    if kind == "union_tag_invalid":
        return ".kind", f"{ctx.get('tag')!r} is not one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return ".kind", f"is required (one of {_tags_for(err)})"
    if kind == "value_error":
        return "", str(err.get("msg", "")).removeprefix("Value error, ")
    return "", str(err.get("msg", kind))


def _num(value: object) -> str:
    """A bound as the rule shows it: a whole float without its ``.0``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _tags_for(err: Mapping[str, Any]) -> str:
    loc = err.get("loc", ())
    return ", ".join(ARRIVAL_KINDS if loc and loc[-1] == "arrival" else OPERATOR_KINDS)


def _issue_from_error(err: Mapping[str, Any], node: yaml.Node | None) -> Issue:
    loc = _strip_tags(list(err.get("loc", ())))
    suffix, message = _message(err)
    path = format_path(loc) + suffix
    return Issue(path, message, _line_of(node, loc))


def _with_line(issue: Issue, node: yaml.Node | None) -> Issue:
    if issue.line is not None or node is None:
        return issue
    try:
        loc = parse_path(issue.path) if issue.path else []
    except ValueError:
        return issue
    return Issue(issue.path, issue.message, _line_of(node, loc))


def _line_of(node: yaml.Node | None, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node along ``loc`` (the parent of a missing key)."""
    if node is None:
        return None
    current = node
    for part in loc:
        child: yaml.Node | None = None
        if isinstance(current, yaml.MappingNode) and isinstance(part, str):
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode) and key.value == part:
                    child = value
                    break
        elif (
            isinstance(current, yaml.SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(current.value)
        ):
            child = current.value[part]
        if child is None:
            break
        current = child
    return int(current.start_mark.line) + 1

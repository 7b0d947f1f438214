"""The error a bad scenario raises: every problem with its YAML path, line and rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Issue:
    """One broken rule.

    Attributes:
        path: where in the file, e.g. ``classes[2].queries[0].operators[1].window.size_s``
            (empty for the document as a whole).
        message: the rule, as a sentence a user can act on (``must be > 0``).
        line: 1-based line of the offending node in the YAML file, when known.
    """

    path: str
    message: str
    line: int | None = None

    def render(self, source: str = "") -> str:
        where = f"{source}:{self.line}: " if source and self.line else ""
        return f"{where}{self.path or '<document>'}: {self.message}"


class ScenarioError(ValueError):
    """A scenario file (or text) broke one or more rules of the format."""

    def __init__(self, issues: Sequence[Issue], source: str = "") -> None:
        if not issues:
            raise ValueError("ScenarioError needs at least one issue")
        self.issues = tuple(issues)
        self.source = source
        lines = [issue.render(source) for issue in self.issues]
        head = f"invalid scenario{f' {source}' if source else ''}"
        super().__init__(head + ":\n  " + "\n  ".join(lines))

    def __reduce__(self) -> tuple[type[ScenarioError], tuple[tuple[Issue, ...], str]]:
        # Pickled whole (a preview's replay raises it in a worker process): the default
        # would rebuild it from the message alone, which ``__init__`` does not take.
        return type(self), (self.issues, self.source)


def format_path(loc: Sequence[str | int]) -> str:
    """``("classes", 2, "queries", 0, "name")`` → ``classes[2].queries[0].name``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out

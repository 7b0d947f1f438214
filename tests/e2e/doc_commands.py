"""The shell commands a Markdown document shows in its fenced ``bash`` blocks.

A command is one logical line: backslash continuations are joined, a trailing
``# comment`` (outside quotes) is stripped, a whole-line comment is skipped, and a
trailing ``&`` (run in the background) is taken off and recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^\s*```(\S*)")


@dataclass(frozen=True)
class DocCommand:
    """One documented command: where it is written and what it says."""

    path: str
    """The document, relative to the repository."""
    line: int
    """Its first line in the document (1-based)."""
    text: str
    """The command, continuations joined, comment and trailing ``&`` removed."""
    background: bool
    """Written with a trailing ``&``: it runs while the commands after it run."""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def strip_comment(line: str) -> str:
    """``line`` without a ``#`` comment: a ``#`` that starts a word outside quotes."""
    quote = ""
    for index, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].rstrip()
    return line.rstrip()


def bash_blocks(markdown: str) -> list[tuple[int, list[str]]]:
    """Every fenced ``bash`` block: the line number of its first line and its lines
    (the blocks of other languages are skipped)."""
    blocks: list[tuple[int, list[str]]] = []
    language: str | None = None  # of the open block; None: outside every block
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence and language is None:
            language = fence.group(1)
            if language == "bash":
                blocks.append((number + 1, []))
        elif fence:
            language = None
        elif language == "bash":
            blocks[-1][1].append(line)
    return blocks


def commands_in(root: Path, relative: str) -> list[DocCommand]:
    """The commands of every ``bash`` block of ``root / relative``, in document order."""
    commands: list[DocCommand] = []
    for start, lines in bash_blocks((root / relative).read_text()):
        pending, first = "", 0
        for offset, raw in enumerate(lines):
            if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
                continue
            if not pending:
                first = start + offset
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1].strip() + " "
                continue
            text = strip_comment((pending + raw.strip()).strip())
            pending = ""
            background = text.endswith("&") and not text.endswith("&&")
            text = text.removesuffix("&").rstrip() if background else text
            commands.append(DocCommand(relative, first, text, background))
    return commands

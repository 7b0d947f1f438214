"""Processes as the kernel sees them: existence by signal 0, state and family from /proc."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
DEAD_STATES = ("Z", "X")
"""Zombie and dead: the process has ended (a zombie waits to be reaped)."""


def pid_exists(pid: int) -> bool:
    """True while ``pid`` names a process, ours or another user's (a zombie included:
    callers that must tell a zombie apart use :func:`is_running`)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours to signal
    return True


@dataclass(frozen=True, slots=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` used here."""

    pid: int
    state: str
    ppid: int
    pgrp: int

    @property
    def running(self) -> bool:
        """Not ended (neither a zombie nor dead)."""
        return self.state not in DEAD_STATES


def proc_stat(pid: int) -> ProcStat | None:
    """``pid``'s state, parent and group, or None when it is gone (or /proc is absent)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # after the parenthesised command (which may hold spaces and parentheses):
    # state ppid pgrp ...
    fields = text[text.rindex(")") + 1 :].split()
    return ProcStat(pid, fields[0], int(fields[1]), int(fields[2]))


def all_stats() -> list[ProcStat]:
    """Every process's stat (an empty list without /proc)."""
    stats = (proc_stat(int(entry.name)) for entry in PROC.glob("[0-9]*"))
    return [s for s in stats if s is not None]


def is_running(pid: int) -> bool:
    """True while ``pid`` runs: it exists and has not ended (a zombie has)."""
    stat = proc_stat(pid)
    return stat.running if stat is not None else pid_exists(pid) and not PROC.is_dir()


def running_descendants(pid: int) -> set[int]:
    """Every running process below ``pid`` (children, their children, …)."""
    children: dict[int, list[int]] = {}
    for stat in all_stats():
        if stat.running:
            children.setdefault(stat.ppid, []).append(stat.pid)
    found: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found

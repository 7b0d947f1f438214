"""The last line of a test's cleanup: no process it started outlives it.

A stack's jobs run in sessions of their own (they outlive the API and the worker by
design), and a test's teardown stops them through the API; when the API does not answer
or a job's pid was never stored, a job went on running for the rest of the suite (seen:
an hour, a quarter of a core). Every process a stack starts names its data directory on
its command line (the job's config, the JVM's cached jar), so a sweep by that name finds
what the API could not."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

from backend.processes import PROC


def command_lines() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, arguments) of every other process running now."""
    for entry in PROC.glob("[0-9]*"):
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        yield pid, cmdline.split(b"\0")


def kill_processes_naming(path: Path) -> list[int]:
    """SIGKILL every process whose command line names ``path`` (or a path under it);
    returns their pids."""
    marker = str(path.resolve()).encode()
    killed = []
    for pid, args in command_lines():
        if any(arg == marker or marker + b"/" in arg for arg in args):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
    return killed

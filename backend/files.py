"""Owner-only files and directories: the data dir holds the database, tokens and logs.

One rule, written once: everything the service and its jobs create under the data dir is
readable by their user only. Processes the service starts (API, worker, dashboard, jobs)
run with :data:`PRIVATE_UMASK`, so whatever a library creates (SQLite's WAL files,
kombu's message files) is owner-only too, and a job's Spark writes its checkpoint and file
sinks through Hadoop with the same umask (Hadoop sets modes from its own, not the
process's: ``spark_runner.job.sparkconf``); what the service creates itself it creates with
explicit modes, whatever the umask of the process that runs it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from spark_runner.contract.snapshot import PRIVATE_UMASK

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "PRIVATE_UMASK",
    "open_private_append",
    "private_dir",
    "touch_private",
    "use_private_umask",
]

DIR_MODE = 0o700
FILE_MODE = 0o600


def use_private_umask() -> None:
    """Set :data:`PRIVATE_UMASK` for this process (and what it starts from now on)."""
    os.umask(PRIVATE_UMASK)


def private_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents 0700; ``path`` itself, if it existed, is
    narrowed to 0700 (existing parents are left as they are: they may be shared)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=DIR_MODE, exist_ok=True)
        directory.chmod(DIR_MODE)  # mkdir's mode is narrowed by the umask, never widened
    if stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        path.chmod(DIR_MODE)
    return path


def open_private_append(path: Path) -> int:
    """A descriptor appending to ``path``, created 0600 (an existing file is narrowed)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def touch_private(path: Path) -> Path:
    """Create ``path`` 0600 if missing (an existing one is narrowed) before writing to it."""
    os.close(open_private_append(path))
    return path

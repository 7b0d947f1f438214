"""At most one Celery beat, and never one that outlives its worker.

Beat schedules the job watchdog (``jobs.sweep``) every ``watch_interval_s``. Two beats
send it twice as often, and a beat left behind by a worker killed with SIGKILL keeps
filling the broker's queue while nothing consumes it (seen: the sweep ran twice a second
for 7 minutes). Two rules, applied when a beat starts (``backend.worker`` connects
:func:`on_beat_start` and :func:`die_with_parent` to Celery's signals):

- every beat (``beat_init``) holds an exclusive ``flock`` on ``<data_dir>/beat.lock`` for
  as long as it runs (the kernel releases it when the process ends, however it ends); a
  second beat waits up to ``beat_lock_wait_s`` for it (a predecessor may still be shutting
  down), then refuses to run;
- a beat embedded in a worker (``celery worker --beat``, a child process;
  ``beat_embedded_init``, sent after ``beat_init``) asks the kernel to send it SIGTERM
  when the worker dies (Linux ``PR_SET_PDEATHSIG``).

The lock is per data dir, which is per host: several hosts sharing one broker must still
run ``--beat`` on one worker only.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from backend.files import FILE_MODE, private_dir
from backend.processes import pid_exists

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
LOCK_POLL_S = 0.2


class BeatLockHeld(RuntimeError):
    """Another beat holds the lock."""


_held: list[int] = []  # the lock's descriptor, kept open for the life of the beat process


def acquire_beat_lock(
    path: Path,
    wait_s: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Take the exclusive lock on ``path`` (waiting up to ``wait_s`` seconds); its descriptor.

    The holder's pid is written into the file for the error message of the next one.
    Raises :class:`BeatLockHeld` when the lock is still held after ``wait_s``.
    """
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    deadline = clock() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if clock() >= deadline:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise BeatLockHeld(
                    f"another Celery beat (pid {holder}) holds {path}: this one does not run "
                    "(only one beat may schedule the watchdog)"
                ) from None
            sleep(LOCK_POLL_S)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def die_with_parent() -> None:
    """Have the kernel SIGTERM this process when its parent dies (Linux; elsewhere a no-op).

    If the parent is already gone (reparented to init or a subreaper), exit now.
    """
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        log.warning("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
        return
    if parent == 1 or not pid_exists(parent):
        raise SystemExit("beat: the worker that started it is gone")


def on_beat_start(lock_path: Path, wait_s: float) -> None:
    """What every beat does first (Celery's ``beat_init``, sent in embedded beats too):
    take the lock, or exit. Taking it again in the same process is a no-op."""
    if _held:
        return
    try:
        _held.append(acquire_beat_lock(lock_path, wait_s))
    except BeatLockHeld as refused:
        log.error("%s", refused)
        raise SystemExit(str(refused)) from None
    log.info("beat: holding %s (pid %d)", lock_path, os.getpid())


def release_beat_lock() -> None:
    """Give the lock back (for tests; a beat keeps it until it exits)."""
    while _held:
        with contextlib.suppress(OSError):
            os.close(_held.pop())

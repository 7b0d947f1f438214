"""Whether a process exists, by signal 0 (no signal is sent)."""

from __future__ import annotations

import os


def pid_exists(pid: int) -> bool:
    """True while ``pid`` names a process, ours or another user's (a zombie included:
    callers that must tell a zombie apart read ``/proc``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours to signal
    return True

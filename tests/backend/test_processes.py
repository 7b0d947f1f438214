"""/proc readings: a process's state and family, a zombie told from a running process."""

from __future__ import annotations

import os
import signal
import subprocess

from backend.processes import is_running, proc_stat, running_descendants
from tests.waiting import wait_until


def test_descendants_state_and_group_of_a_real_process_tree() -> None:
    shell = subprocess.Popen(
        ["sh", "-c", "sleep 60 & wait"], start_new_session=True, stdin=subprocess.DEVNULL
    )
    try:
        assert wait_until(lambda: len(running_descendants(shell.pid)) == 1, 10.0)
        (child,) = running_descendants(shell.pid)
        stat = proc_stat(child)
        assert stat is not None and stat.ppid == shell.pid and stat.pgrp == shell.pid
        assert is_running(shell.pid) and is_running(child)
        os.killpg(shell.pid, signal.SIGKILL)
        # not reaped yet: the shell is a zombie, which has ended
        assert wait_until(lambda: not is_running(shell.pid), 10.0)
        assert proc_stat(shell.pid) is not None  # still listed until it is reaped
    finally:
        shell.wait(10)
    assert proc_stat(shell.pid) is None and not is_running(shell.pid)
    assert running_descendants(shell.pid) == set()

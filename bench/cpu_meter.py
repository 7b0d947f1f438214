"""The CPU a process and its descendants use, sampled while it runs (Linux ``/proc``).

A Spark run's CPU is spread over its driver, the JVM it starts and the Python workers the
JVM forks; :class:`TreeCpu` adds up the user and system time of every live process under
one pid, twice a second, so a benchmark can ask how many cores the run used over a window
of its own clock (:meth:`TreeCpu.cores`). A descendant that exits between two samples
takes its last stretch with it (Spark keeps its Python workers for the run).
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from pathlib import Path

SAMPLE_S = 0.5
TICKS_S = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float] | None:
    """A process's parent pid and its user + system CPU seconds; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after the command, which may hold spaces
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS_S


def tree_cpu_s(root: int) -> float:
    """The CPU seconds ``root`` and its live descendants have used."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            parents[int(entry)], cpu[int(entry)] = stat
    total, ours = 0.0, {root}
    for pid in sorted(parents):  # a child's pid may be lower than its parent's (wrap)
        if _descends(pid, root, parents, ours):
            total += cpu[pid]
    return total


def _descends(pid: int, root: int, parents: dict[int, int], ours: set[int]) -> bool:
    chain = []
    while pid not in ours and pid in parents and pid > 1:
        chain.append(pid)
        pid = parents[pid]
    if pid in ours:
        ours.update(chain)
        return True
    return False


class TreeCpu(threading.Thread):
    """Samples ``tree_cpu_s(pid)`` against the wall clock (``time.time()``) until the
    process ends or :meth:`stop` is called."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.times: list[float] = []
        self.cpu_s: list[float] = []
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set() and Path(f"/proc/{self.pid}").exists():
            self.times.append(time.time())
            self.cpu_s.append(tree_cpu_s(self.pid))
            self._done.wait(SAMPLE_S)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def cores(self, start: float, end: float) -> float | None:
        """The cores the tree used on average from ``start`` to ``end`` (epoch seconds),
        read between the samples nearest inside the window; None without two there."""
        i, j = bisect.bisect_left(self.times, start), bisect.bisect_right(self.times, end) - 1
        if j <= i or self.times[j] - self.times[i] < 2 * SAMPLE_S:
            return None
        return (self.cpu_s[j] - self.cpu_s[i]) / (self.times[j] - self.times[i])

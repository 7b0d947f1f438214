"""Starting, signalling and inspecting job processes (the OS side, no database).

Every job runs as its own process-group leader (``start_new_session``), so the Spark
JVM it spawns belongs to the same group and can be cleaned up with the group even when
the Python driver dies first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from dataclasses import dataclass
from pathlib import Path

EXIT_CODE_FILE = "exit_code"


@dataclass(frozen=True)
class ProcessState:
    alive: bool
    exit_code: int | None = None


def start_job_process(python: str, config_path: Path, log_path: Path) -> int:
    """Start ``python -m spark_runner.job --config config_path`` detached; return its pid."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [python, "-m", "spark_runner.job", "--config", str(config_path)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(config_path.parent),
            env=_job_environment(python),
        )
    return process.pid


def _job_environment(python: str) -> dict[str, str]:
    # The job reads no configuration from the environment; this only makes Spark's
    # Python workers use the same interpreter as the driver.
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = python
    env["PYSPARK_DRIVER_PYTHON"] = python
    return env


def request_stop(pid: int) -> None:
    """Ask the driver to stop gracefully (it finishes its batch and flushes metrics)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


def kill_group(pid: int) -> None:
    """Kill whatever is left of the job's process group (e.g. an orphaned JVM)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def group_alive(pid: int) -> bool:
    """Whether any process of the group led by ``pid`` still runs (zombies excluded)."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for entry in proc.iterdir():
        if entry.name.isdigit() and _pgid_and_state(entry) == (pid, True):
            return True
    return False


def _pgid_and_state(entry: Path) -> tuple[int, bool] | None:
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    # Fields after the parenthesised command: state ppid pgrp ...
    fields = stat.rsplit(")", 1)[-1].split()
    return int(fields[2]), fields[0] not in ("Z", "X")


def process_state(pid: int, job_dir: Path) -> ProcessState:
    """Liveness of the driver, and its exit code once it has ended (when knowable)."""
    exit_code: int | None = None
    try:
        reaped_pid, status = os.waitpid(pid, os.WNOHANG)
        if reaped_pid == pid:
            exit_code = os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        pass  # Not our child (another worker process started it): use /proc.
    if exit_code is None and _driver_alive(pid):
        return ProcessState(alive=True)
    if exit_code is None:
        exit_code = _recorded_exit_code(job_dir)
    return ProcessState(alive=False, exit_code=exit_code)


def _driver_alive(pid: int) -> bool:
    stat_path = Path(f"/proc/{pid}")
    if stat_path.is_dir():
        state = _pgid_and_state(stat_path)
        return state is not None and state[1]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _recorded_exit_code(job_dir: Path) -> int | None:
    """The code the job wrote on its way out; absent when it was killed outright."""
    try:
        return int((job_dir / EXIT_CODE_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def log_tail(log_path: Path | None, lines: int = 50) -> list[str]:
    if log_path is None or not log_path.exists():
        return []
    with log_path.open("r", encoding="utf-8", errors="replace") as handle:
        return [line.rstrip("\n") for line in deque(handle, maxlen=lines)]

"""Starting, signalling and inspecting job processes (the OS side, no database).

Every job runs as its own process-group leader (``start_new_session``), so the Spark
JVM it spawns belongs to the same group and can be cleaned up with the group even when
the Python driver dies first.

Two launch modes (``Settings.launch_mode``), one command builder (:func:`job_command`):

- ``python``: the leader is the Python driver, ``python -m spark_runner.job``, whose
  session launches its JVM.
- ``spark-submit``: the leader is spark-submit's JVM, started with the job's Spark
  properties (``spark_runner.job.sparkconf``), and the Python driver is its child
  (``spark_runner/job/submit_entry.py``), which records its pid in ``driver.pid``. The JVM
  exits with the driver's exit code, so the leader's code is the job's in both modes;
  a stop request goes to the driver, never to the JVM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from backend.settings import Settings
from spark_runner.job.config import EXIT_CODE_FILE, JobSnapshot
from spark_runner.job.sparkconf import job_burn_jar, package_root, spark_properties
from spark_runner.job.submit_entry import DRIVER_PID_FILE, ENTRY_FILE

# Given by --master and --name rather than --conf.
_SUBMIT_FLAGS = {"spark.master": "--master", "spark.app.name": "--name"}
# Inherited from a worker that is itself a PySpark process, these would attach the job to
# that process's JVM or change how its own is launched.
_INHERITED_SPARK_ENV = ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYSPARK_SUBMIT_ARGS")


@dataclass(frozen=True)
class ProcessState:
    alive: bool
    exit_code: int | None = None


@dataclass(frozen=True)
class JobCommand:
    """How to start one job: its command line, where, and variables set on top of ours."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)


def job_command(
    settings: Settings, snapshot: JobSnapshot, config_path: Path, *, jar: Path | None = None
) -> JobCommand:
    """The command that runs ``snapshot``'s job from ``config_path`` (pure).

    ``jar``: the exact-burn UDF's jar (``job_burn_jar()``); spark-submit puts it on the
    driver's class path, which must be set before the JVM starts. Python workers (and the
    driver, in spark-submit mode) run ``settings.job_python``.
    """
    python = settings.job_python
    env = {"PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python}
    config = str(config_path)
    if settings.launch_mode == "python":
        argv: tuple[str, ...] = (python, "-m", "spark_runner.job", "--config", config)
        return JobCommand(argv=argv, cwd=config_path.parent, env=env)
    properties = spark_properties(snapshot, python=python, jar=jar)
    args = [settings.spark_submit, "--deploy-mode", "client"]
    for key, flag in _SUBMIT_FLAGS.items():
        args += [flag, properties.pop(key)]
    for key, value in sorted(properties.items()):
        args += ["--conf", f"{key}={value}"]
    args += [str(ENTRY_FILE), "--config", config]
    # The JVM's own Python processes (the data source's planner on the driver) and the
    # driver itself must import spark_runner, installed or not.
    env["PYTHONPATH"] = str(package_root())
    return JobCommand(argv=tuple(args), cwd=config_path.parent, env=env)


def launch_command(settings: Settings, snapshot: JobSnapshot, config_path: Path) -> JobCommand:
    """:func:`job_command` with the burn jar built (once, cached) when spark-submit needs it."""
    jar = job_burn_jar() if settings.launch_mode == "spark-submit" else None
    return job_command(settings, snapshot, config_path, jar=jar)


def start_job_process(command: JobCommand, log_path: Path) -> int:
    """Start ``command`` detached, in its own session, output to ``log_path``; its pid."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED_SPARK_ENV}
    env.update(command.env)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            list(command.argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(command.cwd),
            env=env,
        )
    return process.pid


def request_stop(pid: int, job_dir: Path) -> None:
    """Ask the driver to stop gracefully (it finishes its batch and flushes metrics).

    ``pid`` leads the job's group; under spark-submit it is the JVM, and the driver is the
    process named in ``driver.pid``. Before the driver has started, the JVM gets the
    signal (it exits; nothing ran yet); after the driver has ended, the JVM is exiting by
    itself and gets nothing.
    """
    target: int | None = pid
    recorded = _recorded_driver(job_dir)
    if recorded is not None:
        target = recorded if _in_group(recorded, pid) else None
    if target is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGTERM)


def _recorded_driver(job_dir: Path) -> int | None:
    try:
        return int((job_dir / DRIVER_PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None


def _in_group(pid: int, group: int) -> bool:
    """Whether ``pid`` is a live process of group ``group`` (a recycled pid is not)."""
    try:
        return pid != group and os.getpgid(pid) == group and _driver_alive(pid)
    except (ProcessLookupError, PermissionError):
        return False


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
    """Liveness of the group's leader (the driver, or spark-submit's JVM, which lives as
    long as the driver and exits with its code), and its exit code once it has ended
    (when knowable)."""
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


def forget_previous_run(job_dir: Path) -> None:
    """Remove what an earlier process in ``job_dir`` recorded (exit code, driver pid)."""
    for name in (EXIT_CODE_FILE, DRIVER_PID_FILE):
        (job_dir / name).unlink(missing_ok=True)


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

"""Starting, signalling and inspecting job processes (the OS side, no database).

Every job runs as its own process-group leader (``start_new_session``), so the Spark
JVM it spawns belongs to the same group and can be cleaned up with the group even when
the Python driver dies first.

Two launch modes (``Settings.launch_mode``, built by ``spark_runner.job.launch``):

- ``python``: the leader is the Python driver, whose session launches its JVM.
- ``spark-submit``: the leader is spark-submit's JVM and the Python driver is its child,
  which records its pid (``driver_pid_file``). The JVM exits with the driver's exit
  code, so the leader's code is the job's in both modes; a stop request goes to the
  driver, never to the JVM.
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

from backend.files import PRIVATE_UMASK, open_private_append, private_dir, touch_private
from backend.jobs.environment import job_environment
from backend.processes import PROC, all_stats, is_running
from backend.settings import Settings
from spark_runner.contract.snapshot import EXIT_CODE_FILE, BurnJar, JobSnapshot
from spark_runner.job.launch import build_burn_jar, driver_pid_file, job_argv, job_variables


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

    ``jar``: the exact-burn UDF's jar (verified by :func:`prepare_launch`); spark-submit
    puts it on the driver's class path, which must be set before the JVM starts. Python
    workers (and the driver, in spark-submit mode) run ``settings.job_python``.
    """
    argv = job_argv(
        settings.launch_mode,
        snapshot,
        config_path,
        python=settings.job_python,
        spark_submit=settings.spark_submit,
        jar=jar,
    )
    return JobCommand(argv=argv, cwd=config_path.parent, env=job_variables(settings.job_python))


def prepare_launch(settings: Settings, snapshot: JobSnapshot, config_path: Path) -> JobCommand:
    """Write ``snapshot`` to ``config_path`` (0600) and return the command that runs it.

    The burn UDF's jar is built once into the data dir's cache (``Settings.cache_dir``,
    owner-only) and verified against the hash recorded when it was built; the snapshot
    carries its path and hash, and the job loads it only if the hash still matches
    (``spark_runner.job.sparkconf.verified_burn_jar``).
    """
    jar = service_burn_jar(settings)
    snapshot = snapshot.model_copy(update={"burn_jar": jar})
    snapshot.dump(touch_private(config_path))  # it holds the job's ingest token
    path = Path(jar.path) if jar is not None else None
    return job_command(settings, snapshot, config_path, jar=path)


def service_burn_jar(settings: Settings) -> BurnJar | None:
    """The burn UDF's jar in the service's cache (built or rebuilt if needed); None without
    a JDK or pyspark."""
    return build_burn_jar(settings.cache_dir)


def start_job_process(command: JobCommand, log_path: Path) -> int:
    """Start ``command`` detached, in its own session, output to ``log_path``; its pid.

    The process gets the allow-listed environment (``backend.jobs.environment``), never
    the service's own, and the owner-only umask; its log is created 0600.
    """
    private_dir(log_path.parent)
    log = open_private_append(log_path)
    try:
        process = subprocess.Popen(
            list(command.argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(command.cwd),
            env=job_environment(os.environ, command.env),
            umask=PRIVATE_UMASK,
        )
    finally:
        os.close(log)
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
        return int(driver_pid_file(job_dir).read_text().strip())
    except (OSError, ValueError):
        return None


def _in_group(pid: int, group: int) -> bool:
    """Whether ``pid`` is a live process of group ``group`` (a recycled pid is not)."""
    try:
        return pid != group and os.getpgid(pid) == group and is_running(pid)
    except (ProcessLookupError, PermissionError):
        return False


def kill_group(pid: int) -> None:
    """Kill whatever is left of the job's process group (e.g. an orphaned JVM)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def group_alive(pid: int) -> bool:
    """Whether any process of the group led by ``pid`` still runs (zombies excluded)."""
    if not PROC.is_dir():
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    return any(s.pgrp == pid and s.running for s in all_stats())


def process_state(pid: int, job_dir: Path) -> ProcessState:
    """Liveness of the group's leader (the driver, or spark-submit's JVM, which lives as
    long as the driver and exits with its code), and its exit code once it has ended
    (when knowable)."""
    exit_code = _reap(pid)
    if exit_code is None and is_running(pid):
        return ProcessState(alive=True)
    if exit_code is None:
        # it may have ended between the two reads (a zombie by now): reap it again
        exit_code = _reap(pid)
    if exit_code is None:
        exit_code = _recorded_exit_code(job_dir)
    return ProcessState(alive=False, exit_code=exit_code)


def _reap(pid: int) -> int | None:
    """The exit code of our child ``pid`` if it has ended (reaping it), else None."""
    try:
        reaped_pid, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None  # Not our child (another worker process started it): use /proc.
    return os.waitstatus_to_exitcode(status) if reaped_pid == pid else None


def make_job_dir(job_dir: Path) -> None:
    """Create the job's directory (config with its token, log, checkpoints) owner-only."""
    private_dir(job_dir)


def forget_previous_run(job_dir: Path) -> None:
    """Remove what an earlier process in ``job_dir`` recorded (exit code, driver pid)."""
    for path in (job_dir / EXIT_CODE_FILE, driver_pid_file(job_dir)):
        path.unlink(missing_ok=True)


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

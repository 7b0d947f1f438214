"""The OS side of job control, on real processes (no Spark: a Python child stands in)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from backend.jobs import launcher


def _wait(predicate, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _fake_python(tmp_path: Path, body: str) -> str:
    """An interpreter wrapper whose ``-m spark_runner.job`` runs ``body`` instead."""
    script = tmp_path / "fake_job.py"
    script.write_text(body)
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def test_start_stop_and_exit_code(tmp_path: Path) -> None:
    python = _fake_python(
        tmp_path,
        "import signal, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n",
    )
    config = tmp_path / "config.json"
    config.write_text("{}")
    log = tmp_path / "job.log"
    pid = launcher.start_job_process(python, config, log)
    assert _wait(lambda: "started" in log.read_text())
    assert launcher.process_state(pid, tmp_path).alive
    assert launcher.group_alive(pid)

    launcher.request_stop(pid)
    assert _wait(lambda: not launcher.process_state(pid, tmp_path).alive)
    # The driver left a grandchild behind (as a JVM can be); the group kill removes it.
    assert launcher.group_alive(pid)
    launcher.kill_group(pid)
    assert _wait(lambda: not launcher.group_alive(pid))
    assert launcher.log_tail(log, 5) == ["started"]


def test_crash_exit_code_is_reaped(tmp_path: Path) -> None:
    python = _fake_python(tmp_path, "import sys; print('boom'); sys.exit(4)\n")
    (tmp_path / "config.json").write_text("{}")
    pid = launcher.start_job_process(python, tmp_path / "config.json", tmp_path / "job.log")
    states: list[launcher.ProcessState] = []
    assert _wait(
        lambda: not states.append(launcher.process_state(pid, tmp_path)) and not states[-1].alive
    )
    assert states[-1].exit_code == 4


def test_recorded_exit_code_when_not_our_child(tmp_path: Path) -> None:
    (tmp_path / launcher.EXIT_CODE_FILE).write_text("3\n")
    # A pid that does not exist and is not our child: the recorded code is used.
    state = launcher.process_state(2**22 + 12345, tmp_path)
    assert state == launcher.ProcessState(alive=False, exit_code=3)

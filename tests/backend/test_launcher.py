"""The OS side of job control, on real processes (no Spark: a Python child stands in),
and the command lines of both launch modes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.jobs import launcher
from backend.settings import Settings
from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import EXIT_CODE_FILE, ClassSnapshot, JobSnapshot
from spark_runner.job.sparkconf import package_root, spark_properties
from spark_runner.job.submit_entry import DRIVER_PID_FILE, ENTRY_FILE
from tests.stand_in import stand_in_python
from tests.waiting import wait_until


def _snapshot(tmp_path: Path, master: str = "local[2]") -> JobSnapshot:
    return JobSnapshot(
        job_id=42,
        api_url="",
        spark_master=master,
        checkpoint_dir=str(tmp_path / "checkpoint"),
        classes=(ClassSnapshot(name="gold"),),
        control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)}),
    )


def _start(python: Path, config: Path, log: Path) -> int:
    settings = Settings(job_python=str(python), launch_mode="python")
    command = launcher.job_command(settings, _snapshot(config.parent), config)
    return launcher.start_job_process(command, log)


def exited(pid: int, job_dir: Path, seen: list[launcher.ProcessState]) -> bool:
    """Whether the job's leader has ended; every state read is kept (the one that saw the
    exit holds the code: the reaping is done once)."""
    seen.append(launcher.process_state(pid, job_dir))
    return not seen[-1].alive


def test_start_stop_and_exit_code(tmp_path: Path) -> None:
    python = stand_in_python(
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
    pid = _start(python, config, log)
    assert wait_until(lambda: "started" in log.read_text(), 10, 0.05)
    assert launcher.process_state(pid, tmp_path).alive
    assert launcher.group_alive(pid)

    launcher.request_stop(pid, tmp_path)
    assert wait_until(lambda: not launcher.process_state(pid, tmp_path).alive, 10, 0.05)
    # The driver left a grandchild behind (as a JVM can be); the group kill removes it.
    assert launcher.group_alive(pid)
    launcher.kill_group(pid)
    assert wait_until(lambda: not launcher.group_alive(pid), 10, 0.05)
    assert launcher.log_tail(log, 5) == ["started"]


def test_crash_exit_code_is_reaped(tmp_path: Path) -> None:
    python = stand_in_python(tmp_path, "import sys; print('boom'); sys.exit(4)\n")
    (tmp_path / "config.json").write_text("{}")
    pid = _start(python, tmp_path / "config.json", tmp_path / "job.log")
    states: list[launcher.ProcessState] = []
    assert wait_until(lambda: exited(pid, tmp_path, states), 10, 0.05)
    assert states[-1].exit_code == 4


def test_recorded_exit_code_when_not_our_child(tmp_path: Path) -> None:
    (tmp_path / EXIT_CODE_FILE).write_text("3\n")
    # A pid that does not exist and is not our child: the recorded code is used.
    state = launcher.process_state(2**22 + 12345, tmp_path)
    assert state == launcher.ProcessState(alive=False, exit_code=3)


def test_python_mode_command(tmp_path: Path) -> None:
    settings = Settings(job_python="/opt/py/bin/python3", launch_mode="python")
    config = tmp_path / "config.json"
    command = launcher.job_command(settings, _snapshot(tmp_path), config)
    assert command.argv == (
        "/opt/py/bin/python3", "-m", "spark_runner.job", "--config", str(config),
    )  # fmt: skip
    assert command.cwd == tmp_path
    assert command.env == {
        "PYSPARK_PYTHON": "/opt/py/bin/python3",
        "PYSPARK_DRIVER_PYTHON": "/opt/py/bin/python3",
        "PYTHONPATH": str(package_root()),
    }


def test_spark_submit_mode_command(tmp_path: Path) -> None:
    settings = Settings(
        job_python="/opt/py/bin/python3",
        launch_mode="spark-submit",
        spark_submit="/opt/spark/bin/spark-submit",
    )
    snapshot = _snapshot(tmp_path, master="spark://127.0.0.1:7077")
    config = tmp_path / "config.json"
    jar = tmp_path / "burn.jar"
    command = launcher.job_command(settings, snapshot, config, jar=jar)
    argv = list(command.argv)

    assert argv[0] == "/opt/spark/bin/spark-submit"
    assert argv[-3:] == [str(ENTRY_FILE), "--config", str(config)]
    options = argv[1:-3]
    flags = dict(zip(options[::2], options[1::2], strict=True))  # every option takes a value
    assert flags["--master"] == "spark://127.0.0.1:7077"
    assert flags["--deploy-mode"] == "client"
    assert flags["--name"] == "headroom-job-42"
    confs = dict(
        value.split("=", 1)
        for flag, value in zip(options[::2], options[1::2], strict=True)
        if flag == "--conf"
    )
    # Exactly what the job's own session would set, master and name given by their flags.
    expected = spark_properties(snapshot, python="/opt/py/bin/python3", jar=jar)
    del expected["spark.master"], expected["spark.app.name"]
    assert confs == expected
    # What only counts before the JVM starts is among them.
    assert confs["spark.driver.extraClassPath"] == str(jar)
    assert confs["spark.pyspark.driver.python"] == "/opt/py/bin/python3"
    assert confs["spark.pyspark.python"] == "/opt/py/bin/python3"
    assert command.env["PYTHONPATH"] == str(package_root())
    assert command.env["PYSPARK_PYTHON"] == "/opt/py/bin/python3"
    assert command.cwd == tmp_path

    without_jar = launcher.job_command(settings, snapshot, config, jar=None)
    assert not any("extraClassPath" in arg for arg in without_jar.argv)


def test_an_elastic_job_on_a_standalone_master_asks_executors_of_its_cores() -> None:
    """Its elasticity is in the snapshot's control (the live configuration): without
    ``spark.executor.cores`` a standalone executor takes every core of its worker, and
    the pool cannot grow by one executor of its size."""
    elastic = {"executor_cores": 1, "max_executors": 3}
    snapshot = _snapshot(Path("/tmp"), master="spark://127.0.0.1:7077")
    snapshot = snapshot.model_copy(
        update={"control": snapshot.control.model_copy(update={"elastic": elastic})}
    )
    properties = spark_properties(snapshot, python="python3", jar=None)
    assert properties["spark.executor.cores"] == "1"
    assert properties["spark.cores.max"] == "3"
    assert properties["spark.dynamicAllocation.enabled"] == "false"
    local = snapshot.model_copy(update={"spark_master": "local[2]"})
    assert "spark.executor.cores" not in spark_properties(local, python="python3", jar=None)


def test_spark_submit_default_is_the_one_in_the_pyspark_package() -> None:
    import pyspark

    expected = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    default = Settings.model_fields["spark_submit"].get_default(call_default_factory=True)
    assert Path(default).resolve() == expected
    assert expected.is_file()


def test_unknown_launch_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="'python' or 'spark-submit'"):
        Settings.model_validate({"HEADROOM_LAUNCH_MODE": "yarn"})


LEADER = """\
import subprocess, sys
# Like spark-submit's JVM: start the driver as a child, exit with its code, and die
# (exit 143, the default) on SIGTERM.
child = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]])
sys.exit(child.wait())
"""
DRIVER = """\
import os, signal, sys, time
from pathlib import Path
signal.signal(signal.SIGTERM, lambda *a: sys.exit(5))
Path(sys.argv[1], "driver.pid").write_text(f"{os.getpid()}\\n")
time.sleep(60)
"""


def test_stop_goes_to_the_recorded_driver_not_the_leader(tmp_path: Path) -> None:
    (tmp_path / "leader.py").write_text(LEADER)
    (tmp_path / "driver.py").write_text(DRIVER)
    argv = (sys.executable, str(tmp_path / "leader.py"), str(tmp_path / "driver.py"), str(tmp_path))
    pid = launcher.start_job_process(launcher.JobCommand(argv, tmp_path), tmp_path / "job.log")
    try:
        assert wait_until((tmp_path / DRIVER_PID_FILE).exists, 10, 0.05)
        launcher.request_stop(pid, tmp_path)
        states: list[launcher.ProcessState] = []
        assert wait_until(lambda: exited(pid, tmp_path, states), 10, 0.05)
        assert states[-1].exit_code == 5  # the driver's handler ran; the leader was spared
    finally:
        launcher.kill_group(pid)


def test_stop_ignores_a_recorded_pid_outside_the_group(tmp_path: Path) -> None:
    stranger = subprocess.Popen(["sleep", "30"], start_new_session=True)
    leader = launcher.JobCommand(("sleep", "30"), tmp_path)
    pid = launcher.start_job_process(leader, tmp_path / "job.log")
    try:
        (tmp_path / DRIVER_PID_FILE).write_text(f"{stranger.pid}\n")  # e.g. a recycled pid
        launcher.request_stop(pid, tmp_path)
        time.sleep(0.3)
        assert stranger.poll() is None
        # The driver has ended (its pid is no longer in the group): the leader is left to
        # exit by itself rather than signalled.
        assert launcher.process_state(pid, tmp_path).alive
    finally:
        os.kill(stranger.pid, signal.SIGKILL)
        stranger.wait()
        launcher.kill_group(pid)

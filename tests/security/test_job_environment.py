"""A job's processes do not inherit the service's secrets (issue 11, item 2).

The parent (this test, standing in for the Celery worker) holds the database URL, the
broker URL, the dashboard's secret key and other ``HEADROOM_*`` values; each job process
is started through the launcher, and its environment is read where the kernel keeps it,
``/proc/<pid>/environ``, while it runs: the driver's, and the JVM's (the JVM the driver
launches in ``python`` mode; spark-submit's, with its Python driver as child, in
``spark-submit`` mode).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest

from backend.jobs import launcher
from backend.jobs.environment import JOB_ENV_ALLOWLIST
from backend.settings import Settings
from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.job.submit_entry import DRIVER_PID_FILE
from tests.waiting import poll_for, wait_until

SECRETS = {
    "DATABASE_URL": "postgresql+psycopg://headroom:db-password-4711@127.0.0.1:5432/prod",
    "CELERY_BROKER_URL": "redis://:broker-password-4711@127.0.0.1:6379/0",
    "HEADROOM_SECRET_KEY": "dashboard-cookie-key-4711",
    "HEADROOM_METRICS_TOKEN": "scrape-token-4711",
    "HEADROOM_TOKEN": "cli-bearer-4711",
    "AWS_SECRET_ACCESS_KEY": "cloud-key-4711",
}

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    yield


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def assert_no_secret(pid: int, what: str) -> dict[str, str]:
    # Read while the process is mid-exec, the environment looks empty: wait for a real one.
    env = poll_for(lambda: (e := environ_of(pid)) and "PATH" in e and e, 10, 0.05)
    assert env, f"{what} (pid {pid}) shows no environment"
    leaked = sorted(
        name
        for name, value in env.items()
        if name.startswith(("HEADROOM_", "CELERY_"))
        or name == "DATABASE_URL"
        or any(secret in value for secret in SECRETS.values())
    )
    assert leaked == [], f"{what} (pid {pid}) inherited {leaked}"
    return env


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[-1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def java_child(pid: int) -> int | None:
    for child in children(pid):
        try:
            if b"java" in Path(f"/proc/{child}/exe").resolve().name.encode():
                return child
        except OSError:
            continue
    return None


def recorded_driver(job_dir: Path) -> int | None:
    try:
        return int((job_dir / DRIVER_PID_FILE).read_text())
    except (OSError, ValueError):
        return None


def snapshot(tmp_path: Path) -> JobSnapshot:
    return JobSnapshot(
        job_id=11,
        api_url="",
        spark_master="local[1]",
        checkpoint_dir=str(tmp_path / "checkpoint"),
        duration_s=120,
        classes=(ClassSnapshot(name="gold", rate_per_s=10),),
        control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)}),
    )


def test_a_job_process_gets_only_the_allow_listed_environment(
    secret_env: None, tmp_path: Path
) -> None:
    """No Spark: a stand-in interpreter shows the environment the launcher passes."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'import time; time.sleep(30)'\n")
    wrapper.chmod(0o700)
    settings = Settings(data_dir=tmp_path, job_python=str(wrapper), launch_mode="python")
    command = launcher.job_command(settings, snapshot(tmp_path), tmp_path / "config.json")
    pid = launcher.start_job_process(command, tmp_path / "job.log")
    try:
        # The wrapper (a shell) has exec'd the interpreter: this is the job's own process.
        assert wait_until(lambda: b"time.sleep" in Path(f"/proc/{pid}/cmdline").read_bytes(), 10)
        env = assert_no_secret(pid, "job process")
        set_by_the_wrapper_shell = {"PWD", "SHLVL", "_", "OLDPWD"}
        assert set(env) - set_by_the_wrapper_shell <= JOB_ENV_ALLOWLIST | set(command.env)
        assert env["PYSPARK_PYTHON"] == str(wrapper)
    finally:
        launcher.kill_group(pid)


def launch_job(tmp_path: Path, launch_mode: Literal["python", "spark-submit"]) -> tuple[Path, int]:
    """A real job launched as the worker launches it; its directory and process id."""
    job_dir = tmp_path / "jobs" / "11"
    launcher.make_job_dir(job_dir)
    settings = Settings(data_dir=tmp_path, launch_mode=launch_mode)
    command = launcher.prepare_launch(settings, snapshot(job_dir), job_dir / "config.json")
    return job_dir, launcher.start_job_process(command, job_dir / "job.log")


@pytest.mark.spark
@pytest.mark.timeout(180)
def test_python_mode_driver_and_its_jvm_hold_no_secret(secret_env: None, tmp_path: Path) -> None:
    job_dir, pid = launch_job(tmp_path, "python")
    jvm: int | None = None
    try:
        assert_no_secret(pid, "driver")
        jvm = poll_for(lambda: java_child(pid), 90)
        log = (job_dir / "job.log").read_text(errors="replace")
        assert jvm is not None, f"no JVM under the driver:\n{log[-3000:]}"
        assert_no_secret(jvm, "the driver's JVM")
    finally:
        launcher.kill_group(pid)
        if jvm is not None:
            launcher.kill_group(jvm)  # it runs in its own session (spark_runner.job.session)


@pytest.mark.spark
@pytest.mark.timeout(180)
def test_spark_submit_mode_jvm_and_driver_hold_no_secret(secret_env: None, tmp_path: Path) -> None:
    job_dir, pid = launch_job(tmp_path, "spark-submit")
    try:
        assert_no_secret(pid, "spark-submit")
        driver = poll_for(lambda: recorded_driver(job_dir), 90)
        log = (job_dir / "job.log").read_text(errors="replace")
        assert driver is not None, f"the driver did not start:\n{log[-3000:]}"
        assert_no_secret(driver, "the driver")
        assert_no_secret(pid, "spark-submit's JVM")  # by now the leader has exec'd java
    finally:
        launcher.kill_group(pid)

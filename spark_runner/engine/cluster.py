"""A Spark standalone cluster on this machine: a master and workers (no Spark import).

For the tests and benchmarks of the distributed engine: ``spark-class`` from the venv
starts ``org.apache.spark.deploy.master.Master`` and ``...worker.Worker`` processes, each in
its own session so stopping them reaches their JVMs and nothing else. Start-up waits for
every worker to register (read from the logs, against a deadline).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spark_class() -> Path:
    return Path(sys.executable).parent / "spark-class"


def spark_home() -> str:
    """The pip-installed PySpark's directory (jars, scripts), found without importing it.

    ``spark-class`` would otherwise look for it with whichever ``python3`` is first on
    the PATH, which need not be this environment's."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ClusterError("pyspark is not installed in this environment")
    return str(Path(spec.origin).parent)


class ClusterError(RuntimeError):
    """The cluster did not come up; the message names the log to read."""


@dataclass
class StandaloneCluster:
    """``workers`` workers with ``cores`` cores each, logs and work dirs under ``work_dir``."""

    work_dir: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    host: str = "127.0.0.1"
    _processes: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)
    master_url: str = ""
    ui_url: str = ""

    def _launch(self, name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log_path = self.work_dir / f"{name}.log"
        env = {
            **os.environ,
            "SPARK_HOME": spark_home(),
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOG_DIR": str(self.work_dir),
            "SPARK_LOCAL_IP": self.host,
        }
        with log_path.open("wb") as out:
            process = subprocess.Popen(
                [str(spark_class()), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        self._processes.append((process, log_path))
        return process, log_path

    def start(self, timeout_s: float = 60.0) -> str:
        """Start the master and the workers; the master's URL once every worker has
        registered. A start that fails (or is interrupted) stops what it launched: the
        processes run in sessions of their own, and nothing else would stop them (a
        master outlived a test whose cluster did not come up)."""
        try:
            return self._start(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout_s: float) -> str:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        ui_port = free_port()
        self.master_url = f"spark://{self.host}:{port}"
        self.ui_url = f"http://{self.host}:{ui_port}"
        _, master_log = self._launch(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host", self.host, "--port", str(port), "--webui-port", str(ui_port),
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        self._wait_for(master_log, "I have been elected leader", 1, deadline)
        for i in range(self.workers):
            work = self.work_dir / f"worker{i}"
            work.mkdir(exist_ok=True)
            self._launch(
                f"worker{i}",
                "org.apache.spark.deploy.worker.Worker",
                "--cores", str(self.cores), "--memory", self.memory,
                "--webui-port", str(free_port()), "--work-dir", str(work),
                "--host", self.host, self.master_url,
            )  # fmt: skip
        self._wait_for(master_log, "Registering worker", self.workers, deadline)
        return self.master_url

    def _wait_for(self, log_path: Path, text: str, count: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            if log_path.read_text(errors="replace").count(text) >= count:
                return
            dead = [p for p, _ in self._processes if p.poll() is not None]
            if dead:
                break
            time.sleep(0.2)
        raise ClusterError(f"standalone cluster not ready ({text!r} x{count}); see {log_path}")

    def stop(self, timeout_s: float = 15.0) -> None:
        for process, _ in reversed(self._processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process, _ in reversed(self._processes):
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        self._processes.clear()

    def save(self, path: Path) -> None:
        """Write where the cluster is and its processes' ids (``headroom cluster up``
        leaves it running; ``down`` reads this)."""
        state = {
            "master_url": self.master_url,
            "ui_url": self.ui_url,
            "workers": self.workers,
            "cores": self.cores,
            "pids": [p.pid for p, _ in self._processes],
        }
        path.write_text(json.dumps(state, indent=1))

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def saved_cluster(path: Path) -> dict[str, Any] | None:
    """The state :meth:`StandaloneCluster.save` wrote, with ``alive``: the processes
    still running (None without a state file)."""
    if not path.exists():
        return None
    state: dict[str, Any] = json.loads(path.read_text())
    state["alive"] = [pid for pid in state["pids"] if _alive(pid)]
    return state


def stop_saved(path: Path, timeout_s: float = 15.0) -> int:
    """Stop the processes of a saved cluster (their whole sessions) and forget it;
    returns how many were still running."""
    state = saved_cluster(path)
    if state is None:
        return 0
    alive: list[int] = state["alive"]
    for pid in alive:
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while any(_alive(pid) for pid in alive) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in alive:
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    path.unlink()
    return len(alive)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

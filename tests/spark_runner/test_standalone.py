"""``headroom cluster``: a standalone master and workers that outlive the command. (A job
on a standalone cluster: ``test_elastic_standalone``.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from spark_runner.engine.cluster import ClusterError, StandaloneCluster
from spark_runner.engine.control.executors import master_status
from tests.leftovers import command_lines

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]


def headroom(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "headroom", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_headroom_cluster_up_leaves_a_cluster_running_until_down(tmp_path: Path) -> None:
    where = ("--dir", str(tmp_path / "dev"))
    started = headroom("cluster", "up", "--workers", "2", *where)
    try:
        assert started.returncode == 0, started.stderr
        master = next(x.split()[1] for x in started.stdout.splitlines() if x.startswith("master"))
        ui = next(x.split()[2] for x in started.stdout.splitlines() if x.startswith("web UI"))
        assert master.startswith("spark://") and ui.startswith("http://")
        status = master_status(ui)
        assert (status.alive_workers, status.cores) == (2, 2)
        assert headroom("cluster", "status", *where).returncode == 0
        again = headroom("cluster", "up", *where)
        assert again.returncode == 1 and "already runs" in again.stdout
    finally:
        stopped = headroom("cluster", "down", *where)
    assert stopped.returncode == 0 and "stopped 3 processes" in stopped.stdout
    gone = headroom("cluster", "status", *where)
    assert gone.returncode == 1 and gone.stdout.strip() == "no cluster"


def test_a_cluster_that_does_not_come_up_leaves_no_process(tmp_path: Path) -> None:
    """A worker Spark refuses (memory it cannot parse) fails the start, which stops the
    master it had launched: the master runs in a session of its own and would otherwise
    outlive the test (a test's timeout left one running once)."""
    cluster = StandaloneCluster(tmp_path / "cluster", workers=1, memory="lots")
    with pytest.raises(ClusterError, match="not ready"):
        cluster.start()
    port = cluster.master_url.rsplit(":", 1)[1].encode()
    master = b"org.apache.spark.deploy.master.Master"
    assert [pid for pid, args in command_lines() if master in args and port in args] == []

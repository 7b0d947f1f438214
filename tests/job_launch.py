"""A job started the way the launcher starts it: ``python -m spark_runner.job`` on a
snapshot file, in a session of its own, its output appended to ``job.log``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from spark_runner.contract.snapshot import JobSnapshot

ROOT = Path(__file__).resolve().parents[1]


def launch_job(config: JobSnapshot, directory: Path) -> subprocess.Popen[bytes]:
    """Writes ``directory/job.json`` and starts the job on it (a restart in the same
    directory appends to the same log)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "job.json"
    config.dump(path)
    with (directory / "job.log").open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "spark_runner.job", "--config", str(path)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

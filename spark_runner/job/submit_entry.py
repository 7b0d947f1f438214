"""The file ``spark-submit`` runs as the job's Python application:
``spark-submit --master M --deploy-mode client ... spark_runner/job/submit_entry.py --config PATH``
(the command line is built by ``spark_runner.job.launch``).

It runs ``spark_runner.job.main`` attached to the JVM spark-submit started, after writing
this process's pid to ``driver.pid`` beside the config file. The launcher's process is
that JVM; a stop request (SIGTERM) must reach this process instead, which stops the query
after its batch and exits with the job's code, which spark-submit then exits with. A
SIGTERM to the JVM would run its shutdown hook and stop the SparkContext under the batch.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

ENTRY_FILE = Path(__file__).resolve()
DRIVER_PID_FILE = "driver.pid"


def driver_pid_path(config_path: Path) -> Path:
    return config_path.parent / DRIVER_PID_FILE


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config", type=Path)
    known, _ = parser.parse_known_args(argv)
    if known.config is not None:
        # An unusable config directory is reported by the job itself (exit 2).
        with contextlib.suppress(OSError):
            driver_pid_path(known.config).write_text(f"{os.getpid()}\n", encoding="ascii")
    from spark_runner.job.main import main as job_main

    return job_main(argv, submitted=True)


if __name__ == "__main__":
    # Run as a file, Python puts this file's directory first on sys.path, where the job's
    # modules (config.py, session.py, ...) would shadow top-level modules of those names.
    if sys.path and Path(sys.path[0] or ".").resolve() == ENTRY_FILE.parent:
        del sys.path[0]
    raise SystemExit(main(sys.argv[1:]))

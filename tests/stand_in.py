"""Stand-in job interpreters: a tests' ``job_python`` that runs a given script instead of
the Spark job, so launcher and supervision tests need no Spark."""

from __future__ import annotations

import sys
from pathlib import Path


def stand_in_python(folder: Path, body: str) -> Path:
    """An executable in ``folder`` that runs ``body`` (Python source) with this test
    run's interpreter, whatever arguments it is given (e.g. ``-m spark_runner.job``)."""
    script = folder / "stand_in_job.py"
    script.write_text(body)
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    wrapper.chmod(0o700)
    return wrapper

"""How a service starts a job process: the command line of each launch mode, the
variables the job's processes need, the exact-burn UDF's jar, and where the driver
records its pid. The backend's launcher uses this module and no other of the job's.

Two launch modes, one command builder (:func:`job_argv`):

- ``python``: ``python -m spark_runner.job``, whose session launches its JVM.
- ``spark-submit``: spark-submit's JVM, started with the job's Spark properties
  (:mod:`spark_runner.job.sparkconf`), runs the Python driver
  (:mod:`spark_runner.job.submit_entry`) as its child, which records its pid in
  :func:`driver_pid_file` so that a stop request reaches the driver, never the JVM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from spark_runner.contract.snapshot import BurnJar, JobSnapshot
from spark_runner.engine.dataflow.jvm_burn import burn_jar
from spark_runner.job.sparkconf import package_root, pyspark_home, spark_properties
from spark_runner.job.submit_entry import DRIVER_PID_FILE, ENTRY_FILE

LaunchMode = Literal["python", "spark-submit"]

# Given by --master and --name rather than --conf.
_SUBMIT_FLAGS = {"spark.master": "--master", "spark.app.name": "--name"}


def job_argv(
    mode: LaunchMode,
    snapshot: JobSnapshot,
    config_path: Path,
    *,
    python: str,
    spark_submit: str,
    jar: Path | None,
) -> tuple[str, ...]:
    """The command line that runs ``snapshot``'s job from ``config_path`` (pure).

    ``jar``: the exact-burn UDF's jar; spark-submit puts it on the driver's class path,
    which must be set before the JVM starts. The driver (spark-submit mode) and the
    Python workers run ``python``.
    """
    config = str(config_path)
    if mode == "python":
        return (python, "-m", "spark_runner.job", "--config", config)
    properties = spark_properties(snapshot, python=python, jar=jar)
    args = [spark_submit, "--deploy-mode", "client"]
    for key, flag in _SUBMIT_FLAGS.items():
        args += [flag, properties.pop(key)]
    for key, value in sorted(properties.items()):
        args += ["--conf", f"{key}={value}"]
    args += [str(ENTRY_FILE), "--config", config]
    return tuple(args)


def job_variables(python: str) -> dict[str, str]:
    """The variables set for a job on top of its allow-listed environment: the driver,
    the data source's planner process on the JVM side and the Python workers run
    ``python`` and must import spark_runner, installed or not."""
    return {
        "PYSPARK_PYTHON": python,
        "PYSPARK_DRIVER_PYTHON": python,
        "PYTHONPATH": str(package_root()),
    }


def build_burn_jar(cache_dir: Path) -> BurnJar | None:
    """The burn UDF's jar in ``cache_dir`` (built or rebuilt if needed); None without a
    JDK or pyspark."""
    home = pyspark_home()
    return burn_jar(home / "jars", cache_dir) if home is not None else None


def driver_pid_file(job_dir: Path) -> Path:
    """Where a job started by spark-submit records its Python driver's pid."""
    return job_dir / DRIVER_PID_FILE

"""Starting and stopping the job's SparkSession and its JVM.

Two choices that are not Spark's defaults:

- Python workers (and the data source's planner process) run this interpreter, with the
  directory holding ``spark_runner`` on their ``PYTHONPATH``: Spark imports the data
  source by module name in processes that do not see ``addPyFile`` files, so the package
  must be importable there whether or not it is pip-installed.
- The JVM runs in its own session (process group). A launcher that signals the job's
  process group then reaches only this Python process, which stops the query after the
  current batch and then the JVM, in that order. Were the JVM in the group, its shutdown
  hook would tear the SparkContext down under the running batch. The JVM still cannot
  outlive this process: it exits when its stdin (a pipe from here) closes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyspark
from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

import spark_runner
from spark_runner.engine.jvm_burn import burn_jar
from spark_runner.job.config import JobSnapshot

log = logging.getLogger(__name__)

SHUFFLE_PARTITIONS = 2
# The JVM's default tiered JIT (C1 then C2). The walking skeleton ran C1 only, which
# started the first batch ~1.5 s sooner; with CPU-heavy operators on the JVM (the
# calibrated burn of map operators hashes in the executors) C2 code is 3-6x faster per
# tuple and Spark's per-batch planning is faster too, which matters more.
DRIVER_JAVA_OPTIONS = ""
STREAMING_STOP_TIMEOUT_S = 30
JVM_EXIT_TIMEOUT_S = 15.0

# Inherited from a parent PySpark process these would attach us to its JVM or change how
# ours is launched; the snapshot alone configures the job.
_INHERITED_SPARK_ENV = ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYSPARK_SUBMIT_ARGS")


def package_root() -> Path:
    """The directory that contains the ``spark_runner`` package."""
    return Path(spark_runner.__file__).resolve().parent.parent


def spark_conf(snapshot: JobSnapshot) -> SparkConf:
    root = str(package_root())
    conf = (
        SparkConf()
        .setMaster(snapshot.spark_master)
        .setAppName(f"headroom-job-{snapshot.job_id}")
        .set("spark.driver.extraJavaOptions", DRIVER_JAVA_OPTIONS)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        # Streaming disables AQE anyway; saying so here silences a warning per query.
        .set("spark.sql.adaptive.enabled", "false")
        .set("spark.sql.streaming.stopTimeout", f"{STREAMING_STOP_TIMEOUT_S}s")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.executorEnv.PYTHONPATH", root)
    )
    # The exact CPU burn of calibrated map operators (a Java UDF), when a JDK can build it.
    jar = burn_jar(Path(pyspark.__file__).resolve().parent / "jars")
    if jar is not None:
        conf.set("spark.driver.extraClassPath", str(jar))
        conf.set("spark.executor.extraClassPath", str(jar))
    return conf


def _prepare_process_env() -> None:
    """Environment inherited by the JVM and, through it, by every Python worker."""
    for name in _INHERITED_SPARK_ENV:
        os.environ.pop(name, None)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # The package must be importable by the data-source runner on the driver, which does
    # not see addPyFile files (an editable install already makes it so; this keeps a plain
    # checkout working too).
    os.environ["PYTHONPATH"] = str(package_root())


@dataclass
class SparkHandle:
    """A running session and the JVM process behind it."""

    spark: SparkSession
    jvm: subprocess.Popen[bytes] | None

    def stop(self) -> None:
        """Stop Spark, then make sure the JVM has exited (killed after a timeout)."""
        try:
            self.spark.stop()
        except Exception:
            log.exception("SparkSession.stop failed; terminating the JVM")
        _end_jvm(self.jvm)


def start_spark(snapshot: JobSnapshot) -> SparkHandle:
    """Launch the JVM and the session; raises whatever Spark raises when it cannot start."""
    conf = spark_conf(snapshot)
    _prepare_process_env()
    gateway = launch_gateway(conf, popen_kwargs={"start_new_session": True})  # type: ignore[no-untyped-call]
    jvm: subprocess.Popen[bytes] | None = gateway.proc
    try:
        context = SparkContext(conf=conf, gateway=gateway)
    except BaseException:
        _end_jvm(jvm)
        raise
    return SparkHandle(spark=SparkSession(context), jvm=jvm)


def _end_jvm(jvm: subprocess.Popen[bytes] | None) -> None:
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()  # closes py4j's sockets and its callback server
        SparkContext._gateway = None
        SparkContext._jvm = None
    if jvm is None or jvm.poll() is not None:
        return
    if jvm.stdin is not None:
        jvm.stdin.close()  # the gateway exits on EOF
    try:
        jvm.wait(JVM_EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        log.warning("JVM %d still up %.0f s after stop; killing it", jvm.pid, JVM_EXIT_TIMEOUT_S)
        jvm.kill()
        jvm.wait()

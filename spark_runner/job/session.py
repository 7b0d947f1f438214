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

Under ``spark-submit`` (``spark_runner/job/submit_entry.py``) the JVM is spark-submit's and
this process its child: the session attaches to that JVM, and the launcher sends its stop
signal to this process, not the JVM, for the same reason.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from dataclasses import dataclass

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.job.sparkconf import package_root, spark_properties, verified_burn_jar

log = logging.getLogger(__name__)

JVM_EXIT_TIMEOUT_S = 15.0

# Inherited from a parent PySpark process these would attach us to its JVM or change how
# ours is launched; the snapshot alone configures the job. (Under spark-submit the first
# two are how the job reaches the JVM spark-submit started, and are kept.)
_INHERITED_SPARK_ENV = ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYSPARK_SUBMIT_ARGS")


def spark_conf(snapshot: JobSnapshot, *, submitted: bool = False) -> SparkConf:
    """The session's configuration; raises when spark-submit's JVM already has a burn jar
    on its class path that no longer has the hash it was built with (it would load it)."""
    jar = verified_burn_jar(snapshot)
    if submitted and jar is None and snapshot.burn_jar is not None:
        raise RuntimeError(
            f"the burn jar {snapshot.burn_jar.path} on spark-submit's class path does not "
            "have the SHA-256 it was built with; refusing to load it"
        )
    properties = spark_properties(snapshot, python=sys.executable, jar=jar)
    return SparkConf().setAll(list(properties.items()))


def _prepare_process_env(*, submitted: bool) -> None:
    """Environment inherited by the JVM and, through it, by every Python worker."""
    if not submitted:
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


def start_spark(snapshot: JobSnapshot, *, submitted: bool = False) -> SparkHandle:
    """Launch the JVM and the session; raises whatever Spark raises when it cannot start.

    ``submitted``: this process is the Python application of ``spark-submit``, whose JVM
    already runs (PySpark reaches it through ``PYSPARK_GATEWAY_PORT``/``_SECRET``) and
    was started with these same properties (``backend.jobs.launcher``); the session
    attaches to it instead of launching one, and leaves its exit to spark-submit.
    """
    conf = spark_conf(snapshot, submitted=submitted)
    _prepare_process_env(submitted=submitted)
    if submitted:
        context = SparkContext(conf=conf)
        jvm = None
    else:
        gateway = launch_gateway(conf, popen_kwargs={"start_new_session": True})  # type: ignore[no-untyped-call]
        jvm = gateway.proc
        try:
            context = SparkContext(conf=conf, gateway=gateway)
        except BaseException:
            _end_jvm(jvm)
            raise
    _quiet_accumulator_hangup(context)
    return SparkHandle(spark=SparkSession(context), jvm=jvm)


def _quiet_accumulator_hangup(context: SparkContext) -> None:
    """Log the JVM closing its accumulator connection as one line, not a traceback.

    PySpark's driver runs a server that the JVM sends Python accumulator updates to. When
    the JVM closes that connection (a stop that lands in a batch, which is replayed), the
    server's handler reads end-of-file, and the server prints the ``EOFError``'s traceback
    to stderr. Nothing is lost; any other error is still reported in full.
    """
    server = getattr(context, "_accumulatorServer", None)
    if server is None:  # PySpark changed: its tracebacks stay
        log.debug("no accumulator server on the SparkContext")
        return
    report = server.handle_error

    def handle_error(request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], EOFError):
            log.info("Spark closed its accumulator connection to the driver")
        else:
            report(request, client_address)

    server.handle_error = handle_error


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

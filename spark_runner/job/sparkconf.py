"""The job's Spark properties as plain strings (no Spark import).

One list for both ways a job's JVM starts: the job's own session passes them to the JVM it
launches (``spark_runner.job.session``), and a launcher that runs the job under
``spark-submit`` passes them as ``--conf`` (``backend.jobs.launcher``), because some of them
(the driver's class path, the Python executables) only take effect when the JVM starts.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import spark_runner
from spark_runner.contract.snapshot import PRIVATE_UMASK, JobSnapshot
from spark_runner.engine.control.pacing import TICK_S
from spark_runner.engine.dataflow.jvm_burn import burn_jar, file_sha256

log = logging.getLogger(__name__)

SHUFFLE_PARTITIONS = 2
# The JVM's default tiered JIT (C1 then C2). The walking skeleton ran C1 only, which
# started the first batch ~1.5 s sooner; with CPU-heavy operators on the JVM (the
# calibrated burn of map operators hashes in the executors) C2 code is 3-6x faster per
# tuple and Spark's per-batch planning is faster too, which matters more.
DRIVER_JAVA_OPTIONS = ""
STREAMING_STOP_TIMEOUT_S = 30
CHECKPOINT_PROPERTIES = {
    "spark.sql.streaming.checkpointFileManagerClass": (
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"
    ),
}
"""How a job writes its offset and commit logs (its checkpoint is always a local path).
Spark's default manager renames each log file into place through Hadoop's
``FileContext``, which on a local file system without Hadoop's native library (pyspark
ships none) starts a ``readlink`` process for every path it resolves: with the ``chmod``
of each new file, 20 processes a batch, and a JVM that starts processes that often runs
everything slower (a light four-class run here: 2.3-3.2 s of fixed time a batch, against
0.5-0.65 s without). The ``FileSystem``-based manager writes a temporary file and
renames it (atomic on a local disk). Hadoop's raw local file system would save the last
``chmod`` of each ``.crc`` file too, but the RocksDB state store needs the checksummed
one. ``bench/bench_spark_checkpoint.py`` measures the two managers side by side."""

HADOOP_UMASK = f"{PRIVATE_UMASK:03o}"
"""The umask Hadoop writes with: a job's checkpoint (offset, commit and source logs, state)
and its file sinks' batch directories and files. Hadoop does not take the process's umask:
it creates each directory 0777 and each file 0666 narrowed by ``fs.permissions.umask-mode``
(default 022) and sets that mode itself, so under an owner-only job directory they were
0755 and 0644. With the service's owner-only umask they are 0700 and 0600."""


def package_root() -> Path:
    """The directory that contains the ``spark_runner`` package."""
    return Path(spark_runner.__file__).resolve().parent.parent


def pyspark_home() -> Path | None:
    """The installed pyspark package directory (its ``bin/`` and ``jars/``), not imported."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


LOCAL_BURN_CACHE = Path("~/.cache/headroom")
"""Where a run without a launcher-built jar (``headroom run``) builds its own (0700)."""


def verified_burn_jar(snapshot: JobSnapshot) -> Path | None:
    """The burn UDF's jar to put on the class path, or None (the engine's hash burn).

    The launcher's jar is used only while its bytes have the SHA-256 the snapshot names: a
    jar replaced after it was built is rejected (logged), never loaded. Without one in the
    snapshot, the jar is built (or reused, verified the same way) in the user's own cache.
    """
    jar = snapshot.burn_jar
    if jar is None:
        home = pyspark_home()
        jar = burn_jar(home / "jars", LOCAL_BURN_CACHE.expanduser()) if home else None
        if jar is None:
            return None
    if file_sha256(Path(jar.path)) != jar.sha256:
        log.warning(
            "burn jar %s does not have the SHA-256 it was built with: not loaded "
            "(map operators use the calibrated hash burn)",
            jar.path,
        )
        return None
    return Path(jar.path)


ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def spark_properties(snapshot: JobSnapshot, *, python: str, jar: Path | None) -> dict[str, str]:
    """Every Spark property of ``snapshot``'s job, for a driver and workers running ``python``.

    ``jar`` (from :func:`verified_burn_jar`) goes on the driver's and executors' class paths.
    Python workers get the directory holding ``spark_runner`` on their ``PYTHONPATH``:
    Spark imports the data source by module name in processes that do not see
    ``addPyFile`` files.
    """
    properties = {
        "spark.master": snapshot.spark_master,
        "spark.app.name": f"headroom-job-{snapshot.job_id}",
        "spark.driver.extraJavaOptions": DRIVER_JAVA_OPTIONS,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # Spark's INFO lines (a plan dump per progress report) would bury the job's own in
        # its log. A JVM the session launches (a pyspark shell to Spark) logs at WARN by
        # default, one spark-submit starts for an application at INFO; both at WARN here.
        "spark.log.level": "WARN",
        "spark.sql.shuffle.partitions": str(SHUFFLE_PARTITIONS),
        # window state (aggregates, joins) in RocksDB, checkpointed with the query
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
        # Each state store's commit writes the batch's changes (a changelog) instead of a
        # snapshot of its RocksDB files; snapshots are taken in the background. Every
        # class's window state commits in every batch, so this is fixed time of every
        # batch (the measurements are in docs/measurements.md). A checkpoint written
        # without it recovers with it.
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
        # No batch without data: the trigger asks every few ms whether a batch is due (see
        # engine/control/pacing.py), and a watermark that moved would otherwise start a no-data
        # batch (a whole batch cycle) after every batch only to evict state, which the
        # next batch does anyway (outputs are updates, none waits for the watermark).
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        # The trigger runs batches back to back and, when the sources offer nothing (a
        # batch not yet due), asks again after this delay: the pacing's tick. (A
        # processing-time trigger of one tick would warn after every longer batch.)
        "spark.sql.streaming.pollingDelay": f"{round(TICK_S * 1000)}ms",
        # Streaming disables AQE anyway; saying so here silences a warning per query.
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.streaming.stopTimeout": f"{STREAMING_STOP_TIMEOUT_S}s",
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": python,
        "spark.executorEnv.PYTHONPATH": str(package_root()),
        "spark.hadoop.fs.permissions.umask-mode": HADOOP_UMASK,
        **CHECKPOINT_PROPERTIES,
    }
    if jar is not None:
        properties["spark.driver.extraClassPath"] = str(jar)
        properties["spark.executor.extraClassPath"] = str(jar)
    if snapshot.engine.queries == "tier":
        # the tiers' pools (engine/dataflow/tiers.py) are added when the queries start
        properties["spark.scheduler.mode"] = "FAIR"
    properties.update(elastic_properties(snapshot))
    return properties


def elastic_properties(snapshot: JobSnapshot) -> dict[str, str]:
    """An elastic job on a standalone cluster: executors of its cores, at most its
    maximum of them (the master's cap), and Spark's own dynamic allocation off (the job
    resizes its pool itself, :mod:`spark_runner.engine.control.executors`)."""
    scaling = snapshot.control.scaling_params()
    if scaling is None or not snapshot.spark_master.startswith("spark://"):
        return {}
    return {
        "spark.executor.cores": str(scaling.executor_cores),
        "spark.cores.max": str(scaling.max_executors * scaling.executor_cores),
        "spark.dynamicAllocation.enabled": "false",
    }

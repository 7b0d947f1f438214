"""Owner-only files (issue 11, item 7).

- After a real ``headroom up`` has started and launched a job, nothing under the data dir
  (the database and its WAL, the logs, the broker's messages, the job's directory with its
  config, token and log, the jar cache) is open to group or others: directories 0700,
  files 0600.
- The burn UDF's jar is cached under the data dir with the hash of what was built; a
  tampered jar is rebuilt by the launcher and refused by the job, never loaded.
- What a job writes through Hadoop (issue 42, finding 7): the file sinks' batch
  directories and files (Parquet and JSON lines) and its checkpoint (offset, commit and
  source logs, state). Hadoop sets their modes itself from its own umask (022 by default,
  whatever the process's), so they were 0755 and 0644 under the 0700 job directory.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.files import PRIVATE_UMASK
from backend.jobs import launcher
from backend.settings import Settings
from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import BurnJar, ClassSnapshot, JobSnapshot
from spark_runner.engine.dataflow.jvm_burn import burn_jar, file_sha256
from spark_runner.job.sparkconf import pyspark_home, verified_burn_jar
from tests.e2e.conftest import free_port
from tests.stand_in import stand_in_python
from tests.waiting import poll_for, wait_until

JOB = "import time; print('job up', flush=True); time.sleep(60)\n"
ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Path]:
    """A real ``headroom up --no-dashboard`` (SQLite, embedded broker) that has launched a
    job (a stand-in interpreter, no Spark); yields the data dir."""
    data_dir = tmp_path / "var"
    python = stand_in_python(tmp_path, JOB)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(
        {
            "HEADROOM_DATA_DIR": str(data_dir),
            "HEADROOM_API_PORT": str(port),
            "HEADROOM_API_URL": f"http://127.0.0.1:{port}",
            "HEADROOM_JOB_PYTHON": str(python),
        }
    )
    up = subprocess.Popen(
        [sys.executable, "-m", "headroom", "up", "--no-dashboard"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    pid = None
    try:
        api = f"http://127.0.0.1:{port}/api/v1"
        health = lambda: httpx.get(f"{api}/health", timeout=2).status_code == 200  # noqa: E731
        assert wait_until(lambda: _answers(health), 90), "headroom up did not start"
        password = (data_dir / "initial_admin_password").read_text().strip()
        with httpx.Client(base_url=api, timeout=30) as client:
            login = client.post("/auth/login", json={"username": "admin", "password": password})
            client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
            created = client.post(
                "/classes", json={"name": "gold", "priority": 6, "delay_target_s": 2}
            )
            assert created.status_code == 201, created.text
            job = client.post("/jobs", json={"rate_per_s": 10})
            assert job.status_code == 201, job.text
            job_url = f"/jobs/{job.json()['id']}"
            pid = poll_for(lambda: client.get(job_url).json().get("pid"), 90)
        assert pid is not None, "the job was not launched"
        job_log = data_dir / "jobs" / str(job.json()["id"]) / "job.log"
        assert wait_until(lambda: "job up" in job_log.read_text(), 30)
        yield data_dir
    finally:
        if pid is not None:
            launcher.kill_group(pid)
        up.terminate()
        up.wait(60)


def _answers(check: object) -> bool:
    try:
        return bool(check())  # type: ignore[operator]
    except httpx.HTTPError:
        return False


@pytest.mark.timeout(240)
def test_a_started_stack_keeps_its_data_dir_owner_only(started: Path) -> None:
    data_dir = started
    expected = [
        data_dir / "headroom.db",
        data_dir / "initial_admin_password",
        data_dir / "logs" / "api.log",
        data_dir / "logs" / "worker.log",
        data_dir / "jobs" / "1" / "config.json",
        data_dir / "jobs" / "1" / "job.log",
        data_dir / "broker" / "queue",
    ]
    for path in expected:
        assert path.exists(), f"{path} was not created"
    modes = {}
    for path in [data_dir, *data_dir.rglob("*")]:
        try:  # SQLite removes its -wal/-shm files while the stack runs
            modes[path] = mode(path)
        except FileNotFoundError:
            continue
    open_to_others = {
        str(path.relative_to(data_dir)): oct(m)
        for path, m in modes.items()
        if not path.is_symlink() and m & 0o077
    }
    assert open_to_others == {}, "readable or writable by group/others"
    assert mode(data_dir) == 0o700
    assert mode(data_dir / "headroom.db") == 0o600
    assert mode(data_dir / "jobs" / "1") == 0o700


@pytest.fixture(scope="module")
def pyspark_jars() -> Path:
    home = pyspark_home()
    assert home is not None
    return home / "jars"


def test_a_tampered_cached_jar_is_rebuilt_and_refused_by_the_job(
    tmp_path: Path, pyspark_jars: Path
) -> None:
    settings = Settings(data_dir=tmp_path / "var")
    built = launcher.service_burn_jar(settings)
    if built is None:
        pytest.skip("no JDK (javac, jar): there is no jar to cache")
    jar = Path(built.path)
    assert jar.parent == settings.cache_dir and not str(jar).startswith("/tmp/headroom-burn")
    assert mode(settings.cache_dir) == 0o700 and mode(jar) == 0o600
    assert file_sha256(jar) == built.sha256
    snapshot = JobSnapshot(
        job_id=1,
        api_url="",
        checkpoint_dir=str(tmp_path / "checkpoint"),
        classes=(ClassSnapshot(name="gold"),),
        control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)}),
        burn_jar=built,
    )
    assert verified_burn_jar(snapshot) == jar

    with jar.open("ab") as handle:  # someone changes the cached jar
        handle.write(b"not what was built")
    # The job given the original hash refuses to put it on its class path.
    assert verified_burn_jar(snapshot) is None
    # The launcher's next use finds the mismatch and rebuilds it.
    rebuilt = burn_jar(pyspark_jars, settings.cache_dir)
    assert rebuilt is not None
    assert file_sha256(jar) == rebuilt.sha256
    assert b"not what was built" not in jar.read_bytes()


def test_spark_submit_refuses_a_jar_on_its_class_path_that_changed(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from spark_runner.job.session import spark_conf

    jar = tmp_path / "burn.jar"
    jar.write_bytes(b"tampered")
    snapshot = JobSnapshot(
        job_id=1,
        api_url="",
        checkpoint_dir=str(tmp_path / "checkpoint"),
        classes=(ClassSnapshot(name="gold"),),
        control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)}),
        burn_jar=BurnJar(path=str(jar), sha256="0" * 64),
    )
    with pytest.raises(RuntimeError, match="does not have the SHA-256 it was built with"):
        spark_conf(snapshot, submitted=True)
    conf = spark_conf(snapshot)  # python mode: it is simply left off the class path
    assert conf.get("spark.driver.extraClassPath") is None


# One batch of a stateful query written by both file sinks, with a job's Spark properties
# (``spark_properties``; no burn jar: nothing here runs a map operator). A directory of
# JSON rows is the input, read once (``availableNow``), so the run ends by itself.
FILE_SINK_JOB = """
import contextlib, sys
from pathlib import Path
from pyspark import SparkConf
from pyspark.sql import SparkSession
from spark_runner.contract.control import ClassControl, LiveConfig
from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
from spark_runner.engine.dataflow.sink import FILE_SINKS, FileBatches, check_sink
from spark_runner.job.sparkconf import spark_properties

root, rows = Path(sys.argv[1]), sys.argv[2]
snapshot = JobSnapshot(
    job_id=1, api_url="", spark_master="local[1]", checkpoint_dir=str(root / "checkpoint"),
    classes=(ClassSnapshot(name="gold"),),
    control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=2)}),
)
properties = spark_properties(snapshot, python=sys.executable, jar=None)
spark = SparkSession.builder.config(conf=SparkConf().setAll(list(properties.items()))).getOrCreate()
try:
    sinks = []
    for kind in FILE_SINKS:
        check_sink(kind, str(root / kind))
        sinks.append(FileBatches(root / kind, kind, contextlib.nullcontext))

    def write(batch, batch_id):
        for sink in sinks:
            sink(batch, batch_id)

    counts = spark.readStream.schema("k long").json(rows).groupBy("k").count()
    query = (
        counts.writeStream.outputMode("update").foreachBatch(write)
        .option("checkpointLocation", snapshot.checkpoint_dir).trigger(availableNow=True).start()
    )
    query.awaitTermination()
finally:
    spark.stop()
"""


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_a_jobs_file_sinks_and_checkpoint_are_owner_only(tmp_path: Path) -> None:
    job_dir, rows = tmp_path / "job", tmp_path / "rows"
    job_dir.mkdir(mode=0o700)
    rows.mkdir()
    (rows / "rows.json").write_text('{"k": 1}\n{"k": 2}\n{"k": 1}\n')
    # as a launched job runs: the service's owner-only umask (backend.files)
    ran = subprocess.run(
        [sys.executable, "-c", FILE_SINK_JOB, str(job_dir), str(rows)],
        cwd=ROOT,
        umask=PRIVATE_UMASK,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    written = [job_dir / "checkpoint" / "commits" / "0", job_dir / "checkpoint" / "state"]
    written += [job_dir / kind / "batch_id=0" / "_SUCCESS" for kind in ("json", "parquet")]
    for path in written:
        assert path.exists(), f"{path} was not written"
    assert list((job_dir / "parquet" / "batch_id=0").glob("part-*.parquet"))
    assert list((job_dir / "json" / "batch_id=0").glob("part-*.json"))
    open_to_others = {
        str(path.relative_to(job_dir)): oct(mode(path))
        for path in job_dir.rglob("*")
        if mode(path) & 0o077
    }
    assert open_to_others == {}, "readable by group/others"

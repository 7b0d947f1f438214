"""An exact CPU burn for calibrated map operators: a tiny Java UDF (no Spark import).

``headroom.Burn`` spins on its own thread's CPU clock (``ThreadMXBean``) for the nanoseconds
it is given and returns false: a map with ``cpu_cost_per_tuple_s: c`` then costs exactly
``c`` of executor CPU per tuple, whatever the JIT compiler has done so far and however
busy the machine is. The class is compiled once with the JDK's ``javac`` against PySpark's
jars and cached in a directory its builder owns (the control plane's data dir, or a
job's own directory; never the shared temporary directory, where anyone could plant a
jar under the predictable name), keyed by its source, with the SHA-256 of what was built;
whoever loads it checks that hash first. The driver and the executors get it on their
class path at JVM start (``spark.{driver,executor}.extraClassPath``: fine on this machine,
including a standalone cluster started here). Without a JDK the engine falls back to the
calibrated SQL hash burn (:func:`expressions.burn_sql`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from spark_runner.contract.snapshot import BurnJar

log = logging.getLogger(__name__)

UDF_NAME = "headroom_burn"
CLASS_NAME = "headroom.Burn"
SOURCE = """package headroom;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.apache.spark.sql.api.java.UDF1;

/** Spins on this thread's CPU clock for the given nanoseconds; always returns false. */
public final class Burn implements UDF1<Long, Boolean> {
  private static final ThreadMXBean BEAN = ManagementFactory.getThreadMXBean();

  @Override
  public Boolean call(Long nanos) {
    if (nanos == null || nanos <= 0) {
      return Boolean.FALSE;
    }
    long end = BEAN.getCurrentThreadCpuTime() + nanos;
    long spins = 0;
    while (BEAN.getCurrentThreadCpuTime() < end) {
      spins++;
    }
    return spins < 0;
  }
}
"""


def burn_jar(pyspark_jars: Path, cache_dir: Path) -> BurnJar | None:
    """The jar holding :data:`CLASS_NAME` in ``cache_dir``, built if needed; None without a JDK.

    ``cache_dir`` is created owner-only (0700). Beside the jar, the SHA-256 of what was
    built is recorded (``<jar>.sha256``); a cached jar is used only while its bytes still
    have that hash, else it is rebuilt. Concurrent builders each rename a complete jar into
    place, one at a time (an ``flock`` in ``cache_dir``).
    """
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
    jar = cache_dir / f"headroom-burn-{digest}.jar"
    cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    cache_dir.chmod(0o700)
    with _locked(cache_dir / ".build.lock"):  # one builder at a time; the others reuse
        recorded = _recorded_hash(jar)
        if recorded is not None:
            if file_sha256(jar) == recorded:
                return BurnJar(path=str(jar), sha256=recorded)
            log.warning("cached burn jar %s does not have its recorded hash: rebuilding", jar)
        return _build(pyspark_jars, jar)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _build(pyspark_jars: Path, jar: Path) -> BurnJar | None:
    javac, jar_tool = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar_tool is None:
        log.warning("no JDK (javac, jar) found: map operators use the calibrated hash burn")
        return None
    with tempfile.TemporaryDirectory(prefix="headroom-burn-") as tmp:
        src = Path(tmp) / "headroom" / "Burn.java"
        src.parent.mkdir()
        src.write_text(SOURCE, encoding="utf-8")
        classes = Path(tmp) / "classes"
        built = Path(tmp) / "burn.jar"
        try:
            subprocess.run(
                [javac, "-nowarn", "-cp", f"{pyspark_jars}/*", "-d", str(classes), str(src)],
                check=True,
                capture_output=True,
                timeout=120,
            )
            subprocess.run(
                [jar_tool, "cf", str(built), "-C", str(classes), "."],
                check=True,
                capture_output=True,
                timeout=60,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            log.warning("cannot build the burn UDF (%s): using the calibrated hash burn", exc)
            return None
        content = built.read_bytes()
        sha256 = hashlib.sha256(content).hexdigest()
        token = uuid.uuid4().hex
        hash_file = _hash_path(jar)
        _write_private(jar.with_name(f".{jar.name}.{token}"), content).replace(jar)
        _write_private(hash_file.with_name(f".{hash_file.name}.{token}"), sha256.encode()).replace(
            hash_file
        )
    return BurnJar(path=str(jar), sha256=sha256)


def file_sha256(path: Path) -> str | None:
    """SHA-256 of ``path``'s bytes (hex); None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _hash_path(jar: Path) -> Path:
    return jar.with_name(jar.name + ".sha256")


def _recorded_hash(jar: Path) -> str | None:
    try:
        return _hash_path(jar).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _write_private(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new file ``path`` created 0600, whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
    return path


def burn_udf_sql(nanos: str) -> str:
    """An expression that is never true and burns ``nanos`` ns of CPU per row."""
    return f"{UDF_NAME}(CAST({nanos} AS BIGINT))"

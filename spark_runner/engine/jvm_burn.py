"""An exact CPU burn for calibrated map operators: a tiny Java UDF (no Spark import).

``headroom.Burn`` spins on its own thread's CPU clock (``ThreadMXBean``) for the nanoseconds
it is given and returns false: a map with ``cpu_cost_per_tuple_s: c`` then costs exactly
``c`` of executor CPU per tuple, whatever the JIT compiler has done so far and however
busy the machine is. The class is compiled once with the JDK's ``javac`` against PySpark's
jars and cached in the temporary directory (keyed by its source), and the driver and the
executors get it on their class path at JVM start (``spark.{driver,executor}.extraClassPath``:
fine on this machine, including a standalone cluster started here). Without a JDK the
engine falls back to the calibrated SQL hash burn (:func:`expressions.burn_sql`).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

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


def burn_jar(pyspark_jars: Path, cache_dir: Path | None = None) -> Path | None:
    """The jar holding :data:`CLASS_NAME`, built if needed; None without a JDK."""
    digest = hashlib.sha256(SOURCE.encode()).hexdigest()[:16]
    cache = cache_dir or Path(tempfile.gettempdir())
    jar = cache / f"headroom-burn-{digest}.jar"
    if jar.is_file():
        return jar
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
        cache.mkdir(parents=True, exist_ok=True)
        partial = jar.with_suffix(f".{digest}.tmp")
        shutil.copyfile(built, partial)
        partial.replace(jar)
    return jar


def burn_udf_sql(nanos: str) -> str:
    """An expression that is never true and burns ``nanos`` ns of CPU per row."""
    return f"{UDF_NAME}(CAST({nanos} AS BIGINT))"

"""Recovery after ``kill -9``: time to new output, and the outputs checked against the input.

    python -m bench.bench_spark_recovery [--batches 6] [--rate 500] [--rounds 2]

A job with a window aggregate (4 s tumbling count per key) and a window join (2 s), the
controller on (DILoS, nothing to shed at this rate), the Parquet sink, runs until it has
committed ``--batches`` batches; then the driver and its JVM are killed with SIGKILL and
the same command starts again on the same checkpoint, ``--rounds`` times, and the job
stops cleanly after a last stretch. Per restart: seconds from the new process's start to
its first committed batch (the replayed batch, if the kill caught one in flight, comes
first) and to the first new output directory. Then every window's newest result and
every join match in the sink are compared with what the offset log says was admitted
(:mod:`spark_runner.engine.sources.replay`): windows missing, windows with a wrong count (a batch
counted twice would show here), matches missing and matches written twice.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.dataset as ds
import yaml

from backend.processes import running_descendants
from bench.bench_spark_common import ROOT, load_average, render_table
from spark_runner.engine.sources.replay import admitted_tuples, final_values, join_matches

WINDOW_S, JOIN_S, JOIN_KEYS = 4.0, 2.0, 3


def scenario(rate: float) -> dict[str, Any]:
    return {
        "version": 1,
        "name": "recovery",
        "seed": 9,
        "duration_s": 3600,
        "control": {"period_s": 1.0, "mode": "dilos"},
        "streams": [
            {"name": "a", "keys": 20, "arrival": {"kind": "constant", "rate_per_s": rate}},
            {"name": "b", "keys": 20, "arrival": {"kind": "constant", "rate_per_s": rate / 2}},
        ],
        "classes": [
            {
                "name": "gold",
                "priority": 6,
                "delay_target_s": 5,
                "queries": [
                    {
                        "name": "counts",
                        "source": "a",
                        "operators": [
                            {
                                "kind": "window_aggregate",
                                "window": {"size_s": WINDOW_S},
                                "function": "count",
                            }
                        ],
                    }
                ],
            },
            {
                "name": "bronze",
                "priority": 1,
                "delay_target_s": 5,
                "queries": [
                    {
                        "name": "pairs",
                        "source": "a",
                        "operators": [
                            {"kind": "filter", "predicate": f"key < {JOIN_KEYS}"},
                            {
                                "kind": "window_join",
                                "right": "b",
                                "window": {"size_s": JOIN_S},
                                "on_column": "key",
                                "sim": {"selectivity": 1},
                            },
                        ],
                    }
                ],
            },
        ],
    }


def committed(checkpoint: Path) -> int:
    return max((int(p.name) for p in (checkpoint / "commits").glob("[0-9]*")), default=-1)


def outputs(sink: Path) -> set[int]:
    return {
        int(p.name.split("=", 1)[1]) for p in sink.glob("batch_id=*") if (p / "_SUCCESS").exists()
    }


def wait_for(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def compare(checkpoint: Path, sink: Path, last: int) -> dict[str, int]:
    # the points, in the network's order: gold reads a; bronze reads a and b
    gold_a, bronze_a, bronze_b = admitted_tuples(checkpoint, last)
    rows = [
        r
        for r in ds.dataset(sink, format="parquet", partitioning="hive").to_table().to_pylist()
        if r["batch_id"] <= last
    ]
    newest = final_values(r for r in rows if r["class"] == "gold")
    starts = np.floor(gold_a["arrival_s"] / WINDOW_S) * WINDOW_S
    expected = Counter(zip(starts.tolist(), gold_a["key"].astype(float).tolist(), strict=True))
    wrong = sum(1 for c, n in expected.items() if c in newest and newest[c] != n)
    small = {c: v[bronze_a["key"] < JOIN_KEYS] for c, v in bronze_a.items()}
    pairs = join_matches(small, bronze_b, on="key", size_s=JOIN_S, values=("value", "value"))
    joined = Counter((r["key"], r["value"], r["value_r"]) for r in rows if r["class"] == "bronze")
    return {
        "windows": len(expected),
        "windows missing": sum(1 for c in expected if c not in newest),
        "windows wrong": wrong,
        "windows extra": sum(1 for c in newest if c not in expected),
        "matches": sum(pairs.values()),
        "matches missing": sum((pairs - joined).values()),
        "matches twice": sum((joined - pairs).values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"recovery benchmark, {load_average()} at start", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-recovery-") as tmp:
        work = Path(tmp)
        doc = work / "recovery.yaml"
        doc.write_text(yaml.safe_dump(scenario(args.rate), sort_keys=False))
        checkpoint, sink, log = work / "checkpoint", work / "sink", work / "job.log"
        command = [
            sys.executable, "-m", "headroom", "run", str(doc), "--engine", "spark",
            "--checkpoint", str(checkpoint), "--sink", "parquet", "--sink-path", str(sink),
            "--log-level", "INFO",
        ]  # fmt: skip

        def start() -> subprocess.Popen[bytes]:
            with log.open("ab") as out:
                return subprocess.Popen(
                    command, cwd=ROOT, stdout=out, stderr=out, start_new_session=True
                )

        rows: list[list[str]] = []
        job = start()
        for round_ in range(args.rounds + 1):
            target = committed(checkpoint) + args.batches
            if not wait_for(lambda t=target: committed(checkpoint) >= t, 300):
                raise SystemExit(f"no progress; log tail:\n{log.read_text()[-3000:]}")
            if round_ == args.rounds:
                break
            at_kill, seen = committed(checkpoint), outputs(sink)
            for pid in [job.pid, *running_descendants(job.pid)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            job.wait(30)
            time.sleep(2)  # the killed JVM's children (Python workers) go with it
            job = start()
            started = time.monotonic()
            wait_for(lambda a=at_kill: committed(checkpoint) > a, 300)
            to_commit = time.monotonic() - started
            wait_for(lambda s=seen: bool(outputs(sink) - s), 60)
            to_output = time.monotonic() - started
            rows.append([str(round_ + 1), str(at_kill), f"{to_commit:.1f}", f"{to_output:.1f}"])
            print(f"  restart {round_ + 1} done", flush=True)
        job.send_signal(signal.SIGTERM)
        code = job.wait(120)
        last = committed(checkpoint)
        print(render_table(["restart", "killed after batch", "to commit s", "to output s"], rows))
        result = compare(checkpoint, sink, last)
        print(render_table(list(result), [[str(v) for v in result.values()]]))
        print(f"clean stop exit {code}, {last + 1} batches; {load_average()} at end")


if __name__ == "__main__":
    main()

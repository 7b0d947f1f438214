"""Shared pieces of the Spark runner's benchmarks: scenarios, runs, tables.

Every run is ``python -m headroom run`` in its own process (its own JVM), one after the
other: the machine has 2 cores, and runs side by side would measure each other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from bench.cpu_meter import TreeCpu
from spark_runner.contract.snapshot import DEFAULT_TARGET_UTILIZATION
from spark_runner.control.calibrated_oracle import steady_throughput
from spark_runner.control.report import class_table, render_table

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["class_table", "render_table"]

CLASSES = (("c1", 6), ("c2", 3), ("c3", 1))
WITHIN_TARGET = 0.05
"""A class is within its target when its mean violation is at most this share of it (the
promise as the product states it)."""


def cost_query(stream: str, cost_s: float) -> dict[str, Any]:
    """filter (90 %) → calibrated CPU map → project: the benchmark's query."""
    return {
        "name": "q",
        "source": stream,
        "operators": [
            {"kind": "filter", "predicate": "value < 0.9"},
            {
                "kind": "map",
                "expression": "value * 2",
                "output": "v2",
                "cpu_cost_per_tuple_s": cost_s,
            },
            {"kind": "project", "columns": ["key", "v2"]},
        ],
    }


STATEFUL_KEYS = 1000
WINDOW_S, JOIN_S, JOIN_SHARE = 2.0, 1.0, 0.1


def stateful_queries(stream: str, cost_s: float, rate_per_s: float) -> list[dict[str, Any]]:
    """A class's two stateful queries over its stream: filter (90 %) → calibrated CPU map
    → a tumbling count per key; and a tenth of its tuples joined with the whole stream
    on ``key`` within ``JOIN_S`` (the simulator's selectivity: the matches one such tuple
    finds at ``rate_per_s``)."""
    agg, join = cost_query(stream, cost_s), cost_query(stream, 0.0)
    agg["name"], join["name"] = "counts", "pairs"
    agg["operators"][-1] = {
        "kind": "window_aggregate",
        "window": {"type": "tumbling", "size_s": WINDOW_S},
        "function": "count",
    }
    join["operators"] = [
        {"kind": "filter", "predicate": f"value < {JOIN_SHARE}"},
        {
            "kind": "window_join",
            "right": stream,
            "window": {"size_s": JOIN_S},
            "sim": {"selectivity": round(2 * JOIN_S * rate_per_s / STATEFUL_KEYS, 6)},
        },
    ]
    return [agg, join]


def three_classes(
    rates: Sequence[float],
    targets: Sequence[float],
    *,
    cost_s: float,
    period_s: float,
    mode: str = "dilos",
    manager: dict[str, Any] | None = None,
    duration_s: float = 120.0,
    background: list[dict[str, Any]] | None = None,
    name: str = "spark-bench",
    stateful: bool = False,
    onset_s: float = 0.0,
    before_onset: float = 1.0,
) -> dict[str, Any]:
    """Three classes (priorities 6/3/1), each reading its own stream at ``rates`` (from
    ``onset_s``; ``before_onset`` × ``rates`` until then): one stateless query each, or
    (``stateful``) :func:`stateful_queries`."""
    manager = manager or {"kind": "aloma", "params": {"max_shed": 0.99}}

    def arrival(rate: float) -> dict[str, Any]:
        if onset_s <= 0.0:
            return {"kind": "constant", "rate_per_s": rate}
        steps = [(0.0, round(rate * before_onset)), (onset_s, rate)]
        return {"kind": "step", "steps": [{"at_s": t, "rate_per_s": r} for t, r in steps]}

    return {
        "version": 1,
        "name": name,
        "seed": 42,
        "duration_s": duration_s,
        "control": {
            "period_s": period_s,
            "mode": mode,
            "redistribution_every": 10,
            "common_manager": {"kind": "aloma", "params": {"max_shed": 0.99}},
        },
        "streams": [
            {
                "name": f"s{i + 1}",
                "arrival": arrival(r),
                **({"keys": STATEFUL_KEYS} if stateful else {}),
            }
            for i, r in enumerate(rates)
        ],
        "classes": [
            {
                "name": name_,
                "priority": prio,
                "delay_target_s": d,
                "manager": manager,
                "queries": (
                    stateful_queries(f"s{i + 1}", cost_s, rates[i])
                    if stateful
                    else [cost_query(f"s{i + 1}", cost_s)]
                ),
            }
            for i, ((name_, prio), d) in enumerate(zip(CLASSES, targets, strict=True))
        ],
        "background": background or [],
    }


class RunFailed(RuntimeError):
    pass


def measured_cores(results: dict[str, Any], meter: TreeCpu) -> float | None:
    """The cores a ``headroom run`` used over its measured time (its engine's ``origin_s``
    is the epoch second of the scenario's time 0)."""
    engine = results["engine"]
    if engine.get("origin_s") is None:
        return None
    start = engine["origin_s"] + engine["measured_from_s"]
    return meter.cores(start, start + results["scenario"]["duration_s"])


def run_spark(
    doc: dict[str, Any],
    *,
    duration_s: float,
    warmup_s: float,
    master: str = "local[2]",
    plain: bool = False,
    fixed_pace: bool = False,
    utilization: float = DEFAULT_TARGET_UTILIZATION,
    burn_ns: float | None = None,
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """Run a scenario document on Spark; returns its results document (plus ``wall_s``).
    ``extra``: more ``headroom run`` options (e.g. a source)."""
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        scenario = Path(tmp) / "scenario.yaml"
        scenario.write_text(yaml.safe_dump(doc, sort_keys=False))
        out = Path(tmp) / "results.json"
        cmd = [
            sys.executable, "-m", "headroom", "run", str(scenario), "--master", master,
            "--duration", str(duration_s), "--warmup", str(warmup_s), "--out", str(out),
            "--utilization", str(utilization), "--log-level", "WARNING",
        ]  # fmt: skip
        if plain:
            cmd.append("--plain")
        if fixed_pace:
            cmd.append("--fixed-pace")
        if burn_ns is not None:
            cmd += ["--burn-ns", str(burn_ns)]
        cmd += extra
        started = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        meter = TreeCpu(proc.pid)
        meter.start()
        _, stderr = proc.communicate()
        meter.stop()
        if proc.returncode != 0:
            raise RunFailed(f"exit {proc.returncode}: {stderr[-3000:]}")
        results: dict[str, Any] = json.loads(out.read_text())
        results["wall_s"] = time.monotonic() - started
        results["cpu_cores"] = measured_cores(results, meter)
        if results["engine"]["batches"] < 5:
            raise RunFailed(f"only {results['engine']['batches']} batches ran: {results['engine']}")
        keep = os.environ.get("BENCH_SPARK_KEEP")  # a directory: keep every results file
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            name = f"{doc['name']}-{doc['control']['mode']}-{int(time.time())}.json"
            (Path(keep) / name).write_text(out.read_text())
        return results


PROBE_RATE = 4000
"""Tuples/s each class offers in a capacity run: far above what the engine takes."""


def measure_capacity(
    doc: dict[str, Any],
    *,
    duration_s: float,
    warmup_s: float,
    utilization: float,
    burn_ns: float | None = None,
) -> float:
    """Tuples/s the engine admits for a scenario's network, over the second half of the
    run, when every class is far overloaded (each stream at ``PROBE_RATE``) and DILoS
    sheds what does not fit, so that the queues stay near the targets as in a managed
    run. (With no manager the queues grow without bound and the engine takes fewer
    tuples a second of batch time: one run each on this machine, stateful network,
    18/22/26 s targets, 8 s period: 2,764 tuples/s with no manager, 3,273 with DILoS.)

    A capacity in tuples/s holds for one mix of the classes' tuples and one batch cycle:
    under ``absolute`` the top class takes nearly the whole engine, and the targets set
    the pace, whose fixed time per batch the tuples share. ``utilization`` is the share
    of the pace a batch may take (the runs keep 10 % in reserve; 1.0 reads what the
    engine can take rather than what the controller lets it take)."""
    probe = {
        **doc,
        "control": {**doc["control"], "mode": "dilos"},
        "streams": [
            {**s, "arrival": {"kind": "constant", "rate_per_s": PROBE_RATE}} for s in doc["streams"]
        ],
        "background": [],
    }
    r = run_spark(
        probe, duration_s=duration_s, warmup_s=warmup_s, burn_ns=burn_ns, utilization=utilization
    )
    return steady_throughput(r)


def shed_while_feasible(r: dict[str, Any], cls: str, target: float) -> int:
    """Tuples of the class shed in periods decided while its target was at or above the
    floor (a period's shedding was decided at the step before it; the first period's
    before any step, with nothing measured, counts as feasible)."""
    series = r["series"]
    return sum(
        s["classes"][cls]["shed_count"]
        for before, s in zip([None, *series[:-1]], series, strict=True)
        if before is None
        or before["classes"][cls].get("floor_s") is None
        or before["classes"][cls]["floor_s"] <= target
    )


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} on {os.cpu_count()} cores"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def sec(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def series_values(results: dict[str, Any], key: str, cls: str | None = None) -> list[float]:
    out = []
    for s in results["series"]:
        v = s["classes"][cls][key] if cls else s.get(key)
        if v is not None:
            out.append(float(v))
    return out


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")

"""Elastic capacity on Spark: a standalone master and two 1-core workers on this machine.

    python -m bench.bench_elastic_spark [--capacity 350] [--high 90] [--low 90] [--constant 300]

Gold (priority 6, 6 s) and bronze (priority 1, 8 s) read one stream each through a 1 ms
map; together they offer 0.5x of one executor's capacity (``--capacity`` tuples/s: 350
here, where one executor sheds at 2x; at 180 it kept both targets at 2x without shedding),
2x of it for ``--high`` seconds from 60 s of scenario time, then 0.5x
again for ``--low`` seconds. Three runs one after the other, each on a fresh cluster:
elastic (1 to 2 executors), static minimum (1) and static maximum (2). Per class
mean/max violation and loss; per run executor-seconds, scaling actions and seconds from
the tau3 crossing to the new executor serving. Targets (issue 15): elastic keeps every
class within its target with loss <= 1.2x static-maximum's and executor-seconds <= 0.7x
static-maximum's. Then a fourth run, elastic, at a constant load near tau1 (1.05 x 0.4 of
one executor) for ``--constant`` seconds: at most one scaling action.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_elastic_sim import step_report, step_streams
from bench.bench_spark_common import load_average, run_spark
from spark_runner.control.results import scaling_actions
from spark_runner.engine.cluster import StandaloneCluster

CLASSES = (("gold", 6, 6.0, 0.3), ("bronze", 1, 8.0, 0.7))
HIGH_FROM_S = 60.0
WARMUP_S = 12.0


def step(high_s: float) -> list[tuple[float, float]]:
    """0.5x of one executor, 2x from ``HIGH_FROM_S`` for ``high_s``, then 0.5x again."""
    return [(0.0, 0.5), (HIGH_FROM_S, 2.0), (HIGH_FROM_S + high_s, 0.5)]


def scenario(
    capacity: float, points: list[tuple[float, float]], duration_s: float, pool: dict[str, Any]
) -> dict[str, Any]:
    return {
        "version": 1,
        "name": "elastic-bench",
        "seed": 7,
        "duration_s": duration_s,
        "control": {
            "period_s": 1.0,
            "mode": "dilos",
            "elastic": {"params": {"hold_out_s": 5, "hold_in_s": 15, **pool}},
        },
        "streams": step_streams(points, capacity, CLASSES),
        "classes": [
            {
                "name": name,
                "priority": prio,
                "delay_target_s": target,
                "queries": [
                    {
                        "name": "q",
                        "source": f"s_{name}",
                        "operators": [
                            {
                                "kind": "map",
                                "expression": "value * 2",
                                "output": "v",
                                "cpu_cost_per_tuple_s": 0.001,
                            }
                        ],
                    }
                ],
            }
            for name, prio, target, _ in CLASSES
        ],
    }


def run_on_cluster(doc: dict[str, Any]) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="bench-elastic-") as tmp,
        StandaloneCluster(Path(tmp), workers=2, cores=1) as cluster,
    ):
        return run_spark(
            doc,
            duration_s=doc["duration_s"],
            warmup_s=WARMUP_S,
            master=cluster.master_url,
            extra=["--master-ui", cluster.ui_url],
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="elastic capacity on a standalone cluster")
    parser.add_argument("--capacity", type=float, default=350.0, help="one executor, tuples/s")
    parser.add_argument("--high", type=float, default=90.0, help="seconds at 2x")
    parser.add_argument("--low", type=float, default=90.0, help="seconds at 0.5x after it")
    parser.add_argument("--constant", type=float, default=300.0, help="seconds near tau1")
    args = parser.parse_args(argv)
    duration_s = HIGH_FROM_S + args.high + args.low
    pools = {
        "elastic (1..2)": {"min_executors": 1, "max_executors": 2},
        "static minimum (1)": {"min_executors": 1, "max_executors": 1},
        "static maximum (2)": {"min_executors": 2, "max_executors": 2},
    }
    runs = {
        label: run_on_cluster(scenario(args.capacity, step(args.high), duration_s, pool))
        for label, pool in pools.items()
    }
    constant = run_on_cluster(
        scenario(args.capacity, [(0.0, 0.4 * 1.05)], args.constant, pools["elastic (1..2)"])
    )
    step_ok = step_report(
        f"load step 0.5x -> 2x -> 0.5x of one executor ({args.capacity:g} tuples/s), "
        f"{load_average()}",
        runs,
        CLASSES,
    )
    resizes = scaling_actions(constant)
    usage = [e["usage"] for e in constant["series"] if e.get("usage") is not None]
    print(
        f"constant load near tau1 for {args.constant:g} s: {len(resizes)} scaling actions "
        f"({[a['executors_after'] for a in resizes]}), u mean "
        f"{sum(usage) / max(len(usage), 1):.2f}, min {min(usage, default=0):.2f}, "
        f"max {max(usage, default=0):.2f} (target: at most one action)"
    )
    return 0 if step_ok and len(resizes) <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())

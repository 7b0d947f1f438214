"""Several jobs on one simulated cluster: a static split against the coordinator.

    python -m bench.bench_cluster_sim [--executors 16] [--startup 8]

Two elastic jobs, each with two classes reading their own streams through three 1 ms
operators (3 ms a tuple: one processor serves ~330 tuples/s). fraud holds gold
(priority 6, target 2 s) and bronze (1, 4 s); ads holds silver (3, 2 s) and tin (2, 3 s).
The load moves: gold bursts from 60 to 180 s, then silver from 180 to 300 s, each to
about 60 % of the cluster. Side by side, on the same arrivals: a static split (each job
at most half the cluster), the coordinator (each job up to all of it but one
processor), and the coordinator with each job at most half the cluster but holding the
other job's lowest class ready to take (*moves*: executors cannot follow the load past
half, a class can). Per class: loss, the cluster oracle's least loss (every class in one
priority order on the whole cluster, capacity movable at once) and the ratio, mean and
max violation; per configuration executor-seconds, the coordinator's reallocations and
its class moves.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.common import print_table
from spark_runner.control.run import RunOutput
from spark_runner.core.coordinator import Coordinator
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Scenario
from spark_runner.sim.cluster import (
    ClusterOutput,
    cluster_classes,
    cluster_oracle,
    simulate_cluster,
)

COST_S = 0.001
OPS = 3
CAPACITY = 1.0 / (COST_S * OPS)  # tuples/s one processor serves
DURATION_S = 360.0
GOLD_BURST = (60.0, 180.0)
SILVER_BURST = (180.0, 300.0)
JOBS = {  # class: (priority, target s, share of the cluster: base, in its burst)
    "fraud": {"gold": (6, 2.0, 0.08, 0.6), "bronze": (1, 4.0, 0.15, 0.15)},
    "ads": {"silver": (3, 2.0, 0.08, 0.6), "tin": (2, 3.0, 0.15, 0.15)},
}
BURSTS = {"gold": GOLD_BURST, "silver": SILVER_BURST}
HELD = {"fraud": ("ads", "tin"), "ads": ("fraud", "bronze")}
"""In *moves*, each job holds the other's lowest class ready: (that job, the class)."""


def arrival(name: str, base: float, burst: float, executors: int) -> dict[str, Any]:
    start, end = BURSTS.get(name, (0.0, 0.0))
    points = [(0.0, base), (start, burst), (end, base)] if end else [(0.0, base)]
    steps = [{"at_s": t, "rate_per_s": share * executors * CAPACITY} for t, share in points]
    return {"kind": "step", "steps": steps}


def job(
    name: str, max_executors: int, executors: int, startup_s: float, held: bool = False
) -> Scenario:
    """Job ``name``'s scenario; ``held``: with the other job's class of :data:`HELD`."""
    project = {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": COST_S}}
    aloma = {"kind": "aloma", "params": {"max_shed": 0.99}}
    elastic = {"max_executors": max_executors, "hold_out_s": 5, "hold_in_s": 20}
    classes = dict(JOBS[name])
    if held:
        other, moving = HELD[name]
        classes[moving] = JOBS[other][moving]
    return scenario_from_dict(
        {
            "version": 1,
            "name": name,
            "seed": 11,
            "duration_s": DURATION_S,
            "control": {"period_s": 0.5, "mode": "dilos", "elastic": {"params": elastic}},
            "engine": {
                "batch_overhead_s": 0.0001,
                "source_cost_per_tuple_s": 0.0,
                "executor_startup_s": startup_s,
            },
            "streams": [
                {"name": c, "arrival": arrival(c, base, burst, executors)}
                for c, (_, _, base, burst) in classes.items()
            ],
            "classes": [
                {
                    "name": c,
                    "priority": priority,
                    "delay_target_s": target,
                    "manager": aloma,
                    "queries": [{"name": "q", "source": c, "operators": [project] * OPS}],
                }
                for c, (priority, target, _, _) in classes.items()
            ],
        }
    )


def executor_seconds(run: RunOutput) -> float:
    period = run.scenario.control.period_s
    return sum(period * (e.get("executors") or 0) for e in run.series)


def rows(label: str, out: ClusterOutput, executors: int) -> list[list[str]]:
    """Per class of the cluster (a moved class over the jobs that computed it)."""
    oracle = cluster_oracle(out, executors)
    table = []
    for key, c in cluster_classes(out).items():
        least = oracle[key]
        table.append(
            [
                label,
                key,
                f"{c.priority:g}",
                f"{c.loss:.3f}",
                f"{least:.3f}",
                f"{c.loss / least:.2f}" if least > 0 else ("-" if c.loss == 0 else "inf"),
                f"{c.mean_violation_s:.3f}",
                f"{c.max_violation_s:.2f}",
            ]
        )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="several jobs on one simulated cluster")
    parser.add_argument("--executors", type=int, default=16, help="the cluster's processors")
    parser.add_argument("--startup", type=float, default=8.0, help="executor start-up, s")
    args = parser.parse_args(argv)
    n = args.executors
    static = simulate_cluster(
        {j: job(j, n // 2, n, args.startup) for j in JOBS}, n, coordinator=None
    )
    coordinated = simulate_cluster(
        {j: job(j, n - 1, n, args.startup) for j in JOBS}, n, coordinator=Coordinator()
    )
    moves = simulate_cluster(
        {j: job(j, n // 2, n, args.startup, held=True) for j in JOBS},
        n,
        Coordinator(),
        {j: frozenset({moving}) for j, (_, moving) in HELD.items()},
    )
    configs = (("static", static), ("coordinated", coordinated), ("moves", moves))
    heads = ["config", "class", "priority", "loss", "oracle", "loss/oracle", "mean viol s"]
    print_table(
        f"Per class, {n} processors (oracle: the cluster's least loss, capacity movable at once)",
        [*heads, "max viol s"],
        [row for label, out in configs for row in rows(label, out, n)],
    )
    summary = []
    for label, out in configs:
        changes = [c for c in out.reallocations if c.trigger is not None]
        summary.append(
            [
                label,
                f"{sum(executor_seconds(r) for r in out.jobs.values()):.0f}",
                f"{len(changes)}",
                " ".join(f"{c.at_s:g}s:{c.trigger}:{dict(c.after)}" for c in changes) or "-",
                " ".join(
                    f"{m.at_s:g}s:{m.move.class_name}:{m.move.origin}->{m.move.target}"
                    for m in out.moves
                )
                or "-",
            ]
        )
    print_table(
        "Per configuration",
        ["config", "executor-s", "reallocations", "each: when, short job, after", "class moves"],
        summary,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Several jobs on one simulated cluster: a static split against the coordinator.

    python -m bench.bench_cluster_sim [--executors 16] [--startup 8]

Two elastic jobs, each with two classes reading their own streams through three 1 ms
operators (3 ms a tuple: one processor serves ~330 tuples/s). fraud holds gold
(priority 6, target 2 s) and bronze (1, 4 s); ads holds silver (3, 2 s) and tin (2, 3 s).
The load moves: gold bursts from 60 to 180 s, then silver from 180 to 300 s, each to
about 60 % of the cluster. Side by side, on the same arrivals: a static split (each job
at most half the cluster) and the coordinator (each job up to all of it but one
processor). Per class: loss, the cluster oracle's least loss (every class in one
priority order on the whole cluster, capacity movable at once) and the ratio, mean and
max violation; per configuration executor-seconds and the coordinator's moves.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.common import print_table
from spark_runner.control.results import build_results
from spark_runner.control.run import RunOutput
from spark_runner.core.coordinator import Coordinator
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Scenario
from spark_runner.sim.cluster import ClusterOutput, cluster_oracle, simulate_cluster

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


def arrival(name: str, base: float, burst: float, executors: int) -> dict[str, Any]:
    start, end = BURSTS.get(name, (0.0, 0.0))
    points = [(0.0, base), (start, burst), (end, base)] if end else [(0.0, base)]
    steps = [{"at_s": t, "rate_per_s": share * executors * CAPACITY} for t, share in points]
    return {"kind": "step", "steps": steps}


def job(name: str, max_executors: int, executors: int, startup_s: float) -> Scenario:
    project = {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": COST_S}}
    aloma = {"kind": "aloma", "params": {"max_shed": 0.99}}
    elastic = {"max_executors": max_executors, "hold_out_s": 5, "hold_in_s": 20}
    classes = JOBS[name]
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
    oracle = cluster_oracle(out, executors)
    table = []
    for job_name, run in out.jobs.items():
        for name, summary in build_results(run)["classes"].items():
            loss, least = summary["loss_fraction"], oracle[(job_name, name)]
            table.append(
                [
                    label,
                    f"{job_name}/{name}",
                    f"{summary['priority']:g}",
                    f"{loss:.3f}",
                    f"{least:.3f}",
                    f"{loss / least:.2f}" if least > 0 else ("-" if loss == 0 else "inf"),
                    f"{summary['mean_violation_s']:.3f}",
                    f"{summary['max_violation_s']:.2f}",
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
    heads = ["config", "class", "priority", "loss", "oracle", "loss/oracle", "mean viol s"]
    print_table(
        f"Per class, {n} processors (oracle: the cluster's least loss, capacity movable at once)",
        [*heads, "max viol s"],
        rows("static", static, n) + rows("coordinated", coordinated, n),
    )
    summary = []
    for label, out in (("static", static), ("coordinated", coordinated)):
        moves = [c for c in out.reallocations if c.trigger is not None]
        summary.append(
            [
                label,
                f"{sum(executor_seconds(r) for r in out.jobs.values()):.0f}",
                f"{len(moves)}",
                " ".join(f"{c.at_s:g}s:{c.trigger}:{dict(c.after)}" for c in moves) or "-",
            ]
        )
    print_table(
        "Per configuration",
        ["config", "executor-s", "moves", "each move: when, short job, after"],
        summary,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

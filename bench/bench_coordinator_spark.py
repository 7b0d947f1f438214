"""Two jobs on one standalone Spark cluster: a static split against the coordinator.

    python -m bench.bench_coordinator_spark [--phase 90]

The jobs of the coordinator's Spark test (``tests/coordinated_jobs.py``): job A holds
gold (priority 6) and bronze (1), job B silver (3) and tin (2), 1 ms maps, tuples from
Redis. B is loaded for ``--phase`` seconds, then the load moves to A for as long. Each
configuration runs on a fresh cluster (a master and two workers advertising 2 cores
each: four 1-core executors on this 2-core machine), the product (API, Celery worker
with beat) on a fresh PostgreSQL database, one after the other:

- static: each job holds 2 executors, no coordinator;
- coordinated: each job 1 to 3, the coordinator dividing 4.

Over-subscribed: the machine's two cores are shared by the executors' threads, so a job
holding more executors gets a larger share of them, not more cores than exist. Per class
over both phases: loss (shed over arrived), mean and max violation; per configuration
executor-seconds and the coordinator's moves. No oracle: the cluster oracle is the
simulator's (``bench_cluster_sim``); on Spark there is none yet.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import postgres_database, print_table
from spark_runner.engine.cluster import StandaloneCluster
from tests.conftest import REDIS_URL
from tests.coordinated_jobs import (
    A_LOADED,
    B_LOADED,
    TARGETS,
    coordinated_product,
    feeding,
    reallocations,
    samples,
    start_jobs,
)
from tests.e2e.conftest import api_client
from tests.waiting import poll_for

CONFIGS = {"static": ((2, 2), None), "coordinated": ((1, 3), 4)}
"""Per configuration: each job's pool (fewest, most executors) and the coordinator's
executors (None: no coordinator)."""


def run(name: str, phase_s: float) -> dict[str, Any]:
    """One configuration: per class its totals, and the run's executor-seconds and moves."""
    pool, executors = CONFIGS[name]
    with (
        tempfile.TemporaryDirectory(prefix=f"headroom-bench-{name}-") as scratch,
        StandaloneCluster(Path(scratch) / "cluster", workers=2, cores=2, memory="2g") as cluster,
        postgres_database() as database_url,
        coordinated_product(
            Path(scratch) / "data", database_url, REDIS_URL, cluster.master_url, executors=executors
        ) as stack,
    ):
        api = api_client(stack)
        master = cluster.master_url
        a, b = start_jobs(api, master, pool)
        if not poll_for(lambda: all(samples(api, j) for j in (a, b)), 180):
            raise RuntimeError(f"{name}: the jobs never both reported")
        began = time.time()
        for rates in (B_LOADED, A_LOADED):
            with feeding(REDIS_URL, Path(scratch), rates):
                time.sleep(phase_s)
        ended = time.time()
        rows = [{**s, "job": j} for j in (a, b) for s in samples(api, j) if began < s["t"] <= ended]
        log = reallocations(api, master) if executors is not None else []
        moves = [c for c in log if c["trigger_job_id"] is not None]
        for job in (a, b):
            api.post(f"/jobs/{job}/stop")
        api.close()
    return {"classes": _totals(rows), "executor_s": _executor_s(rows), "moves": len(moves)}


def _totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out = {}
    for name in TARGETS:
        mine = [r for r in rows if r["class_name"] == name]
        arrived = sum(r["arrived_count"] for r in mine)
        out[name] = {
            "loss": sum(r["shed_count"] or 0 for r in mine) / arrived if arrived else 0.0,
            "violation_mean_s": sum(r["violation_mean_s"] or 0.0 for r in mine) / max(len(mine), 1),
            "violation_max_s": max((r["violation_max_s"] or 0.0 for r in mine), default=0.0),
        }
    return out


def _executor_s(rows: list[dict[str, Any]]) -> float:
    """Executors times period length, one class's samples per job's period."""
    seen: set[tuple[int, int]] = set()
    total = 0.0
    for r in rows:
        key = (r["job"], r["seq"])
        if key not in seen and r["executors"] is not None:
            seen.add(key)
            total += r["executors"] * r["period_s"]
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="static split against the coordinator on Spark")
    parser.add_argument("--phase", type=float, default=90.0, help="seconds each load phase lasts")
    args = parser.parse_args(argv)
    results = {name: run(name, args.phase) for name in CONFIGS}
    s, c = results["static"], results["coordinated"]
    print_table(
        f"Two jobs on one standalone cluster, B loaded then A, {args.phase:g} s each",
        ["class", "target s", "static loss", "coord. loss", "static viol mean s",
         "coord. viol mean s", "static viol max s", "coord. viol max s"],
        [
            [n, TARGETS[n], s["classes"][n]["loss"], c["classes"][n]["loss"],
             s["classes"][n]["violation_mean_s"], c["classes"][n]["violation_mean_s"],
             s["classes"][n]["violation_max_s"], c["classes"][n]["violation_max_s"]]
            for n in TARGETS
        ],
    )  # fmt: skip
    print_table(
        "Per configuration",
        ["configuration", "executor-seconds", "moves"],
        [[n, r["executor_s"], r["moves"]] for n, r in results.items()],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

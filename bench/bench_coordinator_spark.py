"""Two jobs on one standalone Spark cluster: a static split against the coordinator.

    python -m bench.bench_coordinator_spark [--phase 90]

The jobs of the coordinator's Spark test (``tests/coordinated_jobs.py``): job A holds
gold (priority 6) and bronze (1), job B silver (3) and tin (2), 1 ms maps, tuples from
Redis. B is loaded for ``--phase`` seconds, then the load moves to A for as long. Each
configuration runs on a fresh cluster (a master and two workers advertising 2 cores
each: four 1-core executors on this 2-core machine), the product (API, Celery worker
with beat) on a fresh PostgreSQL database, one after the other:

- static: each job holds 2 executors, no coordinator;
- coordinated: each job 1 to 3, the coordinator dividing 4;
- moves: each job 1 to 2, the coordinator dividing 4, and B holding bronze in standby
  (on the same stream): executors cannot follow the load past 2 a job, a class can.

Over-subscribed: the machine's two cores are shared by the executors' threads, so a job
holding more executors gets a larger share of them, not more cores than exist. Per class
over both phases and both jobs: loss (shed over arrived), mean and max violation; per
configuration executor-seconds, the coordinator's reallocations and its class moves. No
oracle: the cluster oracle is the simulator's (``bench_cluster_sim``); on Spark there is
none yet.
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

CONFIGS: dict[str, tuple[tuple[int, int], int | None, str | None]] = {
    "static": ((2, 2), None, None),
    "coordinated": ((1, 3), 4, None),
    "moves": ((1, 2), 4, "bronze"),
}
"""Per configuration: each job's pool (fewest, most executors), the coordinator's
executors (None: no coordinator) and the class of A's that B holds in standby."""


def run(name: str, phase_s: float) -> dict[str, Any]:
    """One configuration: per class its totals, and the run's executor-seconds and moves."""
    pool, executors, held = CONFIGS[name]
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
        a, b = start_jobs(api, master, pool, held)
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
        handoffs = api.get("/handoffs").json()["handoffs"]
        if held:
            rows = _computed(rows, held, a, handoffs)
        for job in (a, b):
            api.post(f"/jobs/{job}/stop")
        api.close()
    return {
        "classes": _totals(rows),
        "executor_s": _executor_s(rows),
        "moves": len(moves),
        "class_moves": [
            f"{h['class_name']} {h['origin_job_id']}->{h['target_job_id']} by "
            f"{h['created_by']} at {h['requested_s'] - began:.0f} s, {h['state']}; "
            f"shed {_shed_around(rows, h)}"
            for h in handoffs
        ],
    }


def _computed(
    rows: list[dict[str, Any]], held: str, first: int, handoffs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``rows`` without those of class ``held`` from a job not computing it then: a job
    holding it in standby, or moved away from, reads its stream (counting its arrivals,
    and shedding some) and drops its tuples. It is ``first``'s until a hand-off's switch
    gives it to its target."""
    switches = sorted(
        (h["switch_s"], h["target_job_id"])
        for h in handoffs
        if h["class_name"] == held and h["state"] in ("switching", "done")
    )

    def owner(t: float) -> int:
        return next((job for at, job in reversed(switches) if t > at), first)

    return [r for r in rows if r["class_name"] != held or r["job"] == owner(r["t"])]


def _shed_around(rows: list[dict[str, Any]], handoff: dict[str, Any]) -> str:
    """What the moved class shed in each job before and after the hand-off's switch."""
    name, switch = handoff["class_name"], handoff["switch_s"]
    cells = []
    for job in (handoff["origin_job_id"], handoff["target_job_id"]):
        mine = [r for r in rows if r["class_name"] == name and r["job"] == job]
        before = sum(r["shed_count"] or 0 for r in mine if r["t"] <= switch)
        after = sum(r["shed_count"] or 0 for r in mine if r["t"] > switch)
        cells.append(f"job {job} {before}/{after}")
    return " ".join(cells) + " (before/after the switch)"


def _totals(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per class over the jobs computing it: shed over arrived, the mean of its periods'
    mean violations (periods that answered) and the worst."""
    out = {}
    for name in TARGETS:
        mine = [r for r in rows if r["class_name"] == name]
        arrived = sum(r["arrived_count"] for r in mine)
        answered = [r for r in mine if r["output_count"]]
        out[name] = {
            "loss": sum(r["shed_count"] or 0 for r in mine) / arrived if arrived else 0.0,
            "violation_mean_s": sum(r["violation_mean_s"] or 0.0 for r in answered)
            / max(len(answered), 1),
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
    parser.add_argument(
        "--only", default=",".join(CONFIGS), help=f"configurations, of {','.join(CONFIGS)}"
    )
    args = parser.parse_args(argv)
    results = {name: run(name, args.phase) for name in args.only.split(",")}
    print_table(
        f"Two jobs on one standalone cluster, B loaded then A, {args.phase:g} s each",
        ["class", "target s", "configuration", "loss", "viol mean s", "viol max s"],
        [
            [n, TARGETS[n], config, r["classes"][n]["loss"], r["classes"][n]["violation_mean_s"],
             r["classes"][n]["violation_max_s"]]
            for n in TARGETS
            for config, r in results.items()
        ],
    )  # fmt: skip
    print_table(
        "Per configuration",
        ["configuration", "executor-seconds", "reallocations", "class moves"],
        [
            [n, r["executor_s"], r["moves"], "; ".join(r["class_moves"]) or "-"]
            for n, r in results.items()
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

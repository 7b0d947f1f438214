"""Two elastic jobs on one standalone cluster, run by the product (API, Celery worker
with beat, coordinator): the scenarios, the feeder and the API reads that the
coordinator's Spark test and the Cluster page's screenshot share.

Job A holds gold (priority 6) and bronze (1), job B silver (3) and tin (2). Their tuples
come from Redis streams fed phase by phase: first B loaded and A light, then the load
moves to A. The workers advertise two cores and 2 GB each on this two-core machine
(over-subscription: the logic is what runs, not the speed), executors have one core,
and the coordinator counts :data:`EXECUTORS` of them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis

from backend.migrate import upgrade
from backend.settings import Settings
from backend.stack import Stack
from spark_runner.engine.dataflow.network import stream_specs
from spark_runner.engine.sources.redis_log import Producer
from spark_runner.scenario import load_scenario
from tests.e2e.conftest import _kill_jobs, create_admin, free_port
from tests.leftovers import kill_processes_naming

EXECUTORS = 3
"""The cluster's executors as the coordinator counts them (four cores advertised)."""
TARGETS = {"gold": 12.0, "silver": 15.0, "tin": 15.0, "bronze": 20.0}
"""Above what this set-up answers in: two drivers, four executors and the feeder on two
cores run batches of several seconds (a class's worst answer 5-10 s unloaded)."""
PREFIX = "coordinated"
JOB_A, JOB_B = {"gold": 6, "bronze": 1}, {"silver": 3, "tin": 2}
B_LOADED = {"silver": 300.0, "tin": 300.0, "gold": 30.0, "bronze": 30.0}
A_LOADED = {"silver": 30.0, "tin": 30.0, "gold": 100.0, "bronze": 400.0}
"""Tuples/s per class's stream in each phase; 1 ms of CPU each (a calibrated map)."""


def coordinator_env(master: str, executors: int | None = EXECUTORS) -> dict[str, str]:
    """The product's settings for coordinating ``master``'s ``executors`` (short holds, a
    round a second; None: no coordinator)."""
    env = {"HEADROOM_ALLOWED_SPARK_MASTERS": master, "HEADROOM_STREAMS_PREFIX": PREFIX}
    if executors is None:
        return env
    return {
        **env,
        "HEADROOM_CLUSTER_EXECUTORS": f"{master}={executors}",
        "HEADROOM_COORDINATE_INTERVAL_S": "1",
        "HEADROOM_COORDINATOR_HOLD_S": "4",
        "HEADROOM_COORDINATOR_MIN_INTERVAL_S": "10",
    }


@contextmanager
def coordinated_product(
    data_dir: Path,
    database_url: str,
    redis_url: str,
    master: str,
    *,
    dashboard: bool = False,
    executors: int | None = EXECUTORS,
) -> Iterator[Stack]:
    """The product coordinating ``master`` (:func:`coordinator_env`): API (and
    dashboard), a Celery worker with beat, an admin (``tests.e2e.conftest``'s); every job
    killed at the end."""
    env = coordinator_env(master, executors)
    settings = Settings.model_validate(
        {
            "data_dir": data_dir,
            "database_url": database_url,
            "celery_broker_url": redis_url,
            "streams_redis_url": redis_url,
            "api_port": free_port(),
            "dashboard_port": free_port(),
            "watch_interval_s": 0.5,
            **env,
        }
    )
    data_dir.mkdir()
    upgrade(settings.sqlalchemy_url)
    stack = Stack.from_settings(settings, env)
    create_admin(stack)
    stack.start_api()
    if dashboard:
        stack.start_dashboard()
    stack.start_worker()
    try:
        stack.wait_healthy()
        yield stack
    finally:
        _kill_jobs(stack)
        stack.stop()
        kill_processes_naming(data_dir)


def scenario(
    name: str, priorities: dict[str, int], rates: dict[str, float], pool: tuple[int, int] = (1, 2)
) -> str:
    """An elastic scenario: per class its priority and its stream's rate (a job reading
    Redis takes what is fed instead); each tuple costs 1 ms of CPU (a calibrated map);
    its pool holds ``pool`` executors at least and at most."""
    streams = "\n".join(
        f"  - name: {c}_in\n    arrival: {{kind: constant, rate_per_s: {rates[c]:g}}}"
        for c in priorities
    )
    members = "\n".join(
        f"  - name: {c}\n    priority: {priority}\n    delay_target_s: {TARGETS[c]:g}\n"
        f"    queries:\n      - name: q\n        source: {c}_in\n        operators:\n"
        f"          - {{kind: map, expression: 'value * 2', output: v, "
        f"cpu_cost_per_tuple_s: 0.001}}"
        for c, priority in priorities.items()
    )
    return (
        f"version: 1\nname: {name}\nseed: 5\nduration_s: 600\n"
        "control:\n  period_s: 1.0\n  mode: dilos\n"
        f"  elastic: {{params: {{min_executors: {pool[0]}, max_executors: {pool[1]}, "
        "hold_out_s: 4, hold_in_s: 8}}\n"
        f"streams:\n{streams}\nclasses:\n{members}\n"
    )


def start_jobs(
    api: httpx.Client, master: str, pool: tuple[int, int] = (1, 2), b_holds: str | None = None
) -> tuple[int, int]:
    """Jobs A and B, launched through the API on ``master``, reading Redis; ``b_holds``:
    a class of A's that B holds in standby (on the same stream), for the coordinator to
    move there."""
    ids = []
    b_classes = JOB_B | ({b_holds: JOB_A[b_holds]} if b_holds else {})
    for name, priorities, rates in (("job-a", JOB_A, A_LOADED), ("job-b", b_classes, B_LOADED)):
        yaml = scenario(name, priorities, rates, pool)
        stored = api.post("/scenarios", json={"yaml": yaml})
        assert stored.status_code == 201, stored.text
        body = {"scenario_id": stored.json()["id"], "spark_master": master, "source": "redis"}
        if name == "job-b" and b_holds:
            body["standby"] = [b_holds]
        job = api.post("/jobs", json=body)
        assert job.status_code == 201, job.text
        ids.append(int(job.json()["id"]))
    return ids[0], ids[1]


def samples(api: httpx.Client, job_id: int) -> list[dict[str, Any]]:
    return list(api.get(f"/jobs/{job_id}/metrics", params={"limit": 10_000}).json()["samples"])


@contextmanager
def feeding(redis_url: str, tmp_path: Path, rates: dict[str, float]) -> Iterator[None]:
    """Feed every class's Redis stream at ``rates`` while the block runs."""
    path = tmp_path / "feed.yaml"
    path.write_text(scenario("feed", dict.fromkeys(rates, 1), rates))
    client = redis.Redis.from_url(redis_url)
    producer = Producer(client, stream_specs(load_scenario(path, ())), PREFIX, origin_s=time.time())
    stop = threading.Event()
    feeder = threading.Thread(
        target=producer.run, args=(3600,), kwargs={"should_stop": stop.is_set}
    )
    feeder.start()
    try:
        yield
    finally:
        stop.set()
        feeder.join()
        client.close()


def allocation(api: httpx.Client) -> dict[str, int]:
    [cluster] = api.get("/clusters").json()["clusters"]
    return dict(cluster["allocation"])


def reallocations(api: httpx.Client, master: str) -> list[dict[str, Any]]:
    log = api.get("/clusters/reallocations", params={"master": master}).json()
    return list(log["reallocations"])


def move_by(api: httpx.Client, master: str, job_id: int) -> dict[str, Any] | None:
    """The newest reallocation, if the shortage of ``job_id`` made it."""
    log = reallocations(api, master)
    return log[-1] if log and log[-1]["trigger_job_id"] == job_id else None


def serving(api: httpx.Client, job_id: int, since_s: float, executors: int) -> float | None:
    """When the job first reported ``executors`` serving after ``since_s``."""
    return next(
        (s["t"] for s in samples(api, job_id) if s["t"] > since_s and s["executors"] == executors),
        None,
    )

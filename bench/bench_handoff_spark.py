"""A class moved between two running Spark jobs by the product, no state moved.

    python -m bench.bench_handoff_spark [--windows 5 10]

For each window length L, on a fresh product (API, Celery worker with beat, PostgreSQL):
job A (``local[1]``) computes gold and recs, job B (``local[1]``) holds recs in standby,
both reading the same Redis streams. recs counts clicks per key in L-second tumbling
windows and joins clicks with views within 2 s. A feeder appends 50 clicks and 50 views
a second, event time up to 0.8 s behind. Once both jobs answer, an operator's
``POST /handoffs`` moves recs from A to B; when the product calls the hand-off done, the
feeder stops, both jobs read what is left and stop.

Measured per L (window recreation, the product's way): the lead the product chose
(request to switch), the switch to A's last and B's first recs output, the switch to
*done*; the tuples both jobs read (the join's margin of views around the switch); the
state moved (none: each job gets a configuration version) and the state a transfer would
have moved instead (A's checkpoint state at the switch); recs' mean response time before,
around (switch ± L) and after the switch. Judged against the fed rows, read back from
Redis: every (window, key) count and every join pair found exactly once, by the job that
owns it. State transfer is not built on Spark (see docs/spark-runner.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import redis

from bench.common import postgres_database, print_table
from spark_runner.engine.sources.redis_log import stream_key
from spark_runner.engine.sources.replay import final_values
from tests.conftest import REDIS_URL
from tests.coordinated_jobs import PREFIX, coordinated_product, samples
from tests.e2e.conftest import api_client
from tests.spark_runner.test_handoff_spark import JOIN_S, handoff_scenario
from tests.waiting import poll_for

MASTER = "local[1]"
RATE_PER_S, KEYS, LAG_S = 50, 20, 0.8


@contextmanager
def feeding(client: redis.Redis) -> Iterator[None]:
    """Append RATE_PER_S rows a second to each stream (fields key, value, ts)."""
    stop = threading.Event()
    rng = np.random.default_rng(7)

    def feed() -> None:
        while not stop.wait(0.1):
            pipe = client.pipeline(transaction=False)
            for stream in ("clicks", "views"):
                for _ in range(RATE_PER_S // 10):
                    ts = round(time.time() - float(rng.uniform(0, LAG_S)), 3)
                    key, value = int(rng.integers(KEYS)), float(rng.random())
                    pipe.xadd(stream_key(PREFIX, stream), {"key": key, "value": value, "ts": ts})
            pipe.execute()

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        yield
    finally:
        stop.set()
        feeder.join()


def fed(client: redis.Redis, stream: str) -> list[dict[str, Any]]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(stream_key(PREFIX, stream))  # type: ignore[assignment]
    return [
        {"key": int(f[b"key"]), "value": float(f[b"value"]), "ts": float(f[b"ts"])}
        for _, f in entries
    ]


def state_bytes(checkpoint: Path) -> int:
    return sum(p.stat().st_size for p in (checkpoint / "state").rglob("*") if p.is_file())


def sink_rows(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for part in directory.glob("batch_id=*/part-*.json"):
        batch = int(part.parent.name.split("=")[1])
        rows += [{**json.loads(line), "batch_id": batch} for line in part.read_text().splitlines()]
    return [r for r in rows if r["class"] == "recs"]


def recs_batches(directory: Path) -> dict[int, float]:
    """Per batch that wrote recs rows, when its directory was written (epoch s)."""
    return {
        int(d.name.split("=")[1]): d.stat().st_mtime
        for d in directory.glob("batch_id=*")
        if any('"class":"recs"' in p.read_text() for p in d.glob("part-*.json"))
    }


def run(window_s: int, scratch: Path) -> dict[str, Any]:
    client = redis.Redis.from_url(REDIS_URL)
    client.delete(*(stream_key(PREFIX, s) for s in ("clicks", "views")))
    with (
        postgres_database() as database_url,
        coordinated_product(scratch / "data", database_url, REDIS_URL, MASTER, executors=None)
        as stack,
    ):  # fmt: skip
        api = api_client(stack)
        stored = api.post(
            "/scenarios", json={"yaml": handoff_scenario(window_s, RATE_PER_S, KEYS)}
        ).json()["id"]
        body = {"scenario_id": stored, "source": "redis", "sink": "json", "spark_master": MASTER}
        a = api.post("/jobs", json=body).json()["id"]
        b = api.post("/jobs", json={**body, "standby": ["recs"]}).json()["id"]
        if not poll_for(lambda: all(samples(api, j) for j in (a, b)), 240):
            raise RuntimeError("the jobs never both reported")
        jobs_dir = stack.settings.jobs_dir
        with feeding(client):
            time.sleep(30)
            made = api.post(
                "/handoffs", json={"class_name": "recs", "origin_job_id": a, "target_job_id": b}
            )
            made.raise_for_status()
            handoff = made.json()
            poll_for(lambda: time.time() >= handoff["switch_s"], 120)
            state = state_bytes(jobs_dir / str(a) / "checkpoint")
            ended = poll_for(lambda: _ended(api, handoff["id"]), 180)
            if ended is None or ended["state"] != "done":
                raise RuntimeError(f"the hand-off did not end done: {ended}")
            time.sleep(10)
        _drain_and_stop(api, (a, b))
        measures = _measures(api, handoff, ended, (a, b), jobs_dir, window_s)
        api.close()
    rows = {s: fed(client, s) for s in ("clicks", "views")}
    client.close()
    outputs = [sink_rows(jobs_dir / str(j) / "output") for j in (a, b)]
    return {**measures, **_judged(outputs, rows, handoff["switch_s"], window_s), "state": state}


def _ended(api: httpx.Client, handoff_id: int) -> dict[str, Any] | None:
    [row] = [h for h in api.get("/handoffs").json()["handoffs"] if h["id"] == handoff_id]
    return row if row["state"] in ("done", "failed") else None


def _drain_and_stop(api: httpx.Client, jobs: tuple[int, ...]) -> None:
    """Wait for a period in which no job took a tuple, then stop both."""
    since = time.time()
    idle = lambda: all(  # noqa: E731
        any(s["t"] > since + 2 and s["arrived_count"] == 0 for s in samples(api, j)) for j in jobs
    )
    poll_for(idle, 60)
    for job in jobs:
        api.post(f"/jobs/{job}/stop")
    stopped = lambda: all(api.get(f"/jobs/{j}").json()["status"] == "stopped" for j in jobs)  # noqa: E731
    if not poll_for(stopped, 120):
        raise RuntimeError("the jobs did not stop")


def _measures(
    api: httpx.Client,
    handoff: dict[str, Any],
    ended: dict[str, Any],
    jobs: tuple[int, int],
    jobs_dir: Path,
    window_s: int,
) -> dict[str, Any]:
    switch = handoff["switch_s"]
    last_a = max(recs_batches(jobs_dir / str(jobs[0]) / "output").values())
    first_b = min(recs_batches(jobs_dir / str(jobs[1]) / "output").values())
    response = {}
    spans = {
        "before": (switch - 60, switch - window_s),
        "around": (switch - window_s, switch + window_s),
        "after": (switch + window_s, switch + 60),
    }
    recs = [s for j in jobs for s in samples(api, j) if s["class_name"] == "recs"]
    for name, (lo, hi) in spans.items():
        chosen = [s for s in recs if lo <= s["t"] < hi and s["response_time_mean_s"] is not None]
        outputs = sum(s["output_count"] for s in chosen)
        response[name] = (
            sum(s["response_time_mean_s"] * s["output_count"] for s in chosen) / outputs
            if outputs
            else None
        )
    return {
        "lead_s": switch - handoff["requested_s"],
        "a_last_s": last_a - switch,
        "b_first_s": first_b - switch,
        "done_s": ended["ended_at_s"] - switch,
        "response": response,
    }


def _judged(
    outputs: list[list[dict[str, Any]]],
    rows: dict[str, list[dict[str, Any]]],
    switch: float,
    window_s: int,
) -> dict[str, Any]:
    """Counts and pairs of both jobs against the fed rows."""
    finals = [final_values(r for r in out if r["query"] == "counts") for out in outputs]
    expected = Counter(
        (float(np.floor(r["ts"] / window_s) * window_s), float(r["key"])) for r in rows["clicks"]
    )
    got = {(float(w), float(k)): v for f in finals for (w, k), v in f.items()}
    both = set(finals[0]) & set(finals[1])
    by_key: dict[int, list[dict[str, Any]]] = {}
    for v in rows["views"]:
        by_key.setdefault(v["key"], []).append(v)
    pairs = Counter(
        (round(c["value"], 9), round(v["value"], 9))
        for c in rows["clicks"]
        for v in by_key.get(c["key"], [])
        if abs(c["ts"] - v["ts"]) <= JOIN_S + 1e-9
    )
    joined = Counter(
        (round(r["value"], 9), round(r["value_r"], 9))
        for out in outputs
        for r in out
        if r["query"] == "pairs"
    )
    margin = sum(1 for v in rows["views"] if switch - JOIN_S <= v["ts"] < switch + JOIN_S)
    return {
        "windows": len(expected),
        "windows_missing": sum(1 for c in expected if c not in got),
        "windows_wrong": sum(1 for c, n in expected.items() if c in got and got[c] != n),
        "windows_twice": len(both),
        "pairs": sum(pairs.values()),
        "pairs_missing": sum((pairs - joined).values()),
        "pairs_extra": sum((joined - pairs).values()),
        "read_twice": margin,
        "recs_tuples": len(rows["clicks"]) + len(rows["views"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, nargs="+", default=[5, 10])
    args = parser.parse_args()
    results = {}
    for window_s in args.windows:
        with tempfile.TemporaryDirectory(prefix=f"headroom-bench-handoff-{window_s}-") as tmp:
            results[window_s] = run(window_s, Path(tmp))
    print_table(
        "Hand-off of recs from job A to job B (window recreation), times from the switch",
        ["window", "lead s", "A last s", "B first s", "done s", "read twice", "state moved",
         "state a transfer moves"],
        [[f"{w} s", r["lead_s"], r["a_last_s"], r["b_first_s"], r["done_s"],
          f"{r['read_twice']} of {r['recs_tuples']}", "0 B", f"{r['state'] / 1e6:.2f} MB"]
         for w, r in results.items()],
    )  # fmt: skip
    print_table(
        "Outputs against the fed rows",
        ["window", "windows", "missing", "wrong", "by both", "pairs", "missing", "extra"],
        [[f"{w} s", r["windows"], r["windows_missing"], r["windows_wrong"], r["windows_twice"],
          r["pairs"], r["pairs_missing"], r["pairs_extra"]] for w, r in results.items()],
    )  # fmt: skip
    print_table(
        "recs' mean response time (s), weighted by outputs",
        ["window", "before", "switch +/- window", "after"],
        [[f"{w} s", *(r["response"][k] for k in ("before", "around", "after"))]
         for w, r in results.items()],
    )  # fmt: skip


if __name__ == "__main__":
    main()

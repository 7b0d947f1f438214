"""Control-plane API benchmarks, side by side on SQLite and PostgreSQL (real processes).

1. CRUD latency at a steady 200 requests/s (open loop: each request has a scheduled send
   time; latency counts from that time, so a stalled server cannot hide its backlog).
   Mix: 60 % GET /classes, 20 % GET /classes/{id}, 10 % PATCH, 10 % POST+DELETE pairs.
2. Metric ingest: batches of 500 samples from 4 concurrent senders, samples/s stored.

    python -m bench.bench_api [--seconds 20] [--rate 200] [--ingest-samples 200000]
"""

from __future__ import annotations

import argparse
import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from backend.stack import Stack
from bench.common import login, percentile, postgres_database, print_table, running_stack

RATE_PER_S = 200


def crud_latencies(
    stack: Stack, seconds: float, rate_per_s: float = RATE_PER_S
) -> tuple[list[float], int, float]:
    """Latencies (s) from each request's scheduled time, errors, and the rate served: the
    requests over the time from the first send to the last answer (below the offered
    rate when the server falls behind)."""
    api = login(stack)
    ids = [
        api.post(
            "/classes", json={"name": f"c{i}", "priority": 1 + i % 5, "delay_target_s": 2}
        ).json()["id"]
        for i in range(20)
    ]
    headers = dict(api.headers)
    counter = itertools.count()
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    local = threading.local()
    last_answer = [0.0]

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=str(api.base_url), headers=headers, timeout=30)
        return local.client  # type: ignore[no-any-return]

    def one(scheduled: float) -> None:
        nonlocal errors
        n = next(counter)
        c = client()
        kind = n % 10
        if kind < 6:
            r = c.get("/classes")
        elif kind < 8:
            r = c.get(f"/classes/{ids[n % len(ids)]}")
        elif kind < 9:
            r = c.patch(f"/classes/{ids[n % len(ids)]}", json={"delay_target_s": 1 + n % 7})
        else:
            r = c.post("/classes", json={"name": f"t{n}", "priority": 1, "delay_target_s": 1})
            if r.status_code == 201:
                r = c.delete(f"/classes/{r.json()['id']}")
        answered = time.perf_counter()
        with lock:
            latencies.append(answered - scheduled)
            last_answer[0] = max(last_answer[0], answered)
            errors += r.status_code >= 400

    total = int(seconds * rate_per_s)
    start = time.perf_counter() + 0.5
    with ThreadPoolExecutor(max_workers=64) as pool:
        for i in range(total):
            scheduled = start + i / rate_per_s
            delay = scheduled - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(one, scheduled)
    return latencies, errors, total / (last_answer[0] - start)


def ingest_rate(stack: Stack, total_samples: int) -> float:
    api = login(stack)
    api.post("/classes", json={"name": "a", "priority": 1, "delay_target_s": 2})
    job_id = api.post("/jobs", json={}).json()["id"]
    # The bench plays the job: give it an ingest token the way the launch task does.
    from backend.db import make_engine, make_session_factory, session_scope
    from backend.jobs.models import Job
    from backend.users.security import new_token, token_digest

    token = new_token()
    factory = make_session_factory(make_engine(stack.settings.sqlalchemy_url))
    with session_scope(factory) as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.ingest_token_digest = token_digest(token)
    batch_size, senders = 500, 4
    seqs = iter(range(total_samples))
    t0 = time.time()  # the API refuses a sample before its job's creation or ahead of its clock
    lock = threading.Lock()

    def sender() -> None:
        with httpx.Client(
            base_url=str(api.base_url), timeout=60, headers={"Authorization": f"Bearer {token}"}
        ) as c:
            while True:
                with lock:
                    chunk = list(itertools.islice(seqs, batch_size))
                if not chunk:
                    return
                body = {
                    "samples": [
                        {
                            "class_name": "a",
                            "seq": s,
                            "t": t0 + s * 1e-5,
                            "period_s": 1.0,
                            "arrived_count": 100,
                            "output_count": 50,
                            "arrival_rate": 100.0,
                            "response_time_mean_s": 0.2,
                            "response_time_max_s": 0.4,
                            "shed_fraction": 0.1,
                            "headroom": 0.8,
                            "manager_state": "normal",
                        }
                        for s in chunk
                    ]
                }
                c.post(f"/jobs/{job_id}/metrics", json=body).raise_for_status()

    started = time.perf_counter()
    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    stored = len(api.get(f"/jobs/{job_id}/metrics", params={"limit": 100_000}).json()["samples"])
    assert stored == min(total_samples, 100_000), stored
    return total_samples / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=float, default=RATE_PER_S, help="CRUD requests/s offered")
    parser.add_argument("--ingest-samples", type=int, default=100_000)
    args = parser.parse_args()
    crud_rows, ingest_rows = [], []
    with postgres_database() as pg_url:
        for label, url in (("sqlite", None), ("postgresql", pg_url)):
            with running_stack(url) as stack:
                print(f"{label}: CRUD at {args.rate:g}/s for {args.seconds:.0f} s ...", flush=True)
                latencies, errors, served = crud_latencies(stack, args.seconds, args.rate)
                print(f"{label}: ingesting {args.ingest_samples} samples ...", flush=True)
                rate = ingest_rate(stack, args.ingest_samples)
            ms = [v * 1000 for v in latencies]
            crud_rows.append(
                [
                    label,
                    len(ms),
                    errors,
                    served,
                    percentile(ms, 0.5),
                    percentile(ms, 0.95),
                    percentile(ms, 0.99),
                    max(ms),
                ]
            )
            ingest_rows.append([label, args.ingest_samples, rate])
    print_table(
        f"CRUD at {args.rate:g} requests/s for {args.seconds:.0f} s (latency ms)",
        ["database", "requests", "errors", "served/s", "p50", "p95", "p99", "max"],
        crud_rows,
    )
    print_table(
        "Metric ingest (batches of 500, 4 senders)",
        ["database", "samples", "samples/s"],
        ingest_rows,
    )
    sqlite_rate, pg_rate = ingest_rows[0][2], ingest_rows[1][2]
    print(f"\nratio postgresql/sqlite ingest: {pg_rate / sqlite_rate:.2f}")


if __name__ == "__main__":
    main()

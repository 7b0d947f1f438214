"""Live tuning latency: PATCH of a running job's configuration → the job applied it.

A real stack (API, Celery worker, a real Spark job) on SQLite and on PostgreSQL, side by
side. Each round PATCHes one class's delay target and waits until the job acknowledges
the new version; the latency is ``applied_at − created_at`` of that version (both taken
by the API, so no client clock is involved).

    python -m bench.bench_tuning [--rounds 30]
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

import httpx

from backend.stack import Stack
from bench.common import login, percentile, postgres_database, print_table, running_stack


def wait(predicate, timeout_s: float, interval_s: float = 0.02) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return False


def tuning_latencies(stack: Stack, rounds: int) -> list[float]:
    api = login(stack)
    api.post("/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2})
    api.post("/classes", json={"name": "ads", "priority": 1, "delay_target_s": 4})
    job_id = api.post("/jobs", json={"rate_per_s": 100}).json()["id"]

    def config() -> dict:  # type: ignore[type-arg]
        return api.get(f"/jobs/{job_id}/config").json()  # type: ignore[no-any-return]

    if not wait(lambda: config()["applied_version"] is not None, 120, 0.5):
        raise SystemExit(f"job {job_id} never acknowledged its launch configuration")
    latencies = []
    try:
        for n in range(rounds):
            target = 4.0 + (n % 5) * 0.5 + 0.1
            patched = api.patch(
                f"/jobs/{job_id}/config", json={"classes": {"ads": {"delay_target_s": target}}}
            )
            patched.raise_for_status()
            version = patched.json()["latest_version"]
            if not wait(lambda v=version: (config()["applied_version"] or -1) >= v, 30):
                raise SystemExit(f"version {version} was not applied within 30 s")
            record = next(v for v in config()["versions"] if v["version"] == version)
            created = datetime.fromisoformat(record["created_at"])
            applied = datetime.fromisoformat(record["applied_at"])
            latencies.append((applied - created).total_seconds())
    finally:
        api.post(f"/jobs/{job_id}/stop")
        wait(lambda: api.get(f"/jobs/{job_id}").json()["status"] in ("stopped", "failed"), 60)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    rows = []
    with postgres_database() as pg_url:
        for label, url in (("sqlite", None), ("postgresql", pg_url)):
            with running_stack(url, worker=True) as stack:
                ms = [s * 1000 for s in tuning_latencies(stack, args.rounds)]
            rows.append([label, len(ms), percentile(ms, 0.5), percentile(ms, 0.95), max(ms)])
    print_table(
        "PATCH → applied by the running job (ms)",
        ["database", "changes", "p50", "p95", "max"],
        rows,
    )


if __name__ == "__main__":
    try:
        main()
    except httpx.HTTPError as error:
        raise SystemExit(f"API error: {error}") from error

"""Live tuning latency: PATCH of a running job's configuration → the job applied it.

A real stack (API, Celery worker, a real Spark job) on SQLite and on PostgreSQL, side by
side. Each round PATCHes one class's delay target and waits until the job acknowledges
the new version. Two latencies per version, each from its ``created_at`` (the API's
clock; the job runs on the same host):

- applied: until ``applied_at``, the job's acknowledgement. The job puts a version in
  force as soon as it arrives (between two control steps), so this is delivery — the
  long poll wakes on the commit — plus the acknowledgement's round trip.
- decided: until the job's first metric sample whose ``config_version`` is the new one,
  i.e. its first decision made with it. Decisions are taken once per control period, at
  the end of a micro-batch, so this adds the wait for the next step: up to a period.

That wait depends on where in the period the PATCH lands. An operator's changes land at
random phases; a client that PATCHes the instant the previous change is acknowledged
lands at one fixed phase every time. Each round therefore first waits a random fraction
of a period. Rounds start once the job reports metrics (its Spark query runs): before
that the first batches, with JIT and Python worker start-up, take seconds.

    python -m bench.bench_tuning [--rounds 40] [--period 1.0 0.5]
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from datetime import datetime

import httpx

from backend.stack import Stack
from bench.common import login, percentile, postgres_database, print_table, running_stack


def wait(predicate, timeout_s: float, interval_s: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return False


@dataclass
class Latencies:
    applied: list[float]  # PATCH stored → the job acknowledged it in force, s
    decided: list[float]  # PATCH stored → the job's first decision made with it, s


def tuning_latencies(stack: Stack, rounds: int, period_s: float, seed: int) -> Latencies:
    api = login(stack)
    existing = {c["name"] for c in api.get("/classes").json()}
    for name, priority, target_s in (("fraud", 6, 2), ("ads", 1, 4)):
        if name not in existing:  # a second period on the same stack reuses them
            api.post(
                "/classes", json={"name": name, "priority": priority, "delay_target_s": target_s}
            )
    job_id = api.post("/jobs", json={"rate_per_s": 100, "control_period_s": period_s}).json()["id"]
    phase = random.Random(seed)

    def config() -> dict:  # type: ignore[type-arg]
        return api.get(f"/jobs/{job_id}/config").json()  # type: ignore[no-any-return]

    def ads_samples() -> list[dict]:  # type: ignore[type-arg]
        window: dict[str, str | int] = {"class_name": "ads", "last_s": 3600, "limit": 100_000}
        samples = api.get(f"/jobs/{job_id}/metrics", params=window).json()["samples"]
        return samples  # type: ignore[no-any-return]

    if not wait(lambda: config()["applied_version"] is not None and ads_samples(), 180, 0.5):
        raise SystemExit(f"job {job_id} never acknowledged its launch configuration")
    try:
        for n in range(rounds):
            time.sleep(phase.uniform(0, period_s))
            target = 4.0 + (n % 5) * 0.5 + 0.1
            patched = api.patch(
                f"/jobs/{job_id}/config", json={"classes": {"ads": {"delay_target_s": target}}}
            )
            patched.raise_for_status()
            version = patched.json()["latest_version"]
            if not wait(lambda v=version: (config()["applied_version"] or -1) >= v, 30):
                raise SystemExit(f"version {version} was not applied within 30 s")
        # The last version's first decision comes at the next step; its sample, shortly after.
        if not wait(lambda: any(s["config_version"] == version for s in ads_samples()), 60, 0.5):
            raise SystemExit(f"no decision was reported with version {version}")
    finally:
        api.post(f"/jobs/{job_id}/stop")
        wait(lambda: api.get(f"/jobs/{job_id}").json()["status"] in ("stopped", "failed"), 60)
    # Every sample is stored once the job stopped; each carries the version its step used.
    samples = ads_samples()
    result = Latencies([], [])
    for record in config()["versions"][1:]:
        created = datetime.fromisoformat(record["created_at"]).timestamp()
        applied = datetime.fromisoformat(record["applied_at"]).timestamp()
        first = next(s["t"] for s in samples if (s["config_version"] or 0) >= record["version"])
        result.applied.append(applied - created)
        result.decided.append(first - created)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument(
        "--period", type=float, nargs="+", default=[1.0, 0.5], help="control periods, s"
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = []
    with postgres_database() as pg_url:
        for label, url in (("sqlite", None), ("postgresql", pg_url)):
            with running_stack(url, worker=True) as stack:
                for period_s in args.period:
                    got = tuning_latencies(stack, args.rounds, period_s, args.seed)
                    for what, seconds in (("applied", got.applied), ("decided", got.decided)):
                        ms = [x * 1000 for x in seconds]
                        p95 = percentile(ms, 0.95)
                        rows.append(
                            [label, period_s, what, len(ms), percentile(ms, 0.5), p95, max(ms),
                             p95 / (period_s * 1000)]
                        )  # fmt: skip
    print_table(
        "PATCH → the running job (ms), PATCHes at random phases. applied: the job acknowledged "
        "the version in force; decided: its first decision made with it",
        ["database", "period s", "until", "changes", "p50", "p95", "max", "p95 / period"],
        rows,
    )


if __name__ == "__main__":
    try:
        main()
    except httpx.HTTPError as error:
        raise SystemExit(f"API error: {error}") from error

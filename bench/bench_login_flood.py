"""A flood of wrong logins against one API process on SQLite: what it does to writes.

Before the login was reworked, each login hashed its password (scrypt, ~50-100 ms of
CPU) while holding SQLite's write gate, so a flood of wrong passwords queued every write
behind it (ingest latency 27 ms → 1.9 s in the probe). Now the hash runs outside the
gate, at most ``HEADROOM_LOGIN_HASH_CONCURRENCY`` at once, and the throttle answers 429
without hashing once a username or a client has failed too often.

Side by side in one run, each on a fresh API process on a SQLite file: the write latency
(``PATCH /classes/{id}``, one every 50 ms) alone and while 16 threads send wrong
passwords, with the throttle at its defaults and with it off (limits of 10⁶, so every
login hashes: the worst case for the write path).

    python -m bench.bench_login_flood [--writes 40] [--flooders 16]
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Mapping

import httpx

from bench.common import ADMIN, login, percentile, print_table, running_stack

UNTHROTTLED = {
    "HEADROOM_LOGIN_FAILURES_PER_USER": "1000000",
    "HEADROOM_LOGIN_FAILURES_PER_CLIENT": "1000000",
}


def write_latencies_ms(api: httpx.Client, class_id: int, count: int) -> list[float]:
    out: list[float] = []
    for i in range(count):
        started = time.perf_counter()
        response = api.patch(f"/classes/{class_id}", json={"priority": 1 + i % 5})
        out.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        time.sleep(0.05)
    return out


def measure(env: Mapping[str, str], writes: int, flooders: int) -> list[object]:
    with running_stack(None, extra_env=env) as stack:
        api = login(stack)
        created = api.post("/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2})
        class_id = int(created.json()["id"])
        quiet = write_latencies_ms(api, class_id, writes)
        stop = threading.Event()
        answers: dict[int, int] = {}
        lock = threading.Lock()

        def flood() -> None:
            with httpx.Client(base_url=str(api.base_url), timeout=60) as client:
                while not stop.is_set():
                    status = client.post(
                        "/auth/login", json={"username": ADMIN, "password": "wrong-password"}
                    ).status_code
                    with lock:
                        answers[status] = answers.get(status, 0) + 1

        threads = [threading.Thread(target=flood) for _ in range(flooders)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        busy = write_latencies_ms(api, class_id, writes)
        stop.set()
        for thread in threads:
            thread.join()
    return [
        percentile(quiet, 0.5),
        percentile(busy, 0.5),
        percentile(busy, 0.95),
        max(busy),
        percentile(busy, 0.5) / percentile(quiet, 0.5),
        answers.get(401, 0),
        answers.get(429, 0),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=40, help="writes measured per phase")
    parser.add_argument("--flooders", type=int, default=16, help="threads sending wrong logins")
    args = parser.parse_args()
    rows = []
    for label, env in (("defaults", {}), ("off (every login hashes)", UNTHROTTLED)):
        print(f"throttle {label} ...", flush=True)
        rows.append([label, *measure(env, args.writes, args.flooders)])
    print_table(
        f"PATCH /classes/{{id}} on SQLite, alone and during {args.flooders} login flooders (ms)",
        [
            "throttle",
            "alone p50",
            "flood p50",
            "flood p95",
            "flood max",
            "p50 ratio",
            "logins 401",
            "logins 429",
        ],
        rows,
    )


if __name__ == "__main__":
    main()

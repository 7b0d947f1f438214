"""The tuning review's predictions against what the changes then did, on Spark.

    python -m bench.bench_whatif_spark [--scenario scenarios/trades.yaml] [--rate R]
        [--warmup 120] [--settle 15] [--change classes.ads.delay_target_s=1 ...]

Starts the product (API and Celery worker, SQLite and the file-system broker in a
temporary directory, ``local[2]``) and launches one job of the scenario (its constant
streams at ``--rate`` tuples/s, if given). After ``--warmup`` seconds, for each
``--change`` in turn, it previews the change (the job's last minutes, at most 120 s,
replayed through the simulator; the API keeps the prediction), stores it exactly as
previewed and lets the job run it as long as the preview replayed and ``--settle``
seconds more (the API checks a prediction once the job has run the version that long).
Then it previews each change undone, which checks the last one, and prints per change
and class the predicted and measured mean violation and loss (from the API's store) and
each kind's track record, as the review shows it. One Spark job; run nothing else on the machine.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from backend.jobs import launcher
from bench.common import login, running_stack
from headroom.api_cli import nested_change, parse_change
from spark_runner.control.report import render_table
from spark_runner.sim.whatif import REPLAY_MAX_S

DEFAULT_CHANGES = (
    "classes.fraud.delay_target_s=0.8",
    "classes.ads.priority=9",
    "policy=relative",
)


def _launch(api: httpx.Client, scenario: Path, rate: float | None, duration_s: float) -> int:
    doc = yaml.safe_load(scenario.read_text())
    for stream in doc["streams"]:
        if rate is not None and stream["arrival"].get("kind") == "constant":
            stream["arrival"]["rate_per_s"] = rate
    stored = api.post("/scenarios", json={"yaml": yaml.safe_dump(doc)})
    stored.raise_for_status()
    job = api.post("/jobs", json={"scenario_id": stored.json()["id"], "duration_s": duration_s})
    job.raise_for_status()
    return int(job.json()["id"])


def _preview(api: httpx.Client, job_id: int, body: dict[str, Any]) -> dict[str, Any]:
    answer = api.post(f"/jobs/{job_id}/config/preview", json=body)
    answer.raise_for_status()
    return dict(answer.json())


def _predictions(database: str) -> list[sqlite3.Row]:
    with sqlite3.connect(database) as db:
        db.row_factory = sqlite3.Row
        return db.execute(
            "SELECT * FROM whatif_predictions WHERE version IS NOT NULL ORDER BY id"
        ).fetchall()


def run(args: argparse.Namespace) -> int:
    changes = args.change or list(DEFAULT_CHANGES)
    env = {"HEADROOM_SPARK_MASTER": "local[2]"}
    with running_stack(None, worker=True, extra_env=env) as stack:
        api = login(stack)
        api.timeout = httpx.Timeout(120)
        job_id = 0
        try:
            duration = args.warmup + (len(changes) + 1) * (REPLAY_MAX_S + args.settle + 15)
            job_id = _launch(api, Path(args.scenario), args.rate, duration)
            time.sleep(args.warmup)
            for assignment in changes:
                body = parse_change([assignment])
                preview = _preview(api, job_id, body)
                api.patch(f"/jobs/{job_id}/config", json=body).raise_for_status()
                print(f"{time.strftime('%H:%M:%S')} stored {assignment}", flush=True)
                time.sleep(preview["window_s"] + args.settle)
            # a preview of each kind once more (the change undone: the same one would
            # change nothing) checks the last change and reads each kind's track record
            versions = api.get(f"/jobs/{job_id}/config").json()["versions"][1:]
            undo = [nested_change({c["path"]: c["old"] for c in v["changes"]}) for v in versions]
            records = {str(p["kind"]): p for p in (_preview(api, job_id, b) for b in undo)}
            rows = _predictions(stack.settings.sqlalchemy_url.removeprefix("sqlite:///"))
        finally:
            job = api.get(f"/jobs/{job_id}").json() if job_id else {}
            if job.get("pid"):
                launcher.kill_group(job["pid"])
            api.close()
    _report(rows, records)
    return 0


def _report(rows: list[sqlite3.Row], records: dict[str, dict[str, Any]]) -> None:
    table = []
    for row in rows:
        predicted, errors = json.loads(row["predicted"]), json.loads(row["errors"] or "{}")
        for name, guess in predicted.items():
            error = errors.get(name, {})
            table.append(
                [
                    f"v{row['version']}",
                    row["kind"],
                    name,
                    _fmt(guess["mean_violation_s"]),
                    _fmt(_minus(guess["mean_violation_s"], error.get("violation_s"))),
                    _pct(guess["loss_fraction"]),
                    _pct(_minus(guess["loss_fraction"], error.get("loss"))),
                    "checked" if row["checked_at"] else "not checked",
                ]
            )
    heads = ["version", "kind", "class", "violation predicted s", "measured s"]
    print(render_table([*heads, "loss predicted", "measured", ""], table))
    print()
    for kind, preview in records.items():
        print(f"{kind}: track record {preview['track_record']}")


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="scenarios/trades.yaml")
    parser.add_argument(
        "--rate", type=float, default=None, help="tuples/s of every constant stream [its own]"
    )
    parser.add_argument("--warmup", type=float, default=120.0, help="s before the first change")
    parser.add_argument(
        "--settle", type=float, default=15.0, help="s a change runs beyond its preview's window"
    )
    parser.add_argument("--change", action="append", help="path=value; repeat [3 kinds]")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

"""A job on a real standalone cluster (a master and two 1-core workers started by the
test): ``headroom run`` of an elastic scenario, with a window aggregate and the Parquet
sink, grows its pool under a sustained overload, keeps it while u sits between τ0 and
τ3, and releases it under a sustained low load, through Spark's executor allocation API
(the query never restarts). A timing property: never rerun."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spark_runner.control.results import scaling_actions
from spark_runner.engine.cluster import StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.timing, pytest.mark.timeout(480)]

ROOT = Path(__file__).resolve().parents[2]
TAU0, TAU3 = 0.35, 0.95
# τ0 0.35, not 0.2: after the load falls u reads well under 0.35 on two executors only
# once a window query's fixed CPU per batch is learnt apart from its per-tuple cost
# (docs/spark-runner.md, "Elastic capacity").
# The overload (50 + 300 tuples/s) reads u near 2 on one executor and under 1 on two:
# the executor added must cover it, on a slower machine too, or gold answers at its
# target to the end and sheds. Gold's rate stays low: its two queries cost twice
# bronze's one per tuple, and a higher gold rate puts its own load above its share of
# one executor before the added executor serves.
# The overload lasts 90 s: on a slow machine the first batches on a new cluster take
# tens of seconds, and the added executor must still serve several periods before the
# load falls.
# The window query's CPU per batch is printed, not asserted: one contended batch can
# make the fit's intercept negative, and it then stays 0.
# Between the overload and the low load, 35 + 240 tuples/s reads u between τ0 and τ3 on
# two executors with a margin on both sides: a lower load fell below τ0 and released the
# executor early, a higher one read near τ3.
HIGH_UNTIL_S = 150.0
MIDDLE_UNTIL_S = 170.0

SCENARIO = """
version: 1
name: elastic-step
seed: 3
duration_s: 195
control:
  period_s: 1.0
  mode: dilos
  elastic: {params: {min_executors: 1, max_executors: 2, hold_out_s: 5, hold_in_s: 6}}
streams:
  - name: a
    arrival: {kind: step, steps: [{at_s: 0, rate_per_s: 40}, {at_s: 60, rate_per_s: 50},
                                  {at_s: 150, rate_per_s: 35}, {at_s: 170, rate_per_s: 20}]}
  - name: b
    arrival: {kind: step, steps: [{at_s: 0, rate_per_s: 40}, {at_s: 60, rate_per_s: 300},
                                  {at_s: 150, rate_per_s: 240}, {at_s: 170, rate_per_s: 20}]}
classes:
  - name: gold
    priority: 6
    delay_target_s: 6
    thresholds: {tau0: 0.35, tau1: 0.5}
    queries:
      - name: q
        source: a
        operators:
          - {kind: map, expression: "value * 2", output: v, cpu_cost_per_tuple_s: 0.001}
      - name: w
        source: a
        operators:
          - {kind: window_aggregate, window: {type: tumbling, size_s: 2}, function: avg}
  - name: bronze
    priority: 1
    delay_target_s: 8
    thresholds: {tau0: 0.35, tau1: 0.5}
    queries:
      - name: q
        source: b
        operators:
          - {kind: map, expression: "value * 2", output: v, cpu_cost_per_tuple_s: 0.001}
"""


def run_elastic(tmp_path: Path) -> tuple[dict[str, Any], str]:
    scenario = tmp_path / "elastic.yaml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "results.json"
    with StandaloneCluster(tmp_path / "cluster", workers=2, cores=1) as cluster:
        result = subprocess.run(
            [
                sys.executable, "-m", "headroom", "run", str(scenario),
                "--master", cluster.master_url, "--master-ui", cluster.ui_url,
                "--out", str(out), "--warmup", "12", "--log-level", "INFO",
                "--sink", "parquet", "--sink-path", str(tmp_path / "sink"),
            ],
            cwd=ROOT, capture_output=True, text=True, timeout=420, check=False,
        )  # fmt: skip
        worker_logs = " ".join(
            p.read_text(errors="replace") for p in (tmp_path / "cluster").glob("worker*.log")
        )
    (tmp_path / "run.log").write_text(result.stderr)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Asked to launch executor" in worker_logs
    results = json.loads(out.read_text())
    assert results["engine"]["master"] == cluster.master_url
    assert "gold" in result.stdout and "s  scale_out: u " in result.stdout  # table, resizes
    assert list((tmp_path / "sink").glob("batch_id=*/*.parquet"))  # windows' rows too
    return results, result.stderr


def period_row(entry: dict[str, Any]) -> str:
    """One period of the series for a failure's report: time, pool, u, and per class its
    worst answer, mean violation and shed fraction."""
    classes = entry["classes"]
    cells = " ".join(
        f"{n} {c['max_response_time_s'] or 0.0:.1f}/{c['violation_mean_s'] or 0.0:.2f}"
        f"/{c.get('shed_fraction') or 0.0:.2f}"
        for n, c in classes.items()
    )
    return f"{entry['t_s']:6.1f} s  x{entry['executors']}  u {entry['usage'] or 0.0:.2f}  {cells}"


def failure_report(results: dict[str, Any]) -> str:
    """What a failure shows, short enough for a CI excerpt (a whole series was cut
    there): the resizes, the losses, and the first 24 periods in which gold answered past
    its target or a class shed."""
    actions = [(a["kind"], round(a["at_s"], 1)) for a in scaling_actions(results)]
    losses = {n: round(c["loss_fraction"], 4) for n, c in results["classes"].items()}
    series = results["series"]
    eventful = [
        e
        for e in series
        if (e["classes"]["gold"]["max_response_time_s"] or 0.0) > 6.0
        or any((c.get("shed_fraction") or 0.0) > 0.0 for c in e["classes"].values())
    ]
    rows = [period_row(e) for e in eventful[:24]]
    return "\n".join([f"resizes {actions}, loss {losses}", *rows])


def test_a_sustained_overload_adds_an_executor_and_a_low_load_releases_it(
    tmp_path: Path,
) -> None:
    results, log = run_elastic(tmp_path)
    series = results["series"]
    rules = [
        (a["kind"], a["executors_before"], a["executors_after"]) for a in scaling_actions(results)
    ]
    report = failure_report(results)
    assert rules == [("scale_out", 1, 2), ("scale_in", 2, 1)], report
    out_at, in_at = (a["at_s"] for a in scaling_actions(results))
    grown = [e for e in series if out_at < e["t_s"] < in_at and e["executors"] == 2]
    assert grown, report  # the new executor served before the pool shrank
    # on two executors every class is back within its target by the overload's end
    settled = [e for e in grown if e["t_s"] <= HIGH_UNTIL_S][-5:]
    for name, target_s in (("gold", 6.0), ("bronze", 8.0)):
        late = [e["classes"][name]["violation_mean_s"] for e in settled]
        worst = [e["classes"][name]["max_response_time_s"] for e in settled]
        print(f"{name}: worst response in the last periods of the overload {worst}")
        assert sum(late) / len(late) <= 0.05 * target_s, (name, late, worst, report)
    # between τ0 and τ3 on two executors, nothing changes: the pool shrinks only after the
    # load falls below τ0
    middle = [e["usage"] for e in grown if HIGH_UNTIL_S + 5 <= e["t_s"] <= MIDDLE_UNTIL_S]
    assert middle and TAU0 < sorted(middle)[len(middle) // 2] < TAU3, (middle, report)
    assert in_at > MIDDLE_UNTIL_S, (middle, report)
    # the first batches on a new executor are slow (its JVM and Python workers start):
    # gold, whose target they pass, may shed a few tuples then (15 of 6,500 seen)
    losses = {n: results["classes"][n]["loss_fraction"] for n in ("gold", "bronze")}
    assert losses["gold"] <= min(0.01, losses["bronze"]), (losses, report)
    assert series[-1]["executors"] == 1, report
    fixed = results["engine"]["branch_fixed_cpu_s"]
    crossed = next(e["t_s"] for e in series if (e["usage"] or 0.0) >= TAU3)
    print(f"tau3 crossed at {crossed:.1f} s, new executor serving at {grown[0]['t_s']:.1f} s")
    print(f"fixed CPU per batch learnt: {fixed}")
    assert "scale_out" in log and "scale_in" in log

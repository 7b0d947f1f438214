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

from spark_runner.engine.cluster import StandaloneCluster
from spark_runner.sim.results import scaling_actions

pytestmark = [pytest.mark.spark, pytest.mark.timing, pytest.mark.timeout(480)]

ROOT = Path(__file__).resolve().parents[2]
TAU0, TAU3 = 0.35, 0.95
# τ0 0.35, not 0.2: after the load falls u reads 0.13-0.19 on two executors (a busy
# machine reads more), and a window query's fixed CPU per batch is not all learnt apart
# from its per-tuple cost by then (docs/spark-runner.md, Elastic capacity)
# The overload (50 + 300 tuples/s) must be one the executor added covers: at 50 + 350,
# which read u ≈ 1.9-2.4 on one executor and about 1.0 on two here, CI's slower machine
# read 1.26-1.28 on two, gold answered at its 6 s target through the overload's last
# periods and lost 1.6 % (2026-12-02). Gold's two queries cost twice bronze's one per
# tuple, 5-12 ms as measured (more on a busy machine): at 100 + 250 (the same u) gold's
# own load read 1.0-1.3 s/s in slow runs, above its 0.86 share of one executor, and it
# shed 2.1-2.7 % before the added executor served (CI, 2026-11-27); at 50 t/s it reads
# 0.25-0.63 s/s. At 100 + 350, two executors still read u ≈ 1.1 and bronze's answers at
# the maximum pool depended on how busy the machine was (in one CI run they passed its
# target by 10 s through the overload's last periods).
# The overload lasts 90 s: on a slow machine the first measured period came at 82 s (the
# first batches on the new cluster took 44 s) and the added executor served from 125 s;
# with 70 s of overload only one period on two executors was left before the load fell,
# still draining the backlog of one.
# The window query's CPU per batch (about 0.08 s) is printed, not asserted: learnt from
# a large first batch after the warm-up when one came, it ended at 0 in a CI run; with a
# 20 -> 50 step at the overload's start the first contended batch (0.43 s against 0.08 at
# 2.5x the work) made the fit's intercept negative and it stayed 0 (one of four runs);
# with that step at 40 s, before the overload, gold lost 1.09 % on one executor in the
# suite (docs/spark-runner.md, Measured costs: a step with contention).
# Between the overload and the low load, 35 + 240 tuples/s (the load of 70 + 170, which
# read u 0.72-0.8 on two executors): at 60 + 140, two executors read u 0.5-0.64 in two
# runs and 0.33-0.37 in a third (its overload read 0.53-0.6 on two executors, against
# 0.91-0.99), which fell below τ0 and released the executor early; at 80 + 180 they read
# 0.73-0.87 in two runs, near τ3.
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

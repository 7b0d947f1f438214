"""``headroom simulate``: table, results file, plot, and errors that name the YAML path."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import yaml
from typer.testing import CliRunner

from headroom.cli import app

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scenarios" / "demo.yaml"


def test_simulate_prints_the_table_and_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["simulate", str(DEMO), "--out", str(out), "--set", "duration_s=3"]
    )
    assert result.exit_code == 0, result.output
    assert "scenario demo (format v1), mode dilos, 3 s simulated" in result.output
    for header in ("rt mean s", "rt p95 s", "viol mean s", "loss %", "shed %", "oracle %"):
        assert header in result.output
    assert {"gold", "silver", "bronze"} <= {
        line.split()[0] for line in result.output.splitlines() if line
    }
    doc = json.loads(out.read_text())
    assert doc["format"] == "headroom-sim-results"
    assert set(doc["classes"]) == {"gold", "silver", "bronze"}
    assert len(doc["series"]) == 20


def test_simulate_plots(tmp_path: Path) -> None:
    png = tmp_path / "r.png"
    result = CliRunner().invoke(
        app, ["simulate", str(DEMO), "--plot", str(png), "--set", "duration_s=2"]
    )
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_invalid_scenario_exits_2_naming_the_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        DEMO.read_text().replace(
            "window: {type: sliding, size_s: 10, slide_s: 1}",
            "window: {type: sliding, size_s: -10, slide_s: 1}",
        )
    )
    result = CliRunner().invoke(app, ["simulate", str(bad)])
    assert result.exit_code == 2
    assert (
        "classes[1].queries[0].operators[1].window.size_s: must be >= 0.001, got -10"
        in result.output
    )


def test_bad_override_exits_2() -> None:
    result = CliRunner().invoke(app, ["simulate", str(DEMO), "--set", "control.mode=sometimes"])
    assert result.exit_code == 2
    assert "control.mode: must be one of" in result.output


def _job_yaml(
    path: Path, name: str, classes: Mapping[str, tuple[int, float, float]], max_executors: int = 3
) -> Path:
    """An elastic job of 60 s whose classes (priority, base rate, rate from 20 to 40 s)
    read their own streams through three 1 ms operators."""
    project = {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": 0.001}}
    doc = {
        "version": 1,
        "name": name,
        "seed": 3,
        "duration_s": 60,
        "control": {"period_s": 0.5, "elastic": {"params": {"max_executors": max_executors}}},
        "engine": {"batch_overhead_s": 0.0001, "source_cost_per_tuple_s": 0.0},
        "streams": [
            {"name": c, "arrival": {"kind": "step", "steps": [
                {"at_s": 0, "rate_per_s": base}, {"at_s": 20, "rate_per_s": burst},
                {"at_s": 40, "rate_per_s": base}]}}
            for c, (_, base, burst) in classes.items()
        ],
        "classes": [
            {"name": c, "priority": p, "delay_target_s": 2.0,
             "queries": [{"name": "q", "source": c, "operators": [project] * 3}]}
            for c, (p, _, _) in classes.items()
        ],
    }  # fmt: skip
    path.write_text(yaml.safe_dump(doc))
    return path


def test_simulate_cluster_prints_each_job_the_cluster_oracle_and_the_moves(tmp_path: Path) -> None:
    fraud = _job_yaml(
        tmp_path / "f.yaml", "fraud", {"gold": (6, 150, 800), "bronze": (1, 150, 150)}
    )
    ads = _job_yaml(tmp_path / "a.yaml", "ads", {"silver": (3, 267, 267), "tin": (2, 267, 267)})
    result = CliRunner().invoke(app, ["simulate-cluster", str(fraud), str(ads), "--executors", "4"])
    assert result.exit_code == 0, result.output
    assert "scenario fraud (format v1)" in result.output
    assert "scenario ads (format v1)" in result.output
    assert "cluster oracle %" in result.output and "fraud/gold" in result.output
    assert "jobs started: {} -> {'fraud': 2, 'ads': 2}" in result.output
    assert "fraud: {'fraud': 2, 'ads': 2} -> {'fraud': 3, 'ads': 1}" in result.output
    static = CliRunner().invoke(
        app, ["simulate-cluster", str(fraud), str(ads), "--executors", "4", "--static"]
    )
    assert static.exit_code == 0, static.output
    assert "jobs started" not in static.output


def test_simulate_cluster_moves_a_class_to_the_job_holding_it_ready(tmp_path: Path) -> None:
    gold, bronze = (6, 150, 533), (1, 150, 150)
    fraud = _job_yaml(tmp_path / "f.yaml", "fraud", {"gold": gold, "bronze": bronze}, 2)
    light = {"silver": (3, 67, 67), "tin": (2, 67, 67), "bronze": bronze}
    ads = _job_yaml(tmp_path / "a.yaml", "ads", light, 2)
    jobs = ["simulate-cluster", str(fraud), str(ads), "--executors", "4"]
    result = CliRunner().invoke(app, [*jobs, "--standby", "ads/bronze"])
    assert result.exit_code == 0, result.output
    assert "bronze moves from fraud (u 1." in result.output
    bad = CliRunner().invoke(app, [*jobs, "--standby", "bronze"])
    assert bad.exit_code == 2 and "--standby='bronze' is invalid: must be JOB/CLASS" in bad.output


def test_simulate_cluster_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    fraud = _job_yaml(tmp_path / "f.yaml", "fraud", {"gold": (6, 150, 800)})
    runner = CliRunner()
    alone = runner.invoke(app, ["simulate-cluster", str(fraud), "--executors", "4"])
    assert alone.exit_code == 2 and "give 2 to 16" in alone.output
    twice = runner.invoke(app, ["simulate-cluster", str(fraud), str(fraud), "--executors", "4"])
    assert twice.exit_code == 2 and "a second job named 'fraud'" in twice.output
    fixed = tmp_path / "d.yaml"
    fixed.write_text(DEMO.read_text())
    demo = runner.invoke(app, ["simulate-cluster", str(fraud), str(fixed), "--executors", "4"])
    assert demo.exit_code == 2 and "must" in demo.output
    none = runner.invoke(app, ["simulate-cluster", str(fraud), str(fixed), "--executors", "0"])
    assert none.exit_code == 2 and "executors" in none.output

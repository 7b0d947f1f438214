"""``headroom simulate``: table, results file, plot, and errors that name the YAML path."""

from __future__ import annotations

import json
from pathlib import Path

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

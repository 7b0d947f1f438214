"""The command line's failures that need no Spark: exit code 2 and a one-line reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import spark_runner
from backend.jobs import launcher
from spark_runner.contract.snapshot import EXIT_CODE_FILE

# ``python -m`` finds the package from the working directory (it is not pip-installed).
PACKAGE_ROOT = Path(spark_runner.__file__).resolve().parent.parent


def run_job(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_runner.job", *args],
        cwd=PACKAGE_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def critical_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if " CRITICAL " in line]


def test_missing_config_file(tmp_path: Path) -> None:
    result = run_job("--config", str(tmp_path / "nope.json"))
    assert result.returncode == 2
    [line] = critical_lines(result.stderr)
    assert "cannot read config" in line
    assert "nope.json" in line
    assert "(exit 2)" in line


def test_invalid_config_names_each_field_and_rule(tmp_path: Path) -> None:
    config = tmp_path / "job.json"
    config.write_text(
        json.dumps(
            {
                "api_url": "http://127.0.0.1:1",
                "checkpoint_dir": str(tmp_path / "ck"),
                "classes": [{"name": "gold", "rate_per_s": -5}],
                "control": {"classes": {"gold": {"priority": -1, "delay_target_s": 1}}},
            }
        )
    )
    result = run_job("--config", str(config))
    assert result.returncode == 2
    [line] = critical_lines(result.stderr)
    assert "job_id: Field required" in line
    assert "classes.0.rate_per_s: Input should be greater than or equal to 0 (got -5)" in line
    assert "Traceback" not in result.stderr


def test_a_class_setting_breaking_its_rule_is_named(tmp_path: Path) -> None:
    config = tmp_path / "job.json"
    config.write_text(
        json.dumps(
            {
                "job_id": 1,
                "api_url": "",
                "checkpoint_dir": str(tmp_path / "ck"),
                "classes": [{"name": "gold"}],
                "control": {"classes": {"gold": {"priority": -1, "delay_target_s": 1}}},
            }
        )
    )
    result = run_job("--config", str(config))
    assert result.returncode == 2
    [line] = critical_lines(result.stderr)
    assert "control.classes.gold.priority=-1.0 is invalid: must be > 0" in line, line
    assert "Traceback" not in result.stderr


def test_malformed_json(tmp_path: Path) -> None:
    config = tmp_path / "job.json"
    config.write_text("{not json")
    result = run_job("--config", str(config))
    assert result.returncode == 2
    assert len(critical_lines(result.stderr)) == 1


def test_the_exit_code_is_recorded_beside_the_config_for_a_watcher_that_is_not_the_parent(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.json"
    config.write_text("{not json")
    (tmp_path / EXIT_CODE_FILE).write_text("0\n")  # a previous process's: overwritten
    result = run_job("--config", str(config))
    assert result.returncode == 2
    assert (tmp_path / EXIT_CODE_FILE).read_text() == "2\n"
    assert launcher.process_state(2**22 + 54321, tmp_path).exit_code == 2
    launcher.forget_previous_run(tmp_path)
    assert not (tmp_path / EXIT_CODE_FILE).exists()


def test_missing_argument_is_a_usage_error() -> None:
    result = run_job()
    assert result.returncode == 2
    assert "--config" in result.stderr

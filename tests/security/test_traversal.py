"""Probe: a trace ``path`` cannot read files outside the trace folder (issue 11, item 6).

Before, a stored scenario's ``../../../../etc/passwd`` confirmed the file exists, and a
file whose first line matched the trace header had its next line echoed in the error.
Now a scenario stored in the control plane (and the job it launches) reads traces from
``TRACE_DIR`` only: absolute paths, ``..`` and links leading out are refused with the same
message as a missing file, and no error shows a file's contents. A scenario file run from
the command line still reads traces relative to its own folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from spark_runner.scenario import ScenarioError, load_scenario
from spark_runner.scenario import models as scenario_models
from spark_runner.scenario.loader import scenario_from_dict

SECRET = "SECRET-4711"

SCENARIO = """version: 1
name: traced
duration_s: 60
control: {{period_s: 1.0}}
streams:
  - {{name: s, arrival: {{kind: trace, path: "{path}"}}}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 1.5
    queries:
      - {{name: q, source: s, operators: [{{kind: filter, predicate: "value > 0.5"}}]}}
"""


@pytest.fixture
def trace_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A trace folder with one good trace, next to a secret that looks like a trace."""
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "good.csv").write_text("time_s,rate_per_s\n0,10\n5,20\n")
    (folder / "broken.csv").write_text(f"time_s,rate_per_s\n{SECRET},1\n")
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.csv").write_text(f"time_s,rate_per_s\n{SECRET},1\n")
    (folder / "link.csv").symlink_to(outside / "secret.csv")
    (folder / "linkdir").symlink_to(outside)
    monkeypatch.setattr(scenario_models, "TRACE_DIR", folder)
    return folder


def store(client: TestClient, path: str) -> tuple[int, str]:
    answer = client.post("/api/v1/scenarios", json={"yaml": SCENARIO.format(path=path)})
    return answer.status_code, answer.text


def test_a_trace_in_the_folder_is_read(client: TestClient, trace_dir: Path) -> None:
    status, text = store(client, "good.csv")
    assert status == 201, text


@pytest.mark.parametrize(
    "path",
    [
        "../../../../../../../../etc/passwd",
        "/etc/passwd",
        "../private/secret.csv",
        "link.csv",
        "linkdir/secret.csv",
        "good.csv/../../private/secret.csv",
    ],
)
def test_a_path_leading_out_is_refused_like_a_missing_file(
    client: TestClient, trace_dir: Path, path: str
) -> None:
    status, text = store(client, path)
    missing_status, missing_text = store(client, "no-such-file.csv")
    assert status == missing_status == 422
    assert SECRET not in text and "root:" not in text
    # The same answer, whether the file exists outside or does not exist at all.
    assert text.replace(repr(path)[1:-1], "P") == missing_text.replace("no-such-file.csv", "P")
    assert "must name an existing file of the trace folder" in text


def test_an_error_in_a_trace_never_shows_its_contents(client: TestClient, trace_dir: Path) -> None:
    status, text = store(client, "broken.csv")
    assert status == 422 and "line 2" in text
    assert SECRET not in text


def test_a_jobs_snapshot_reads_the_trace_folder_only(trace_dir: Path) -> None:
    """The job validates its stored scenario the same way (no scenario file folder)."""
    import yaml

    document = yaml.safe_load(SCENARIO.format(path=str(trace_dir.parent / "private/secret.csv")))
    with pytest.raises(ScenarioError) as refused:
        scenario_from_dict(document, source="snapshot.scenario")
    assert "must name an existing file of the trace folder" in str(refused.value)
    assert SECRET not in str(refused.value)


def test_the_command_line_reads_traces_beside_its_scenario_file(tmp_path: Path) -> None:
    """``headroom simulate/run`` of a local file: its author owns the disk it reads."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_text("time_s,rate_per_s\n0,10\n")
    (tmp_path / "runs").mkdir()
    file = tmp_path / "runs" / "local.yaml"
    file.write_text(SCENARIO.format(path="../data/t.csv"))
    assert load_scenario(file).streams[0].arrival.kind == "trace"


@pytest.mark.parametrize(("api_url", "allowed"), [("", True), ("http://127.0.0.1:8000", False)])
def test_a_local_run_keeps_its_files_paths_a_control_plane_job_does_not(
    tmp_path: Path, api_url: str, allowed: bool
) -> None:
    """``headroom run`` hands the job its scenario with the absolute trace paths its file's
    folder gave; a job launched by the control plane (an api_url) is confined."""
    from spark_runner.contract.control import ClassControl, LiveConfig
    from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
    from spark_runner.job.main import prepare

    (tmp_path / "t.csv").write_text("time_s,rate_per_s\n0,10\n")
    file = tmp_path / "local.yaml"
    file.write_text(SCENARIO.format(path="t.csv"))
    loaded = load_scenario(file)
    snapshot = JobSnapshot(
        job_id=1,
        api_url=api_url,
        checkpoint_dir=str(tmp_path / "checkpoint"),
        classes=(ClassSnapshot(name="gold"),),
        control=LiveConfig(classes={"gold": ClassControl(priority=6, delay_target_s=1.5)}),
        scenario=loaded.model_dump(mode="json"),
    )
    if allowed:
        assert prepare(snapshot).plan.class_names
    else:
        with pytest.raises(ScenarioError, match="must name an existing file of the trace folder"):
            prepare(snapshot)

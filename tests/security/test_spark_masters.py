"""Probe: a job's Spark master is not free text (issue 42, finding 3).

Before, ``spark_master`` took any text up to 200 characters: any ``spark://HOST:PORT`` or
``k8s://`` URL (the job's JVM connects there, and Spark's RPC uses Java serialization),
``yarn``, ``local[1000]`` and ``local[*] --conf ...``. Now a job runs on ``local[*]``,
``local[N]`` with N up to the launching machine's cores, or a master an admin listed in
``HEADROOM_ALLOWED_SPARK_MASTERS``; anything else is a 422 that states the rule, when
the job is created and again when a worker launches it. Every master here is a loopback
address and nothing connects to it: the check is offline.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from backend.jobs import launcher
from backend.jobs import service as jobs
from backend.jobs.models import Job
from backend.settings import Settings
from spark_runner.contract import masters
from spark_runner.contract.snapshot import JobSnapshot
from tests.backend.test_jobs_api import RecordingDispatcher

UNLISTED = "spark://127.0.0.9:7077"  # a master nobody configured (never contacted)
CORES = masters.usable_cores()
RULE = f"local[N] with N from 1 to {CORES}"


@pytest.fixture
def dispatcher(client: TestClient) -> RecordingDispatcher:
    recorder = RecordingDispatcher()
    client.app.state.dispatcher = recorder  # type: ignore[attr-defined]
    made = client.post(
        "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1}
    )
    assert made.status_code == 201, made.text
    return recorder


def _allow(client: TestClient, *listed: str) -> None:
    app = client.app
    app.state.settings = app.state.settings.model_copy(  # type: ignore[attr-defined]
        update={"allowed_spark_masters": list(listed)}
    )


REFUSED = (
    UNLISTED,
    "k8s://https://127.0.0.9:6443",
    "mesos://127.0.0.9:5050",
    "yarn",
    "local",
    "local[0]",
    f"local[{CORES + 1}]",
    "local[1000]",
    "local[*] --conf spark.driver.extraJavaOptions=-Dx=1",
    " local[*]",
    "local[*]\n",
    "local[\uff12]",  # a full-width digit
)


def test_only_local_masters_and_listed_ones_are_taken(
    client: TestClient, dispatcher: RecordingDispatcher
) -> None:
    for master in REFUSED:
        response = client.post("/api/v1/jobs", json={"spark_master": master})
        assert response.status_code == 422, (master, response.text)
        [item] = response.json()["detail"]
        assert item["loc"] == ["body", "spark_master"], item
        assert f"spark_master={master!r} is invalid" in item["msg"]
        assert RULE in item["msg"] and "(none is listed)" in item["msg"]
    assert dispatcher.launched == []
    _allow(client, "spark://127.0.0.8:7077")
    for master in ("local[*]", "local[1]", f"local[{CORES}]", "spark://127.0.0.8:7077"):
        response = client.post("/api/v1/jobs", json={"spark_master": master})
        assert response.status_code == 201, response.text
        assert response.json()["spark_master"] == master
    refused = client.post("/api/v1/jobs", json={"spark_master": UNLISTED})
    assert refused.status_code == 422
    assert "HEADROOM_ALLOWED_SPARK_MASTERS (spark://127.0.0.8:7077)" in refused.text


def test_a_stored_master_is_checked_again_where_the_job_runs_again(
    client: TestClient,
    dispatcher: RecordingDispatcher,
    db_session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Jobs stored while their masters were allowed: a worker whose settings do not list
    the master (or with fewer cores than it asks for) fails them and starts nothing; a
    restart once the admin no longer lists it is refused."""
    started: list[object] = []
    monkeypatch.setattr(launcher, "prepare_launch", lambda *args: started.append(args))
    monkeypatch.setattr(launcher, "start_job_process", lambda *args: 4242)
    _allow(client, UNLISTED)
    listed = client.post("/api/v1/jobs", json={"spark_master": UNLISTED}).json()["id"]
    local = client.post("/api/v1/jobs", json={"spark_master": "local[1]"}).json()["id"]
    worker = Settings(data_dir=tmp_path)
    with monkeypatch.context() as smaller:
        smaller.setattr(masters, "usable_cores", lambda: 0)  # a worker smaller than asked
        for job_id in (listed, local):
            assert jobs.launch(db_session, worker, job_id) is False
            job = db_session.get(Job, job_id)
            assert job is not None and job.status == "failed", job_id
            assert job.failure_reason is not None and "refused at launch" in job.failure_reason
            assert "HEADROOM_ALLOWED_SPARK_MASTERS" in job.failure_reason
    assert started == []
    db_session.commit()
    _allow(client)  # the admin no longer lists it
    response = client.post(f"/api/v1/jobs/{listed}/restart")
    assert response.status_code == 409, response.text
    assert f"spark_master={UNLISTED!r} is invalid" in response.json()["detail"]
    assert client.post(f"/api/v1/jobs/{local}/restart").status_code == 201
    assert dispatcher.launched == [listed, local, local + 1]


def test_the_setting_lists_masters_and_must_allow_the_default() -> None:
    env = {"HEADROOM_ALLOWED_SPARK_MASTERS": " spark://127.0.0.8:7077 ,spark://127.0.0.7:7077,"}
    assert Settings.model_validate(env).allowed_spark_masters == [
        "spark://127.0.0.8:7077",
        "spark://127.0.0.7:7077",
    ]
    with pytest.raises(ValidationError, match="no spaces"):
        Settings.model_validate({"HEADROOM_ALLOWED_SPARK_MASTERS": "local[*] --conf x=1"})
    with pytest.raises(ValidationError, match="HEADROOM_ALLOWED_SPARK_MASTERS"):
        Settings.model_validate({"SPARK_MASTER": UNLISTED})
    listed = {"SPARK_MASTER": UNLISTED, "HEADROOM_ALLOWED_SPARK_MASTERS": UNLISTED}
    assert Settings.model_validate(listed).spark_master == UNLISTED


def test_headroom_run_refuses_a_master_before_starting_spark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``headroom run`` runs Spark as its own user, so a spark://HOST:PORT it is given
    needs no listing; the rest of the rule holds, and Spark is never started."""
    from headroom.cli import app
    from spark_runner.job import main as job_main

    ran: list[str] = []

    def run(snapshot: JobSnapshot) -> int:  # stands in for Spark: records, then fails
        ran.append(snapshot.spark_master)
        return 1

    monkeypatch.setattr(job_main, "run", run)
    scenario = str(Path(__file__).resolve().parents[2] / "scenarios" / "demo.yaml")
    for master in ("yarn", "local[*] --conf spark.x=1", f"local[{CORES + 1}]", "spark://h:1/x"):
        result = CliRunner().invoke(app, ["run", scenario, "--master", master])
        assert result.exit_code == 2, (master, result.output)
        assert RULE in result.output and "spark://HOST:PORT" in result.output
    assert ran == []
    result = CliRunner().invoke(app, ["run", scenario, "--master", UNLISTED])
    assert result.exit_code == 1 and ran == [UNLISTED]

"""Job records, the state machine and metric ingest through the API.

The dispatcher here records what the API would hand to Celery; the real worker path is
covered end to end in tests/e2e.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.jobs.models import Job
from backend.jobs.states import JobStatus, can_move, check_move
from backend.users.security import new_token, token_digest
from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.scenario.snapshots import job_scenario


class RecordingDispatcher:
    def __init__(self) -> None:
        self.launched: list[int] = []
        self.stopped: list[int] = []

    def launch(self, job_id: int) -> None:
        self.launched.append(job_id)

    def stop(self, job_id: int) -> None:
        self.stopped.append(job_id)


@pytest.fixture
def dispatcher(client: TestClient) -> RecordingDispatcher:
    recorder = RecordingDispatcher()
    client.app.state.dispatcher = recorder  # type: ignore[attr-defined]
    return recorder


SAMPLE_EPOCH_S = 1_763_700_000.0
"""The synthetic samples' clock (epoch s, Nov 2025)."""


def _sample(seq: int, class_name: str = "fraud") -> dict[str, object]:
    return {
        "class_name": class_name,
        "seq": seq,
        "t": SAMPLE_EPOCH_S + seq,
        "period_s": 1.0,
        "arrived_count": 100,
        "output_count": 40,
        "arrival_rate": 100.0,
        "response_time_mean_s": 0.3,
        "response_time_max_s": 0.6,
    }


def test_job_without_classes_is_rejected(client: TestClient, dispatcher: RecordingDispatcher):
    response = client.post("/api/v1/jobs", json={})
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["loc"] == ["body", "class_ids"] and "at least one query class" in item["msg"]
    assert dispatcher.launched == []


def test_create_job_snapshots_classes_and_enqueues_after_commit(
    client: TestClient, dispatcher: RecordingDispatcher
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    response = client.post("/api/v1/jobs", json={"duration_s": 30})
    assert response.status_code == 201, response.text
    job = response.json()
    assert job["status"] == "pending"
    assert job["created_at"].endswith(("Z", "+00:00"))
    assert job["classes"] == [
        {
            "name": "fraud",
            "priority": 6.0,
            "delay_target_s": 1.5,
            "rate_per_s": 200.0,
            "manager": "aloma",
        }
    ]
    assert dispatcher.launched == [job["id"]]

    # The snapshot is frozen: editing the class later does not change the job.
    class_id = client.get("/api/v1/classes").json()[0]["id"]
    client.patch(f"/api/v1/classes/{class_id}", json={"delay_target_s": 9})
    assert client.get(f"/api/v1/jobs/{job['id']}").json()["classes"][0]["delay_target_s"] == 1.5


def test_unknown_class_id_is_named(client: TestClient, dispatcher: RecordingDispatcher) -> None:
    response = client.post("/api/v1/jobs", json={"class_ids": [4242]})
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["loc"] == ["body", "class_ids"] and item["msg"].startswith("class_ids=[4242]")
    assert dispatcher.launched == []


def _job_token(db_session: Session, job_id: int) -> dict[str, str]:
    """What the launch task does: give the job a token, keep only its digest. The job is
    dated a day before ``SAMPLE_EPOCH_S``, so the synthetic samples fall within its run
    (ingest refuses a ``t`` before the job's creation)."""
    token = new_token()
    job = db_session.get(Job, job_id)
    assert job is not None
    job.ingest_token_digest = token_digest(token)
    job.created_at = datetime.fromtimestamp(SAMPLE_EPOCH_S - 86_400, UTC)
    db_session.commit()
    return {"Authorization": f"Bearer {token}"}


def test_stop_pending_job_and_metrics_ingest(
    client: TestClient, dispatcher: RecordingDispatcher, db_session: Session
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    job_auth = _job_token(db_session, job_id)

    ingest = client.post(
        f"/api/v1/jobs/{job_id}/metrics", json={"samples": [_sample(0)]}, headers=job_auth
    )
    assert ingest.status_code == 202 and ingest.json()["received"] == 1
    # A retried delivery of the same period is stored once.
    again = client.post(
        f"/api/v1/jobs/{job_id}/metrics",
        json={"samples": [_sample(0), _sample(1)]},
        headers=job_auth,
    )
    assert again.status_code == 202
    samples = client.get(f"/api/v1/jobs/{job_id}/metrics").json()["samples"]
    assert [s["seq"] for s in samples] == [0, 1]
    since = client.get(f"/api/v1/jobs/{job_id}/metrics", params={"since": samples[0]["t"]})
    assert [s["seq"] for s in since.json()["samples"]] == [1]

    stopped = client.post(f"/api/v1/jobs/{job_id}/stop")
    assert stopped.status_code == 202 and stopped.json()["status"] == "stopping"
    assert stopped.json()["created_at"].endswith(("Z", "+00:00"))  # read back, still UTC
    assert dispatcher.stopped == [job_id]
    assert client.post(f"/api/v1/jobs/{job_id}/stop").json()["status"] == "stopping"
    assert dispatcher.stopped == [job_id]


def test_metrics_for_unknown_class_or_job(
    client: TestClient, dispatcher: RecordingDispatcher, db_session: Session
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    job_id = client.post("/api/v1/jobs", json={}).json()["id"]
    job_auth = _job_token(db_session, job_id)
    wrong = client.post(
        f"/api/v1/jobs/{job_id}/metrics", json={"samples": [_sample(0, "ads")]}, headers=job_auth
    )
    assert wrong.status_code == 409 and "class_name='ads'" in wrong.json()["detail"]
    assert client.get("/api/v1/jobs/777/metrics").status_code == 404
    negative = {"samples": [{**_sample(0), "seq": -1}]}
    bad = client.post(f"/api/v1/jobs/{job_id}/metrics", json=negative, headers=job_auth)
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "seq"
    # A user's token is not a job's token.
    user_token = client.post(f"/api/v1/jobs/{job_id}/metrics", json={"samples": [_sample(5)]})
    assert user_token.status_code == 401


@pytest.mark.parametrize(
    ("current", "target", "ok"),
    [
        (JobStatus.PENDING, JobStatus.STARTING, True),
        (JobStatus.STARTING, JobStatus.RUNNING, True),
        (JobStatus.RUNNING, JobStatus.STOPPING, True),
        (JobStatus.STOPPING, JobStatus.STOPPED, True),
        (JobStatus.RUNNING, JobStatus.FAILED, True),
        (JobStatus.STOPPED, JobStatus.RUNNING, False),
        (JobStatus.FAILED, JobStatus.STARTING, False),
        (JobStatus.PENDING, JobStatus.RUNNING, False),
        (JobStatus.STOPPING, JobStatus.RUNNING, False),
    ],
)
def test_state_machine(current: JobStatus, target: JobStatus, ok: bool) -> None:
    assert can_move(current, target) is ok
    if not ok:
        with pytest.raises(Conflict, match=f"status='{current.value}' cannot move"):
            check_move(current, target)


def test_job_shows_the_options_it_was_launched_with(
    client: TestClient, dispatcher: RecordingDispatcher, db_session: Session
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    options = {
        "duration_s": 30,
        "rate_per_s": 50,
        "spark_master": "local[2]",
        "manager": "ctrl",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": 5,
        "redistribution_enabled": False,
    }
    job = client.post("/api/v1/jobs", json=options).json()
    assert job["spark_master"] == "local[2]"
    assert job["classes"][0] | {"priority": None} == {
        "name": "fraud",
        "priority": None,
        "delay_target_s": 1.5,
        "rate_per_s": 50.0,
        "manager": "ctrl",
    }
    launch = job["launch"]
    assert launch | {"engine": None} == {
        "scenario_id": None,
        "scenario_name": None,
        "rate_per_s": 50.0,
        "duration_s": 30.0,
        "manager": "ctrl",
        "mode": "per_class",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": 5,
        "engine": None,
    }
    assert launch["engine"]["source"] == "generator" and launch["engine"]["sink"] == "none"
    assert client.get(f"/api/v1/jobs/{job['id']}").json()["launch"] == launch

    # A restart runs the same snapshot: the same options (and a later live change).
    client.patch(f"/api/v1/jobs/{job['id']}/config", json={"recommend_only": False})
    db_session.get(Job, job["id"]).status = "stopped"  # type: ignore[union-attr]
    db_session.commit()
    again = client.post(f"/api/v1/jobs/{job['id']}/restart").json()
    assert again["restart_of"] == job["id"]
    assert again["launch"] == launch | {"recommend_only": False}


def test_job_from_a_scenario_names_it(client: TestClient, dispatcher: RecordingDispatcher) -> None:
    from tests.backend.test_scenarios_api import DEMO

    scenario = client.post("/api/v1/scenarios", json={"yaml": DEMO}).json()
    job = client.post("/api/v1/jobs", json={"scenario_id": scenario["id"]}).json()
    launch = job["launch"]
    assert (launch["scenario_id"], launch["scenario_name"]) == (scenario["id"], "demo")
    assert launch["rate_per_s"] is None and launch["manager"] is None
    assert launch["mode"] == "dilos" and launch["duration_s"] == 40
    assert {c["manager"] for c in job["classes"]} <= {"aloma", "seamless", "ctrl", "aurora"}


def test_engine_urls_are_shown_without_their_password() -> None:
    from backend.jobs.schemas import _without_password

    assert _without_password("redis://u:secret@h:6379/0") == "redis://u:***@h:6379/0"
    assert _without_password("redis://:secret@h/0") == "redis://:***@h/0"
    assert _without_password("redis://h:6379/0") == "redis://h:6379/0"
    assert _without_password("") == ""


def test_a_job_asks_elastic_capacity_with_its_own_maximum(
    client: TestClient, dispatcher: RecordingDispatcher, db_session: Session
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    created = client.post("/api/v1/jobs", json={"elastic": {"max_executors": 3}})
    assert created.status_code == 201, created.text
    job_id = created.json()["id"]
    elastic = client.get(f"/api/v1/jobs/{job_id}/config").json()["config"]["elastic"]
    assert elastic["max_executors"] == 3 and elastic["min_executors"] == 1
    job = db_session.get(Job, job_id)
    assert job is not None  # the job's scenario resizes with the same settings, stored once
    assert "elastic" not in job.config["scenario"]["control"]
    ran = job_scenario(JobSnapshot.model_validate(job.config))
    assert ran["control"]["elastic"]["params"] == elastic


def test_a_job_runs_a_query_per_tier_unless_it_is_elastic(
    client: TestClient, dispatcher: RecordingDispatcher, db_session: Session
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    client.post("/api/v1/classes", json={"name": "ads", "priority": 1, "delay_target_s": 3})
    created = client.post("/api/v1/jobs", json={"queries": "tier"})
    assert created.status_code == 201, created.text
    job = db_session.get(Job, created.json()["id"])
    assert job is not None and job.config["engine"]["queries"] == "tier"
    assert client.get(f"/api/v1/jobs/{job.id}").json()["launch"]["engine"]["queries"] == "tier"

    elastic = client.post("/api/v1/jobs", json={"queries": "tier", "elastic": {}})
    assert elastic.status_code == 422, elastic.text
    [detail] = elastic.json()["detail"]
    assert detail["loc"][-1] == "queries" and "elastic job runs one query" in detail["msg"]
    unknown = client.post("/api/v1/jobs", json={"queries": "class"})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"][-1] == "queries"
    assert dispatcher.launched == [job.id]


@pytest.mark.parametrize(
    ("elastic", "field", "words"),
    [
        ({"max_executors": 0}, "elastic.max_executors", "integer >= 1"),
        ({"tau3": 0.9}, "elastic.tau3", "set per class"),
        ({"hold_out_s": 20, "hold_in_s": 10}, "elastic.hold_in_s", ">= hold_out_s"),
        ({"executors": 2}, "elastic.executors", "unknown parameter"),
    ],
)
def test_a_bad_elastic_setting_is_422_naming_it(
    client: TestClient,
    dispatcher: RecordingDispatcher,
    elastic: dict[str, object],
    field: str,
    words: str,
) -> None:
    client.post("/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 1.5})
    response = client.post("/api/v1/jobs", json={"elastic": elastic})
    assert response.status_code == 422, response.text
    [detail] = response.json()["detail"]
    assert detail["loc"][-1] == field and words in detail["msg"], detail
    assert client.get("/api/v1/jobs").json() == [] and dispatcher.launched == []

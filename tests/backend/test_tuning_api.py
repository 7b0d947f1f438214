"""Live tuning: versioned, validated, audited changes; the job polls and acknowledges."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.tuning.models import Prediction
from tests.api_fixtures import login_headers
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token, _sample


@pytest.fixture
def job(client: TestClient, db_session: Session) -> tuple[int, dict[str, str]]:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    for name, priority, target in (("fraud", 6, 1.5), ("ads", 1, 3.0)):
        created = client.post(
            "/api/v1/classes",
            json={"name": name, "priority": priority, "delay_target_s": target},
        )
        assert created.status_code == 201, created.text
    job_id = client.post("/api/v1/jobs", json={"policy": "strict"}).json()["id"]
    return job_id, _job_token(db_session, job_id)


def test_launch_configuration_is_version_zero(client: TestClient, job) -> None:
    job_id, _ = job
    config = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert config["latest_version"] == 0 and config["applied_version"] is None
    assert config["pending_versions"] == [0]
    assert config["config"]["policy"] == "strict"
    assert config["config"]["classes"]["ads"]["manager"] == "aloma"
    assert config["config"]["classes"]["fraud"]["delay_target_s"] == 1.5


def test_patch_poll_ack_round_trip(client: TestClient, job) -> None:
    job_id, job_auth = job
    patched = client.patch(
        f"/api/v1/jobs/{job_id}/config",
        json={"classes": {"ads": {"delay_target_s": 4.0, "tau2": 0.7}}, "recommend_only": True},
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["latest_version"] == 1 and body["pending_versions"] == [0, 1]
    v1 = body["versions"][1]
    assert v1["created_by"] == "ops"
    assert {"path": "classes.ads.delay_target_s", "old": 3.0, "new": 4.0} in v1["changes"]
    assert {"path": "recommend_only", "old": False, "new": True} in v1["changes"]

    # The job sees the newer version, applies it and says so.
    control = client.get(
        f"/api/v1/jobs/{job_id}/control", params={"after_version": 0}, headers=job_auth
    )
    assert control.status_code == 200
    assert control.json()["config"]["version"] == 1
    assert control.json()["config"]["classes"]["ads"]["tau2"] == 0.7
    nothing = client.get(
        f"/api/v1/jobs/{job_id}/control",
        params={"after_version": 1, "wait_s": 0.2},
        headers=job_auth,
    )
    assert nothing.status_code == 204
    ack = client.post(f"/api/v1/jobs/{job_id}/control/ack", json={"version": 1}, headers=job_auth)
    assert ack.status_code == 204
    after = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert after["applied_version"] == 1 and after["pending_versions"] == []
    assert all(v["applied_at"] for v in after["versions"])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"classes": {"ads": {"tau2": 0.3}}}, "classes.ads.tau2"),
        ({"classes": {"ads": {"manager": "magic"}}}, "classes.ads.manager"),
        (
            {"classes": {"ads": {"manager_params": {"headroom": -1}}}},
            "classes.ads.manager_params.headroom",
        ),
        ({"classes": {"nope": {"priority": 2}}}, "classes.nope"),
        ({"policy": "greedy"}, "policy"),
        ({"classes": {"ads": {"priority": 0}}}, "priority"),
    ],
)
def test_invalid_change_names_the_path_and_stores_nothing(
    client: TestClient, job, change, field
) -> None:
    job_id, _ = job
    response = client.patch(f"/api/v1/jobs/{job_id}/config", json=change)
    assert response.status_code == 422, response.text
    item = response.json()["detail"][0]
    assert item["loc"][-1] == field, item
    assert client.get(f"/api/v1/jobs/{job_id}/config").json()["latest_version"] == 0


def test_no_op_change_is_refused(client: TestClient, job) -> None:
    job_id, _ = job
    response = client.patch(
        f"/api/v1/jobs/{job_id}/config", json={"classes": {"ads": {"delay_target_s": 3.0}}}
    )
    assert response.status_code == 409


def test_class_patch_reaches_live_jobs(client: TestClient, job) -> None:
    job_id, _ = job
    ads = next(c for c in client.get("/api/v1/classes").json() if c["name"] == "ads")
    assert client.patch(f"/api/v1/classes/{ads['id']}", json={"priority": 2}).status_code == 200
    config = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert config["latest_version"] == 1
    assert config["config"]["classes"]["ads"]["priority"] == 2
    assert config["versions"][1]["changes"] == [
        {"path": "classes.ads.priority", "old": 1.0, "new": 2.0}
    ]
    assert client.patch(f"/api/v1/classes/{ads['id']}", json={"catch_up": True}).status_code == 200
    config = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert config["config"]["classes"]["ads"]["catch_up"] is True
    assert config["versions"][2]["changes"] == [
        {"path": "classes.ads.catch_up", "old": False, "new": True}
    ]


def test_only_operators_tune_and_only_the_job_polls(
    client: TestClient, anonymous: TestClient, job
) -> None:
    job_id, _ = job
    viewer = login_headers(anonymous, "viewer")
    forbidden = anonymous.patch(
        f"/api/v1/jobs/{job_id}/config", json={"recommend_only": True}, headers=viewer
    )
    assert forbidden.status_code == 403
    assert anonymous.get(f"/api/v1/jobs/{job_id}/config", headers=viewer).status_code == 200
    # A user's token does not let anyone pretend to be the job.
    assert client.get(f"/api/v1/jobs/{job_id}/control").status_code == 401


def test_stopped_job_takes_no_change(client: TestClient, job, db_session: Session) -> None:
    from backend.jobs.models import Job

    job_id, _ = job
    db_session.get(Job, job_id).status = "stopped"  # type: ignore[union-attr]
    db_session.commit()
    response = client.patch(f"/api/v1/jobs/{job_id}/config", json={"recommend_only": True})
    assert response.status_code == 409 and "status='stopped'" in response.json()["detail"]


def test_class_manager_fields_are_validated(client: TestClient) -> None:
    ok = client.post(
        "/api/v1/classes",
        json={
            "name": "c",
            "priority": 1,
            "delay_target_s": 2,
            "manager": "aurora",
            "manager_params": {"headroom": 0.9},
            "reserve_fraction": 0.1,
        },
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["manager_params"] == {"headroom": 0.9}
    bad = client.post(
        "/api/v1/classes",
        json={
            "name": "d",
            "priority": 1,
            "delay_target_s": 2,
            "manager": "aloma",
            "manager_params": {"no_such_knob": 1},
        },
    )
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"][-1] == "manager_params.no_such_knob"


def test_config_shows_the_latest_and_the_applied_content(client: TestClient, job) -> None:
    job_id, job_auth = job
    launched = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert launched["applied"] is None  # the job has not acknowledged version 0 yet
    assert launched["latest"]["version"] == 0 and launched["latest"]["applied_at"] is None
    assert launched["latest"]["config"] == launched["config"]
    assert launched["in_force"] == launched["latest"]  # it runs its launch configuration

    client.patch(f"/api/v1/jobs/{job_id}/config", json={"classes": {"ads": {"tau2": 0.75}}})
    unacknowledged = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert unacknowledged["in_force"]["version"] == 0  # until it acknowledges one

    client.post(f"/api/v1/jobs/{job_id}/control/ack", json={"version": 1}, headers=job_auth)
    client.patch(f"/api/v1/jobs/{job_id}/config", json={"classes": {"ads": {"tau2": 0.7}}})
    pending = client.get(f"/api/v1/jobs/{job_id}/config").json()
    latest, applied = pending["latest"], pending["applied"]
    assert (latest["version"], applied["version"]) == (2, 1)
    assert pending["in_force"] == applied
    assert latest["config"]["classes"]["ads"]["tau2"] == 0.7  # what the job will run
    assert applied["config"]["classes"]["ads"]["tau2"] == 0.75  # what it runs now
    assert latest["created_by"] == "ops" and latest["applied_at"] is None
    assert applied["applied_at"] is not None and applied["created_at"] <= latest["created_at"]
    assert pending["pending_versions"] == [2] and pending["applied_version"] == 1

    client.post(f"/api/v1/jobs/{job_id}/control/ack", json={"version": 2}, headers=job_auth)
    done = client.get(f"/api/v1/jobs/{job_id}/config").json()
    assert done["applied"]["version"] == 2 and done["applied"]["config"] == done["config"]


def store_overloaded_samples(
    client: TestClient, job_id: int, job_auth: dict[str, str], seconds: int
) -> None:
    """``seconds`` of one-second samples of ``job``: fraud costs 0.3 s/s of work, ads
    1.5 s/s, and each class shed 20 of its 100 tuples a second."""
    samples = [
        {**_sample(seq, name), "load": load, "shed_count": 20}
        for seq in range(seconds)
        for name, load in (("fraud", 0.3), ("ads", 1.5))
    ]
    posted = client.post(
        f"/api/v1/jobs/{job_id}/metrics", json={"samples": samples}, headers=job_auth
    )
    assert posted.status_code == 202, posted.text


def test_a_change_is_predicted_by_replaying_the_jobs_last_minutes(client: TestClient, job) -> None:
    """POST .../config/preview replays the job's samples through the simulator under the
    configuration in force and under the change, beside what the job measured; nothing is
    stored. Without samples, or with a change the core refuses, it says why (422)."""
    job_id, job_auth = job
    url = f"/api/v1/jobs/{job_id}/config/preview"
    change = {"classes": {"ads": {"priority": 9}}}
    empty = client.post(url, json=change)
    assert empty.status_code == 422 and "no samples in its last 120 s" in empty.text
    store_overloaded_samples(client, job_id, job_auth, seconds=30)
    preview = client.post(url, json=change)
    assert preview.status_code == 200, preview.text
    body = preview.json()
    assert body["job_id"] == job_id and body["window_s"] == pytest.approx(30.0)
    assert set(body["classes"]) == {"fraud", "ads"}
    ads, fraud = body["classes"]["ads"], body["classes"]["fraud"]
    assert ads["measured"]["loss_fraction"] == pytest.approx(0.2)
    # 1.8 s/s of work on 1 s/s: ads (priority 1) absorbs it; raised to 9, fraud does
    assert ads["proposed"]["loss_fraction"] < ads["current"]["loss_fraction"]
    assert fraud["proposed"]["loss_fraction"] > fraud["current"]["loss_fraction"]
    assert client.get(f"/api/v1/jobs/{job_id}/config").json()["latest_version"] == 0
    refused = client.post(url, json={"classes": {"ads": {"tau2": 5.0}}})
    assert refused.status_code == 422 and "tau2" in refused.text


def test_an_applied_change_is_checked_against_its_prediction(client: TestClient, job) -> None:
    """A preview keeps its prediction; the change stored as previewed is checked once the
    job has run it as long as the preview replayed (its samples tagged with the version),
    and later previews of the same kind say how far off it was. A preview of another
    change is not the applied one's."""
    job_id, job_auth = job
    url = f"/api/v1/jobs/{job_id}/config/preview"
    store_overloaded_samples(client, job_id, job_auth, seconds=30)
    client.post(url, json={"classes": {"ads": {"priority": 8}}})  # not the one applied
    change = {"classes": {"ads": {"priority": 9}}}
    first = client.post(url, json=change).json()
    assert first["kind"] == "priority" and first["track_record"] is None
    assert client.patch(f"/api/v1/jobs/{job_id}/config", json=change).status_code == 200
    again = client.post(url, json=change).json()  # now it changes nothing: nothing kept
    assert again["kind"] == "" and again["track_record"] is None
    measured = {"fraud": 0.0, "ads": 0.5}  # mean violation; each class lost 20 %

    def run_version_1(seqs: range) -> None:
        samples = [
            {**_sample(seq, name), "shed_count": 20, "load": 0.5}
            | {"config_version": 1, "violation_mean_s": violation}
            for seq in seqs
            for name, violation in measured.items()
        ]
        posted = client.post(
            f"/api/v1/jobs/{job_id}/metrics", json={"samples": samples}, headers=job_auth
        )
        assert posted.status_code == 202, posted.text

    same_kind = {"classes": {"fraud": {"priority": 2}}}
    run_version_1(range(30, 45))  # half the window
    assert client.post(url, json=same_kind).json()["track_record"] is None
    run_version_1(range(45, 60))
    record = client.post(url, json=same_kind).json()["track_record"]
    predicted = {n: first["classes"][n]["proposed"] for n in measured}
    losses = [abs(p["loss_fraction"] - 0.2) for p in predicted.values()]
    late = [
        abs(predicted[n]["mean_violation_s"] - v)
        for n, v in measured.items()
        if predicted[n]["mean_violation_s"] is not None  # no output predicted
    ]
    assert record["kind"] == "priority" and record["changes"] == 1
    assert record["figures"] == len(losses) + len(late) >= 3
    assert record["loss_error"] == pytest.approx(sum(losses) / len(losses))
    assert record["violation_error_s"] == pytest.approx(sum(late) / len(late))
    other = client.post(url, json={"classes": {"ads": {"delay_target_s": 4.0}}}).json()
    assert other["kind"] == "delay_target_s" and other["track_record"] is None


def test_a_change_superseded_before_its_window_is_closed_without_figures(
    client: TestClient, job, db_session: Session
) -> None:
    """A change the job ran for less than the preview's window, then replaced by a newer
    version, can never be checked: it is closed without figures (it no longer holds the
    queue of pending checks) and counts in no track record."""
    job_id, job_auth = job
    url = f"/api/v1/jobs/{job_id}/config/preview"
    store_overloaded_samples(client, job_id, job_auth, seconds=30)
    change = {"classes": {"ads": {"priority": 9}}}
    client.post(url, json=change)
    client.patch(f"/api/v1/jobs/{job_id}/config", json=change)
    client.patch(f"/api/v1/jobs/{job_id}/config", json={"classes": {"ads": {"tau2": 0.7}}})
    samples = [
        {**_sample(seq, "ads"), "config_version": 1 if seq < 40 else 2} for seq in range(30, 41)
    ]
    posted = client.post(
        f"/api/v1/jobs/{job_id}/metrics", json={"samples": samples}, headers=job_auth
    )
    assert posted.status_code == 202, posted.text
    again = client.post(url, json={"classes": {"fraud": {"priority": 2}}}).json()
    assert again["kind"] == "priority" and again["track_record"] is None
    [closed] = db_session.scalars(select(Prediction).where(Prediction.version == 1)).all()
    assert closed.checked_at is not None and closed.errors == {}


ELASTIC = "  elastic:\n    params: {max_executors: 3, hold_out_s: 10, hold_in_s: 30}\n"


@pytest.fixture
def elastic_job(client: TestClient) -> int:
    from tests.backend.test_scenarios_api import DEMO

    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    document = DEMO.replace(
        "  redistribution_every: 10\n", "  redistribution_every: 10\n" + ELASTIC
    )
    assert "elastic" in document
    scenario = client.post("/api/v1/scenarios", json={"yaml": document})
    assert scenario.status_code == 201, scenario.text
    job = client.post("/api/v1/jobs", json={"scenario_id": scenario.json()["id"]})
    assert job.status_code == 201, job.text
    return int(job.json()["id"])


def test_an_elastic_jobs_hold_times_and_sizes_change_live(
    client: TestClient, elastic_job: int
) -> None:
    url = f"/api/v1/jobs/{elastic_job}/config"
    launch = client.get(url).json()["config"]["elastic"]
    assert launch["max_executors"] == 3 and launch["hold_out_s"] == 10
    assert "tau3" not in launch  # the classes' thresholds are the job's
    patched = client.patch(url, json={"elastic": {"hold_out_s": 5, "max_executors": 2}})
    assert patched.status_code == 200, patched.text
    changes = patched.json()["versions"][1]["changes"]
    assert {"path": "elastic.hold_out_s", "old": 10, "new": 5} in changes
    back = client.patch(url, json={"elastic": {"max_executors": 3}})  # up to the launch's
    assert back.status_code == 200, back.text


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"max_executors": 4}, "elastic.max_executors", "must be <= 3"),
        ({"executor_cores": 2}, "elastic.executor_cores", "cannot change while the job runs"),
        ({"tau3": 0.9}, "elastic.tau3", "set per class"),
        ({"hold_in_s": 5}, "elastic.hold_in_s", "must be >= hold_out_s"),
        ({"hold_out_s": 7200}, "elastic.hold_out_s", "within [0, 3600.0]"),
        ({"sizing": "random"}, "elastic.sizing", "load_aware"),
    ],
)
def test_a_live_elastic_change_the_job_cannot_take_is_422(
    client: TestClient, elastic_job: int, change: dict[str, object], field: str, words: str
) -> None:
    url = f"/api/v1/jobs/{elastic_job}/config"
    response = client.patch(url, json={"elastic": change})
    assert response.status_code == 422, response.text
    [detail] = response.json()["detail"]
    assert detail["loc"][-1] == field and words in detail["msg"], detail
    assert client.get(url).json()["latest_version"] == 0  # nothing stored


def test_a_job_that_does_not_scale_takes_no_elastic_change(client: TestClient, job) -> None:
    job_id, _ = job
    response = client.patch(f"/api/v1/jobs/{job_id}/config", json={"elastic": {"hold_out_s": 5}})
    assert response.status_code == 422
    assert "does not scale its executors" in response.json()["detail"][0]["msg"]


def test_a_launch_request_sets_its_own_maximum_over_the_scenarios(client: TestClient) -> None:
    from tests.backend.test_scenarios_api import DEMO

    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    document = DEMO.replace(
        "  redistribution_every: 10\n", "  redistribution_every: 10\n" + ELASTIC
    )
    scenario = client.post("/api/v1/scenarios", json={"yaml": document}).json()
    job = client.post(
        "/api/v1/jobs", json={"scenario_id": scenario["id"], "elastic": {"max_executors": 2}}
    )
    assert job.status_code == 201, job.text
    elastic = client.get(f"/api/v1/jobs/{job.json()['id']}/config").json()["config"]["elastic"]
    assert (elastic["max_executors"], elastic["hold_in_s"]) == (2, 30)  # the rest: scenario's

"""The cluster coordinator on the control plane: jobs' samples in, each job's live
``max_executors`` and the action logs out, its state kept between rounds in the database
(SQLite and PostgreSQL), through the API as a job and an operator use it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.coordinator.service import run_round
from backend.jobs.models import Job
from tests.backend.test_jobs_api import SAMPLE_EPOCH_S, RecordingDispatcher, _job_token

MASTER = "spark://127.0.0.1:7077"
CLASSES = {"gold": 6, "silver": 3, "tin": 2, "bronze": 1}


@dataclass
class Cluster:
    client: TestClient
    session: Session
    jobs: dict[str, int]  # "A": gold and bronze, "B": silver and tin
    tokens: dict[int, dict[str, str]]
    seq: int = 0

    def report(self, t: float, loads: dict[int, dict[str, float]], warmup: bool = False) -> None:
        """Each job posts one period's samples, ending at ``t``: its classes' ``loads``
        in executors of one serving executor (so the job's u is their sum)."""
        for job_id, by_class in loads.items():
            usage = sum(by_class.values())
            samples = [
                {**_sample(self.seq, t, name, load, usage), "warmup": warmup}
                for name, load in by_class.items()
            ]
            posted = self.client.post(
                f"/api/v1/jobs/{job_id}/metrics",
                json={"samples": samples},
                headers=self.tokens[job_id],
            )
            assert posted.status_code == 202, posted.text
        self.seq += 1

    def round(self, t: float, executors: int = 4) -> Any:
        row = run_round(self.session, MASTER, executors, t)
        self.session.commit()
        return row

    def cap(self, job_id: int) -> tuple[int, str | None]:
        """The job's live max_executors, and who set it."""
        read = self.client.get(f"/api/v1/jobs/{job_id}/config").json()
        return read["config"]["elastic"]["max_executors"], read["latest"]["created_by"]

    def actions(self, job_id: int) -> list[dict[str, Any]]:
        log = self.client.get(f"/api/v1/jobs/{job_id}/actions", params={"kind": "allocate"})
        return list(log.json()["actions"])


def _sample(seq: int, t: float, name: str, load: float, usage: float) -> dict[str, Any]:
    return {
        "class_name": name,
        "seq": seq,
        "t": t,
        "period_s": 1.0,
        "arrived_count": 100,
        "output_count": 100,
        "arrival_rate": 100.0,
        "load": load,
        "shed_count": 0,
        "shed_fraction": 0.0,
        "violation_max_s": 0.0,
        "executors": 1,
        "job_usage": usage,
    }


@pytest.fixture
def cluster(client: TestClient, db_session: Session) -> Cluster:
    app: Any = client.app
    app.state.dispatcher = RecordingDispatcher()
    app.state.settings = app.state.settings.model_copy(
        update={"allowed_spark_masters": [MASTER], "cluster_executors": {MASTER: 4}}
    )
    ids = {}
    for name, priority in CLASSES.items():
        made = client.post(
            "/api/v1/classes", json={"name": name, "priority": priority, "delay_target_s": 2}
        )
        ids[name] = made.json()["id"]
    jobs = {}
    for job, members in {"A": ("gold", "bronze"), "B": ("silver", "tin")}.items():
        created = client.post(
            "/api/v1/jobs",
            json={
                "class_ids": [ids[m] for m in members],
                "spark_master": MASTER,
                "elastic": {"max_executors": 3},
            },
        )
        assert created.status_code == 201, created.text
        jobs[job] = created.json()["id"]
    tokens = {job_id: _job_token(db_session, job_id) for job_id in jobs.values()}
    for job_id in jobs.values():  # what the launch does once the process runs
        row = db_session.get(Job, job_id)
        assert row is not None
        row.status = "running"
    db_session.commit()
    return Cluster(client, db_session, jobs, tokens)


T0 = SAMPLE_EPOCH_S + 100


def test_higher_classes_anywhere_get_the_executors_first_and_a_shortage_moves_them(
    cluster: Cluster,
) -> None:
    a, b = cluster.jobs["A"], cluster.jobs["B"]
    # gold heavy: job A needs 3 executors for it; B's silver fits in one
    cluster.report(T0, {a: {"gold": 2.5, "bronze": 1.0}, b: {"silver": 0.5, "tin": 1.0}})
    first = cluster.round(T0)
    assert first is not None and first.trigger_job_id is None
    assert first.after == {str(a): 3, str(b): 1}
    # A's launch cap is already its allocation; B's is lowered to its own
    assert cluster.cap(a) == (3, "ops") and cluster.cap(b) == (1, "coordinator")
    [started] = cluster.actions(a)
    assert started["origin"] == "coordinator" and started["executors_after"] == 3
    assert "job " in started["trigger"] and "started" in started["trigger"]

    # the load moves: gold light, silver heavy. B is short (u 2 of its 1 executor); the
    # allocation waits hold_s (10 s), then gives B what A's gold no longer needs
    for dt in (1, 5, 9):
        cluster.report(T0 + dt, {a: {"gold": 0.5, "bronze": 1.0}, b: {"silver": 2.0, "tin": 1}})
        assert cluster.round(T0 + dt) is None
    assert cluster.cap(a)[0] == 3
    cluster.report(T0 + 12, {a: {"gold": 0.5, "bronze": 1.0}, b: {"silver": 2.0, "tin": 1}})
    moved = cluster.round(T0 + 12)
    assert moved is not None and moved.trigger_job_id == b
    assert moved.before == {str(a): 3, str(b): 1} and moved.after == {str(a): 1, str(b): 3}
    assert cluster.cap(a)[0] == 1 and cluster.cap(b)[0] == 3
    short = cluster.actions(b)[-1]
    assert short["executors_before"] == 1 and short["executors_after"] == 3
    assert short["usage"] == pytest.approx(2.0) and short["threshold"] == 1.0
    assert short["held_s"] == pytest.approx(11.0) and short["verdict"] is None

    # constant load: no more changes; the verdict comes once five periods follow
    for dt in range(13, 20):
        cluster.report(T0 + dt, {a: {"gold": 0.5, "bronze": 1.0}, b: {"silver": 2.0, "tin": 1}})
        assert cluster.round(T0 + dt) is None
    judged = cluster.actions(b)[-1]["verdict"]
    assert judged is not None and judged["periods"] == 5 and judged["outcome"] == "unchanged"

    log = cluster.client.get("/api/v1/clusters/reallocations", params={"master": MASTER})
    assert [r["trigger_job_id"] for r in log.json()["reallocations"]] == [None, b]
    assert log.json()["reallocations"][1]["why"].startswith(f"job {b} short: its classes use 2")
    state = cluster.client.get("/api/v1/clusters").json()["clusters"]
    assert state == [
        {
            "master": MASTER,
            "executors": 4,
            "allocation": {str(a): 1, str(b): 3},
            "round_at_s": T0 + 19,
            "problem": None,
        }
    ]


def test_a_warm_up_period_says_nothing_of_a_jobs_load(cluster: Cluster) -> None:
    """Its batch paid for Spark's start: B's heavy first period must not take executors
    from gold's job (given both spare executors: its top class is the highest)."""
    a, b = cluster.jobs["A"], cluster.jobs["B"]
    cluster.report(T0 - 1, {b: {"silver": 3.0, "tin": 0.0}}, warmup=True)
    cluster.report(T0, {a: {"gold": 0.5, "bronze": 0.0}})
    first = cluster.round(T0)
    assert first is not None and first.after == {str(a): 3, str(b): 1}


def test_slow_periods_among_steady_ones_do_not_move_executors(cluster: Cluster) -> None:
    """A class's load is its median over the last 10 s: a period in four reading twenty times
    the load (batches on an executor whose JVM is starting) makes no job short."""
    a, b = cluster.jobs["A"], cluster.jobs["B"]
    steady = {a: {"gold": 0.5, "bronze": 0.0}, b: {"silver": 1.5, "tin": 0.0}}
    for dt in range(0, 5):
        cluster.report(T0 + dt, steady)
    assert cluster.round(T0 + 4) is not None  # the jobs arrive: 2 executors each
    for dt in range(5, 30):
        spike = {a: {"gold": 10.0, "bronze": 0.0}} if dt % 4 == 2 else {}
        cluster.report(T0 + dt, {**steady, **spike})
        assert cluster.round(T0 + dt) is None, dt


def test_an_edited_cap_is_the_coordinators_again_at_its_next_round(cluster: Cluster) -> None:
    a = cluster.jobs["A"]
    cluster.report(T0, {a: {"gold": 2.5, "bronze": 0.0}, cluster.jobs["B"]: {"silver": 0.1}})
    cluster.round(T0)
    edited = cluster.client.patch(
        f"/api/v1/jobs/{a}/config", json={"elastic": {"max_executors": 2}}
    )
    assert edited.status_code == 200, edited.text
    assert cluster.cap(a) == (2, "ops")
    assert cluster.round(T0 + 1) is None
    assert cluster.cap(a) == (3, "coordinator")


def test_a_cluster_too_small_for_the_jobs_floors_is_a_problem_not_an_allocation(
    cluster: Cluster,
) -> None:
    assert cluster.round(T0, executors=1) is None
    [state] = cluster.client.get("/api/v1/clusters").json()["clusters"]
    assert state["allocation"] == {} and "min_executors" in state["problem"]
    assert cluster.cap(cluster.jobs["A"]) == (3, "ops")


def test_the_log_of_a_master_not_coordinated_is_422_naming_it(cluster: Cluster) -> None:
    answer = cluster.client.get(
        "/api/v1/clusters/reallocations", params={"master": "spark://elsewhere:7077"}
    )
    assert answer.status_code == 422, answer.text
    [detail] = answer.json()["detail"]
    assert detail["loc"][-1] == "master" and "coordinated" in detail["msg"]


def test_a_job_cannot_post_the_control_planes_actions(cluster: Cluster) -> None:
    a = cluster.jobs["A"]
    forged = {
        "seq": 0,
        "at_s": T0,
        "kind": "allocate",
        "usage": 1.0,
        "shed_before": 0.0,
        "shed_after": 0.0,
    }
    forgeries = (
        forged,
        {**forged, "kind": "scale_out", "origin": "coordinator"},
        {**forged, "kind": "move", "class_name": "gold"},
        {**forged, "kind": "shed_more", "class_name": "gold", "origin": "handoff"},
    )
    for action in forgeries:
        answer = cluster.client.post(
            f"/api/v1/jobs/{a}/actions", json={"actions": [action]}, headers=cluster.tokens[a]
        )
        assert answer.status_code == 422, answer.text
        assert "the control plane's" in answer.json()["detail"][0]["msg"]
    assert cluster.actions(a) == []


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"HEADROOM_CLUSTER_EXECUTORS": "spark://other:7077=2"}, "must be one of"),
        ({"HEADROOM_CLUSTER_EXECUTORS": f"{MASTER}=0"}, "must be within [1, 10000]"),
        ({"HEADROOM_CLUSTER_EXECUTORS": MASTER}, "is not MASTER=N"),
        ({"HEADROOM_COORDINATOR_HOLD_S": "-1"}, "HEADROOM_COORDINATOR_HOLD_S: hold_s=-1.0"),
    ],
)
def test_a_coordinator_setting_out_of_its_rules_is_refused_naming_it(
    env: dict[str, str], words: str
) -> None:
    from pydantic import ValidationError

    from backend.settings import Settings

    with pytest.raises(ValidationError, match=re.escape(words)):
        Settings.model_validate({"HEADROOM_ALLOWED_SPARK_MASTERS": MASTER, **env})
    listed = Settings.model_validate(
        {"HEADROOM_ALLOWED_SPARK_MASTERS": MASTER, "HEADROOM_CLUSTER_EXECUTORS": f"{MASTER}=8"}
    )
    assert listed.cluster_executors == {MASTER: 8}

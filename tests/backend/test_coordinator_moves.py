"""The coordinator moves a class when executors cannot help: job O, at its most executors,
carries gold and recs beyond them; job T holds recs in standby with room for it. A round
starts a hand-off by ``coordinator``, checked and planned like an operator's, and starts
no other while it is under way (SQLite and PostgreSQL; the jobs' side is their samples
over the API)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.handoffs.service import advance
from backend.jobs.models import Job
from tests.backend.test_coordinator_api import MASTER, Cluster
from tests.backend.test_handoffs_api import SCENARIO
from tests.backend.test_jobs_api import SAMPLE_EPOCH_S, RecordingDispatcher, _job_token

EXECUTORS = 3
T0 = SAMPLE_EPOCH_S + 100


class Pair(Cluster):
    """Jobs ``O`` and ``T`` (which holds recs in standby) on the coordinated master."""

    def handoffs_after_round(self, t: float) -> list[dict[str, Any]]:
        """A coordinator round at ``t``; the hand-offs then listed."""
        self.round(t, EXECUTORS)
        return list(self.client.get("/api/v1/handoffs").json()["handoffs"])


@pytest.fixture
def pair(client: TestClient, db_session: Session) -> Pair:
    app: Any = client.app
    app.state.dispatcher = RecordingDispatcher()
    app.state.settings = app.state.settings.model_copy(
        update={
            "streams_redis_url": "redis://127.0.0.1:6379/0",
            "allowed_spark_masters": [MASTER],
            "cluster_executors": {MASTER: EXECUTORS},
        }
    )
    stored = client.post("/api/v1/scenarios", json={"yaml": SCENARIO})
    assert stored.status_code == 201, stored.text
    common = {
        "scenario_id": stored.json()["id"],
        "source": "redis",
        "spark_master": MASTER,
        "elastic": {"max_executors": 2},
    }
    origin = client.post("/api/v1/jobs", json=common)
    target = client.post("/api/v1/jobs", json={**common, "standby": ["recs"]})
    assert origin.status_code == 201 and target.status_code == 201, target.text
    ids = {"O": origin.json()["id"], "T": target.json()["id"]}
    for job_id in ids.values():  # what the launch does once the process runs
        row = db_session.get(Job, job_id)
        assert row is not None
        row.status = "running"
    db_session.commit()
    tokens = {job_id: _job_token(db_session, job_id) for job_id in ids.values()}
    return Pair(client, db_session, ids, tokens)


def test_an_overloaded_job_with_no_executor_to_gain_hands_its_lowest_class_over(
    pair: Pair,
) -> None:
    o, t = pair.jobs["O"], pair.jobs["T"]
    # O: gold 1.5 and recs 0.8 of its 2 executors (u 1.15), and the cluster's third is
    # T's, whose gold the allocation serves first; T has room for recs (0.1 + 0.8)
    loads = {o: {"gold": 1.5, "recs": 0.8, "slide": 0.0}, t: {"gold": 0.1, "recs": 0.0}}
    pair.report(T0, loads)
    [moving] = pair.handoffs_after_round(T0)
    assert (moving["class_name"], moving["origin_job_id"], moving["target_job_id"]) == (
        "recs", o, t,
    )  # fmt: skip
    assert moving["state"] == "planned" and moving["created_by"] == "coordinator"
    ranges = {
        j: pair.client.get(f"/api/v1/jobs/{j}/config").json()["config"]["ranges"]["recs"]
        for j in (o, t)
    }
    assert ranges[o]["until_s"] == ranges[t]["from_s"] == moving["switch_s"]
    # while it moves, the same loads start nothing more
    pair.report(T0 + 1, loads)
    assert [h["id"] for h in pair.handoffs_after_round(T0 + 1)] == [moving["id"]]
    # both jobs' logs hold the move, with the coordinator's reason; it is judged once
    # the periods after it are in (the hand-off's beat task judges its jobs' moves)
    for dt in range(2, 9):
        pair.report(T0 + dt, loads)
    advance(pair.session, T0 + 8)
    pair.session.commit()
    logged = {
        j: pair.client.get(f"/api/v1/jobs/{j}/actions", params={"kind": "move"}) for j in (o, t)
    }
    [out], [into] = (logged[j].json()["actions"] for j in (o, t))
    assert out["origin"] == into["origin"] == "handoff" and out["seq"] == moving["id"]
    assert out["class_name"] == "recs" and out["trigger"].startswith(f"recs moves to job {t} at ")
    assert into["trigger"].startswith(f"recs moves here from job {o} at ")
    assert f"asked by coordinator: job {o}'s classes use 1.15" in out["trigger"]
    assert out["usage"] == pytest.approx(2.3) and out["verdict"]["outcome"] == "unchanged"


def test_no_class_moves_to_a_job_without_room_for_it(pair: Pair) -> None:
    o, t = pair.jobs["O"], pair.jobs["T"]
    pair.report(T0, {o: {"gold": 1.5, "recs": 0.8}, t: {"gold": 0.4, "recs": 0.0}})
    assert pair.handoffs_after_round(T0) == []  # T would serve 1.2 of its one executor


def test_no_class_moves_while_executors_can_still_be_given(pair: Pair) -> None:
    o, t = pair.jobs["O"], pair.jobs["T"]
    pair.report(T0, {o: {"gold": 1.0, "recs": 0.8}, t: {"gold": 0.1, "recs": 0.0}})
    assert pair.handoffs_after_round(T0) == []  # O is given its second executor (u 0.9)

"""A class's hand-off between two running jobs on the control plane: the request checked
and planned, each job's range delivered as a configuration version (read by the job's
own long poll), the states moved on by the jobs' acknowledgements and the clock, and a
hand-off whose job did not apply its range in time given back (SQLite and PostgreSQL)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.handoffs.service import Move, advance, request
from backend.jobs.models import Job
from tests.backend.test_jobs_api import RecordingDispatcher, _job_token

SCENARIO = """
version: 1
name: handoffs
seed: 1
duration_s: 600
control: {period_s: 1.0, mode: dilos}
streams:
  - {name: clicks, keys: 8, arrival: {kind: constant, rate_per_s: 100}}
  - {name: views, keys: 8, arrival: {kind: constant, rate_per_s: 100}}
classes:
  - name: gold
    priority: 6
    delay_target_s: 5
    queries:
      - name: totals
        source: clicks
        operators:
          - {kind: window_aggregate, window: {size_s: 5}, function: count}
  - name: recs
    priority: 3
    delay_target_s: 5
    queries:
      - name: counts
        source: clicks
        operators:
          - {kind: window_aggregate, window: {size_s: 10}, function: count}
      - name: pairs
        source: clicks
        operators:
          - {kind: window_join, right: views, window: {size_s: 2}, sim: {selectivity: 1}}
  - name: slide
    priority: 1
    delay_target_s: 5
    queries:
      - name: smooth
        source: views
        operators:
          - {kind: window_aggregate, window: {type: sliding, size_s: 4, slide_s: 2}}
"""


@dataclass
class Jobs:
    client: TestClient
    session: Session
    origin: int
    target: int
    tokens: dict[int, dict[str, str]]

    def config(self, job_id: int) -> dict[str, Any]:
        """The newest configuration."""
        got = self.client.get(f"/api/v1/jobs/{job_id}/config")
        assert got.status_code == 200, got.text
        return dict(got.json()["config"])

    def polled(self, job_id: int, after: int) -> dict[str, Any]:
        """What the job's long poll gets after version ``after``."""
        got = self.client.get(
            f"/api/v1/jobs/{job_id}/control",
            params={"after_version": after, "wait_s": 0},
            headers=self.tokens[job_id],
        )
        assert got.status_code == 200, got.text
        return dict(got.json()["config"])

    def ack(self, job_id: int) -> None:
        version = self.config(job_id)["version"]
        acked = self.client.post(
            f"/api/v1/jobs/{job_id}/control/ack", json={"version": version},
            headers=self.tokens[job_id],
        )  # fmt: skip
        assert acked.status_code in (200, 204), acked.text

    def move(self, class_name: str = "recs", **fields: Any) -> Any:
        body = {
            "class_name": class_name,
            "origin_job_id": self.origin,
            "target_job_id": self.target,
            **fields,
        }
        return self.client.post("/api/v1/handoffs", json=body)

    def advance(self, now_s: float) -> list[str]:
        rows = advance(self.session, now_s)
        self.session.commit()
        return [r.state for r in rows]


def start(client: TestClient, scenario_id: int, **fields: Any) -> Any:
    return client.post(
        "/api/v1/jobs", json={"scenario_id": scenario_id, "source": "redis", **fields}
    )


@pytest.fixture
def jobs(client: TestClient, db_session: Session) -> Jobs:
    app: Any = client.app
    app.state.dispatcher = RecordingDispatcher()
    app.state.settings = app.state.settings.model_copy(
        update={"streams_redis_url": "redis://127.0.0.1:6379/0"}
    )
    stored = client.post("/api/v1/scenarios", json={"yaml": SCENARIO})
    assert stored.status_code == 201, stored.text
    origin = start(client, stored.json()["id"])
    target = start(client, stored.json()["id"], standby=["recs"])
    assert origin.status_code == 201 and target.status_code == 201, target.text
    ids = (origin.json()["id"], target.json()["id"])
    tokens = {job_id: _job_token(db_session, job_id) for job_id in ids}
    for job_id in ids:  # what the launch does once the process runs
        row = db_session.get(Job, job_id)
        assert row is not None
        row.status = "running"
    db_session.commit()
    return Jobs(client, db_session, *ids, tokens)


def test_a_class_moves_at_a_window_boundary_once_both_jobs_hold_their_ranges(
    jobs: Jobs,
) -> None:
    assert jobs.config(jobs.target)["ranges"] == {"recs": {"from_s": None, "until_s": 0.0}}
    before = time.time()
    made = jobs.move()
    assert made.status_code == 201, made.text
    handoff = made.json()
    switch = handoff["switch_s"]
    assert handoff["state"] == "planned" and switch % 10 == 0  # recs' 10 s windows
    # far enough ahead for both jobs to take their ranges before the target's first tuple
    # (the switch less the join's 2 s), and within one window of that
    assert before + 8 + 2 <= switch <= time.time() + 8 + 2 + 10
    assert handoff["deadline_s"] == pytest.approx(switch - 2 - 3)
    assert jobs.config(jobs.origin)["ranges"] == {"recs": {"from_s": None, "until_s": switch}}
    assert jobs.config(jobs.target)["ranges"] == {"recs": {"from_s": switch, "until_s": None}}
    polled = jobs.polled(jobs.target, 0)
    assert polled["version"] == handoff["target_version"] and polled["ranges"]["recs"]["from_s"]
    assert jobs.move().status_code == 409  # moving already
    # a move in both jobs' action logs, by the operator who asked
    for job_id in (jobs.origin, jobs.target):
        [action] = jobs.client.get(f"/api/v1/jobs/{job_id}/actions").json()["actions"]
        assert (action["kind"], action["origin"], action["seq"]) == (
            "move",
            "handoff",
            handoff["id"],
        )
        assert action["trigger"].endswith(f"asked by {handoff['created_by']}")

    for job_id in (jobs.origin, jobs.target):
        jobs.ack(job_id)
    assert jobs.advance(switch - 0.5) == []
    assert jobs.advance(switch) == ["switching"]
    assert jobs.advance(handoff["done_after_s"] - 0.1) == []
    assert jobs.advance(handoff["done_after_s"]) == ["done"]
    # the origin's watermark (30 s) and two control periods after the switch
    assert handoff["done_after_s"] == pytest.approx(switch + 32)
    listed = jobs.client.get("/api/v1/handoffs", params={"class_name": "recs"}).json()
    assert [h["state"] for h in listed["handoffs"]] == ["done"]
    assert math.isclose(listed["now_s"], time.time(), abs_tol=5)

    # and back, once the switch has passed: the origin computes no more of recs, the
    # target holds it now (the clock handed in: the switch is seconds ahead of this one)
    back = request(
        jobs.session, Move("recs", jobs.target, jobs.origin), handoff["done_after_s"] + 1, "ops"
    )
    jobs.session.commit()
    again = back.switch_s
    assert again > handoff["done_after_s"]
    assert jobs.config(jobs.origin)["ranges"]["recs"] == {"from_s": again, "until_s": None}
    assert jobs.config(jobs.target)["ranges"]["recs"] == {"from_s": switch, "until_s": again}


def test_a_job_that_does_not_apply_its_range_in_time_fails_the_hand_off_and_gets_it_back(
    jobs: Jobs,
) -> None:
    handoff = jobs.move().json()
    jobs.ack(jobs.origin)  # the target never acknowledges
    assert jobs.advance(handoff["deadline_s"] - 0.1) == []
    assert jobs.advance(handoff["deadline_s"]) == ["failed"]
    failed = jobs.client.get("/api/v1/handoffs").json()["handoffs"][0]
    assert "had not applied its range by the deadline" in failed["reason"]
    assert jobs.config(jobs.origin)["ranges"] == {}
    assert jobs.config(jobs.target)["ranges"] == {"recs": {"from_s": None, "until_s": 0.0}}
    assert jobs.move().status_code == 201  # the class can move again


def test_a_job_stopping_before_the_switch_fails_the_hand_off(jobs: Jobs) -> None:
    handoff = jobs.move().json()
    stopped = jobs.client.post(f"/api/v1/jobs/{jobs.target}/stop")
    assert stopped.status_code == 202, stopped.text
    row = jobs.session.get(Job, jobs.target)
    assert row is not None
    row.status = "stopped"
    jobs.session.commit()
    assert jobs.advance(handoff["requested_s"] + 1) == ["failed"]
    assert jobs.config(jobs.origin)["ranges"] == {}


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"class_name": "slide"}, "class_name", "sliding window"),
        ({"class_name": "ghost"}, "origin_job_id", "does not run class 'ghost'"),
        ({"class_name": "gold"}, "target_job_id", "computes class 'gold' already"),
        ({"target_job_id": "origin"}, "target_job_id", "must differ from origin_job_id"),
        ({"class_name": "no such name!"}, "class_name", "pattern"),
    ],
)
def test_a_move_that_cannot_be_made_is_refused_naming_the_field(
    jobs: Jobs, fields: dict[str, Any], field: str, words: str
) -> None:
    if fields.get("target_job_id") == "origin":
        fields = {"target_job_id": jobs.origin}
    refused = jobs.move(**fields)
    assert refused.status_code == 422, refused.text
    [item] = refused.json()["detail"]
    assert item["loc"][-1] == field and words in item["msg"]
    assert jobs.client.get("/api/v1/handoffs").json()["handoffs"] == []


def test_standby_is_checked_when_the_job_is_created(jobs: Jobs) -> None:
    stored = jobs.client.get("/api/v1/scenarios").json()[0]["id"]
    for fields, words in (
        ({"standby": ["slide"]}, "sliding window"),
        ({"standby": ["ghost"]}, "must name a class of the job"),
        ({"standby": ["recs"], "source": "generator"}, "start the job with source redis"),
    ):
        refused = start(jobs.client, stored, **fields)
        assert refused.status_code == 422, refused.text
        [item] = refused.json()["detail"]
        assert item["loc"][-1] == "standby" and words in item["msg"]


def test_a_generated_job_cannot_take_part(jobs: Jobs) -> None:
    stored = jobs.client.get("/api/v1/scenarios").json()[0]["id"]
    generated = start(jobs.client, stored, source="generator")
    assert generated.status_code == 201
    row = jobs.session.get(Job, generated.json()["id"])
    assert row is not None
    row.status = "running"
    jobs.session.commit()
    refused = jobs.move(class_name="recs", origin_job_id=generated.json()["id"])
    assert refused.status_code == 422
    [item] = refused.json()["detail"]
    assert item["loc"][-1] == "origin_job_id"

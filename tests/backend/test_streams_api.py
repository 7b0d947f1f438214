"""Declared streams: their columns are checked by the scenario format's rules, class
queries are checked against them (also when the columns change later), a stream read by
a query is kept, and a job's scenario carries the declared columns."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.jobs.models import Job
from tests.backend.test_jobs_api import RecordingDispatcher

TRADES: dict[str, Any] = {
    "name": "trades",
    "columns": [
        {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 20}},
        {"name": "amount", "type": "double"},
        {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 1}},
    ],
    "event_time": "ts",
}
MEANS = (
    "SELECT window(event_time, '5 seconds') AS w, account, avg(amount) AS mean "
    "FROM trades GROUP BY 1, account"
)


@pytest.fixture
def fraud(client: TestClient) -> str:
    created = client.post(
        "/api/v1/classes", json={"name": "fraud", "priority": 6, "delay_target_s": 2}
    )
    return f"/api/v1/classes/{created.json()['id']}/queries"


def test_declare_list_replace_delete(client: TestClient) -> None:
    created = client.post("/api/v1/streams", json=TRADES)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["event_time"] == "ts" and [c["name"] for c in body["columns"]] == [
        "account",
        "amount",
        "ts",
    ]
    assert client.post("/api/v1/streams", json=TRADES).status_code == 409
    url = f"/api/v1/streams/{body['id']}"
    wider = {
        **TRADES,
        "columns": [
            *TRADES["columns"],
            {
                "name": "desk",
                "type": "string",
                "generator": {"kind": "choice", "values": ["a", "b"]},
            },
        ],
    }
    assert client.put(url, json=wider).status_code == 200
    assert [s["name"] for s in client.get("/api/v1/streams").json()] == ["trades"]
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    ("change", "loc", "words"),
    [
        (
            {"event_time": "amount"},
            "event_time",
            "event_time='amount' is invalid: must name a timestamp column of stream 'trades'",
        ),
        ({"name": "stream.fraud"}, "name", "names starting with 'stream.' are the control"),
        ({"name": "a b"}, "name", "should match pattern"),
        ({"columns": []}, "columns", "at least 1 item"),
        ({"columns": [{"name": "seq", "type": "long"}]}, "columns", "is the engine's own"),
        (
            {"columns": [{"name": "x", "type": "string", "generator": {"kind": "normal"}}]},
            "columns",
            "a normal generator fills",
        ),
        (
            {"columns": [{"name": "x"}, {"name": "x"}], "event_time": None},
            "columns",
            "column 'x' is declared twice in stream 'trades'",
        ),
    ],
)
def test_a_bad_declaration_names_the_field_and_rule(
    client: TestClient, change: dict[str, Any], loc: str, words: str
) -> None:
    response = client.post("/api/v1/streams", json={**TRADES, **change})
    assert response.status_code == 422, response.text
    items = response.json()["detail"]
    assert any(loc in i["loc"] and words in i["msg"] for i in items), items
    assert client.get("/api/v1/streams").json() == []


def test_queries_are_checked_against_the_declared_columns(client: TestClient, fraud: str) -> None:
    sql = {"kind": "sql", "statement": MEANS}
    # before the declaration the stream has key and value only
    refused = client.post(fraud, json={"name": "means", "source": "trades", "operators": [sql]})
    assert refused.status_code == 422 and "reads column 'account'" in refused.text
    stream = client.post("/api/v1/streams", json=TRADES).json()
    stored = client.post(fraud, json={"name": "means", "source": "trades", "operators": [sql]})
    assert stored.status_code == 201, stored.text

    # a change that would break the stored query is refused and names it; nothing changes
    narrower = {**TRADES, "columns": TRADES["columns"][1:]}
    broken = client.put(f"/api/v1/streams/{stream['id']}", json=narrower)
    assert broken.status_code == 422, broken.text
    message = broken.json()["detail"][0]["msg"]
    assert "query 'means' of class 'fraud' reads stream 'trades'" in message
    assert "account" in message
    assert len(client.get(f"/api/v1/streams/{stream['id']}").json()["columns"]) == 3
    # a stream a query reads is neither deleted nor renamed
    deleted = client.delete(f"/api/v1/streams/{stream['id']}")
    assert deleted.status_code == 409 and "read by queries 'means'" in deleted.text
    renamed = client.put(f"/api/v1/streams/{stream['id']}", json={**TRADES, "name": "t2"})
    assert renamed.status_code == 409


def test_a_job_runs_the_declared_columns_and_a_sql_join_reads_both_streams(
    client: TestClient, fraud: str, db_session: Session
) -> None:
    client.post("/api/v1/streams", json=TRADES)
    quotes = {
        "name": "quotes",
        "columns": [
            {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 20}},
            {"name": "bid", "type": "double"},
        ],
    }
    assert client.post("/api/v1/streams", json=quotes).status_code == 201
    join = (
        "SELECT t.account, t.amount, q.bid FROM trades t JOIN quotes q ON t.account = "
        "q.account AND t.event_time BETWEEN q.event_time - INTERVAL 2 SECONDS AND "
        "q.event_time + INTERVAL 2 SECONDS"
    )
    stored = client.post(
        fraud,
        json={
            "name": "matched",
            "source": "trades",
            "operators": [{"kind": "sql", "statement": join}],
        },
    )
    assert stored.status_code == 201, stored.text
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    job = client.post("/api/v1/jobs", json={"rate_per_s": 100, "duration_s": 60})
    assert job.status_code == 201, job.text
    stored_job = db_session.get(Job, job.json()["id"])
    assert stored_job is not None
    streams = {s["name"]: s for s in stored_job.config["scenario"]["streams"]}
    assert set(streams) == {"trades", "quotes"}
    assert streams["trades"]["event_time"] == "ts"
    assert [c["name"] for c in streams["quotes"]["columns"]] == ["account", "bid"]


def test_a_job_reads_redis_and_writes_its_output_stream_only_where_the_plane_says(
    client: TestClient, fraud: str
) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    refused = client.post("/api/v1/jobs", json={"source": "redis"})
    assert refused.status_code == 422, refused.text
    [item] = refused.json()["detail"]
    assert item["loc"] == ["body", "source"] and "HEADROOM_STREAMS_REDIS_URL" in item["msg"]
    unknown = client.post("/api/v1/jobs", json={"sink": "/etc"})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"] == ["body", "sink"]

    app_state = client.app.state  # type: ignore[attr-defined]
    app_state.settings = app_state.settings.model_copy(
        update={"streams_redis_url": "redis://:secret@127.0.0.1:6379/0", "streams_prefix": "ops"}
    )
    job = client.post("/api/v1/jobs", json={"source": "redis", "sink": "redis"})
    assert job.status_code == 201, job.text
    engine = job.json()["launch"]["engine"]
    assert engine["source"] == "redis" and engine["redis_prefix"] == "ops"
    assert engine["sink"] == "redis" and engine["sink_path"] == f"ops:job:{job.json()['id']}:output"
    assert "secret" not in job.text
    files = client.post("/api/v1/jobs", json={"sink": "json"}).json()
    engine = files["launch"]["engine"]
    assert engine["redis_url"] in ("", None) and engine["source"] == "generator"
    assert engine["sink_path"].endswith(f"/{files['id']}/output")

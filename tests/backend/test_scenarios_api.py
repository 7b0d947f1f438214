"""Stored scenarios: validated on import (paths in errors), exported as written, and a
job launched from one carries it in its snapshot."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.backend.test_jobs_api import RecordingDispatcher

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "scenarios" / "demo.yaml").read_text()


def test_import_export_replace_delete(client: TestClient) -> None:
    created = client.post("/api/v1/scenarios", json={"yaml": DEMO})
    assert created.status_code == 201, created.text
    scenario = created.json()
    assert scenario["name"] and scenario["document"]["version"] == 1
    exported = client.get(f"/api/v1/scenarios/{scenario['id']}/export")
    assert exported.status_code == 200 and exported.text == DEMO
    assert exported.headers["content-type"].startswith("application/yaml")
    assert [s["id"] for s in client.get("/api/v1/scenarios").json()] == [scenario["id"]]

    duplicate = client.post("/api/v1/scenarios", json={"yaml": DEMO})
    assert duplicate.status_code == 409
    edited = DEMO.replace("duration_s:", "duration_s: 60 #", 1)
    replaced = client.put(f"/api/v1/scenarios/{scenario['id']}", json={"yaml": edited})
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["document"]["duration_s"] == 60
    assert client.delete(f"/api/v1/scenarios/{scenario['id']}").status_code == 204
    assert client.get(f"/api/v1/scenarios/{scenario['id']}").status_code == 404


def test_invalid_scenario_lists_every_issue_with_its_path(client: TestClient) -> None:
    bad = DEMO.replace("period_s:", "period_s: -1 #", 1)
    response = client.post("/api/v1/scenarios", json={"yaml": bad + "\nbogus_field: 1\n"})
    assert response.status_code == 422, response.text
    items = response.json()["detail"]
    paths = {item["loc"][-1] for item in items}
    assert "control.period_s" in paths and "bogus_field" in paths
    period = next(i for i in items if i["loc"][-1] == "control.period_s")
    assert "line" in period and "control.period_s" in period["msg"]
    assert client.get("/api/v1/scenarios").json() == []
    not_yaml = client.post("/api/v1/scenarios", json={"yaml": "a: [1"})
    assert not_yaml.status_code == 422 and "not valid YAML" in not_yaml.json()["detail"][0]["msg"]


def test_job_from_a_stored_scenario(client: TestClient) -> None:
    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    scenario = client.post("/api/v1/scenarios", json={"yaml": DEMO}).json()
    job = client.post("/api/v1/jobs", json={"scenario_id": scenario["id"], "duration_s": 30})
    assert job.status_code == 201, job.text
    names = {c["name"] for c in scenario["document"]["classes"]}
    assert {c["name"] for c in job.json()["classes"]} == names
    config = client.get(f"/api/v1/jobs/{job.json()['id']}/config").json()["config"]
    assert set(config["classes"]) == names
    missing = client.post("/api/v1/jobs", json={"scenario_id": 999})
    assert missing.status_code == 404

"""Query-class CRUD and validation, on SQLite and PostgreSQL built by Alembic."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

VALID = {"name": "fraud", "priority": 6, "delay_target_s": 1.5}


def test_health(client: TestClient) -> None:
    assert client.get("/api/v1/health").json() == {"status": "ok", "database": "ok"}


def test_create_list_get_update_delete(client: TestClient) -> None:
    created = client.post("/api/v1/classes", json=VALID)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["name"] == "fraud" and body["priority"] == 6 and body["delay_target_s"] == 1.5
    assert (body["tau0"], body["tau1"], body["tau2"], body["tau3"]) == (0.2, 0.4, 0.8, 0.95)
    assert body["catch_up"] is False  # a start's stale backlog is shed first
    class_id = body["id"]

    assert [c["name"] for c in client.get("/api/v1/classes").json()] == ["fraud"]
    assert client.get(f"/api/v1/classes/{class_id}").json()["id"] == class_id

    patched = client.patch(f"/api/v1/classes/{class_id}", json={"delay_target_s": 2.5})
    assert patched.status_code == 200 and patched.json()["delay_target_s"] == 2.5
    caught_up = client.patch(f"/api/v1/classes/{class_id}", json={"catch_up": True})
    assert caught_up.status_code == 200 and caught_up.json()["catch_up"] is True
    assert client.get(f"/api/v1/classes/{class_id}").json()["catch_up"] is True
    refused = client.patch(f"/api/v1/classes/{class_id}", json={"catch_up": "sometimes"})
    assert refused.status_code == 422
    assert [i["loc"][-1] for i in refused.json()["detail"]] == ["catch_up"]

    assert client.delete(f"/api/v1/classes/{class_id}").status_code == 204
    assert client.get(f"/api/v1/classes/{class_id}").status_code == 404
    assert client.get("/api/v1/classes").json() == []


def test_the_class_settings_are_listed_as_declared_and_a_new_class_gets_their_defaults(
    client: TestClient,
) -> None:
    listed = client.get("/api/v1/classes/settings")
    assert listed.status_code == 200, listed.text
    settings = {s["name"]: s for s in listed.json()}
    assert list(settings) == [
        "priority",
        "delay_target_s",
        "tau0",
        "tau1",
        "tau2",
        "tau3",
        "manager",
        "manager_params",
        "reserve_fraction",
        "max_lend_fraction",
        "catch_up",
        "max_shed_fraction",
    ]
    priority, reserve = settings["priority"], settings["reserve_fraction"]
    assert priority["required"] and priority["exclusive_minimum"] == 0.0
    assert priority["rule"] == "must be within (0, 1e+06]"
    assert (reserve["default"], reserve["minimum"], reserve["exclusive_maximum"]) == (0.05, 0, 1)
    assert settings["delay_target_s"]["unit"] == "s" and settings["catch_up"]["type"] == "bool"
    created = client.post("/api/v1/classes", json=VALID).json()
    for name, setting in settings.items():
        if not setting["required"]:
            assert created[name] == setting["default"], name
    out_of_bounds = client.post("/api/v1/classes", json={**VALID, "reserve_fraction": 1.0})
    assert out_of_bounds.status_code == 422
    assert reserve["rule"] in out_of_bounds.text


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"priority": 0}, "priority", "greater than 0"),
        ({"priority": -3}, "priority", "greater than 0"),
        ({"delay_target_s": 0}, "delay_target_s", "greater than or equal to 0.001"),
        ({"tau0": 0.0}, "tau0", "must be > 0"),
        ({"tau1": 0.1, "tau0": 0.2}, "tau1", "must be > tau0=0.2"),
        ({"tau2": 0.3}, "tau2", "must be > tau1=0.4"),
        ({"tau3": 0.8}, "tau3", "must be > tau2=0.8"),
        ({"tau3": 1.2}, "tau3", "must be <= 1"),
        ({"name": ""}, "name", "at least 1 character"),
        ({"name": "bad name!"}, "name", "match pattern"),
        ({"catch_up": "sometimes"}, "catch_up", "valid boolean"),
        ({"max_shed_fraction": 1.5}, "max_shed_fraction", "must be within [0, 1]"),
        ({"max_shed_fraction": -0.1}, "max_shed_fraction", "must be within [0, 1]"),
    ],
)
def test_invalid_input_names_field_value_rule_and_stores_nothing(
    client: TestClient, change: dict[str, object], field: str, words: str
) -> None:
    response = client.post("/api/v1/classes", json={**VALID, **change})
    assert response.status_code == 422, response.text
    [item] = [i for i in response.json()["detail"] if i["loc"][-1] == field]
    assert item["msg"].startswith(f"{field}="), item
    assert words in item["msg"], item
    assert repr(change[field]) in item["msg"] or str(change[field]) in item["msg"]
    assert client.get("/api/v1/classes").json() == []


def test_missing_field_is_named(client: TestClient) -> None:
    response = client.post("/api/v1/classes", json={"name": "x", "priority": 1})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "delay_target_s"]


def test_duplicate_name_is_a_conflict(client: TestClient) -> None:
    assert client.post("/api/v1/classes", json=VALID).status_code == 201
    second = client.post("/api/v1/classes", json=VALID)
    assert second.status_code == 409
    assert "name='fraud'" in second.json()["detail"]
    assert len(client.get("/api/v1/classes").json()) == 1


def test_partial_update_is_checked_against_stored_values(client: TestClient) -> None:
    class_id = client.post("/api/v1/classes", json=VALID).json()["id"]
    response = client.patch(f"/api/v1/classes/{class_id}", json={"tau2": 0.99})
    assert response.status_code == 422
    [item] = response.json()["detail"]
    assert item["loc"] == ["body", "tau3"] and "must be > tau2=0.99" in item["msg"]
    assert client.get(f"/api/v1/classes/{class_id}").json()["tau2"] == 0.8


def test_out_of_range_id_is_422_not_500(client: TestClient) -> None:
    assert client.get("/api/v1/classes/99999999999999").status_code == 422
    assert client.get("/api/v1/classes/0").status_code == 422

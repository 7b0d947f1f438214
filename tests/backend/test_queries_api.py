"""Continuous queries per class: validated in the scenario vocabulary (errors name the
path in the spec), shared between classes, and composed into the job's scenario."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.backend.test_jobs_api import RecordingDispatcher

FILTER = {"kind": "filter", "predicate": "value > 0.5"}


@pytest.fixture
def class_ids(client: TestClient) -> dict[str, int]:
    ids = {}
    for name, priority in (("fraud", 6), ("ads", 1)):
        ids[name] = client.post(
            "/api/v1/classes", json={"name": name, "priority": priority, "delay_target_s": 2}
        ).json()["id"]
    return ids


def test_create_list_replace_delete(client: TestClient, class_ids: dict[str, int]) -> None:
    url = f"/api/v1/classes/{class_ids['fraud']}/queries"
    created = client.post(url, json={"name": "big", "source": "trades", "operators": [FILTER]})
    assert created.status_code == 201, created.text
    query_id = created.json()["id"]
    assert [q["name"] for q in client.get(url).json()] == ["big"]
    window = {"kind": "window_aggregate", "window": {"type": "tumbling", "size_s": 5}}
    replaced = client.put(
        f"{url}/{query_id}", json={"name": "big", "source": "trades", "operators": [FILTER, window]}
    )
    assert replaced.status_code == 200 and len(replaced.json()["operators"]) == 2
    assert (
        client.post(url, json={"name": "big", "source": "t", "operators": [FILTER]}).status_code
        == 409
    )
    assert client.delete(f"{url}/{query_id}").status_code == 204
    assert client.get(url).json() == []


@pytest.mark.parametrize(
    ("operators", "path", "words"),
    [
        ([{"kind": "explode"}], "operators[0]", "kind"),
        (
            [{"kind": "window_aggregate", "window": {"type": "tumbling", "size_s": -5}}],
            "operators[0].window.size_s",
            "must be >= 0.001",
        ),
        (
            [
                {
                    "kind": "window_aggregate",
                    "window": {"type": "sliding", "size_s": 5, "slide_s": 9},
                }
            ],
            "operators[0].window",
            "slide_s",
        ),
        (
            [
                {"kind": "project", "columns": ["value"]},
                {
                    "kind": "window_join",
                    "right": "other",
                    "window": {"size_s": 1},
                    "on_column": "key",
                    "sim": {"selectivity": 1},
                },
            ],
            "operators[1].on_column",
            "join column 'key'",
        ),
        (
            [{"kind": "sql", "statement": "SELECT key, avg(price) FROM trades GROUP BY key"}],
            "operators[0].statement",
            "reads column 'price' at position 17",
        ),
        (
            [
                {
                    "kind": "sql",
                    "statement": "SELECT reflect('java.lang.System', 'exit') FROM trades",
                }
            ],
            "operators[0].statement",
            "'reflect'",
        ),
        (
            [{"kind": "sql", "statement": "SELECT key FROM trades ORDER BY key"}],
            "operators[0].statement",
            "uses ORDER at position 24",
        ),
    ],
)
def test_bad_spec_names_the_path(client: TestClient, class_ids, operators, path, words) -> None:
    url = f"/api/v1/classes/{class_ids['fraud']}/queries"
    response = client.post(url, json={"name": "q", "source": "trades", "operators": operators})
    assert response.status_code == 422, response.text
    items = response.json()["detail"]
    assert any(i["loc"][-1].startswith(path) and words in i["msg"] for i in items), items
    assert client.get(url).json() == []


def test_a_class_query_in_sql_is_stored_and_composed_into_the_jobs_scenario(
    client: TestClient, class_ids: dict[str, int]
) -> None:
    url = f"/api/v1/classes/{class_ids['fraud']}/queries"
    statement = (
        "SELECT window(event_time, '5 seconds') AS w, key, avg(value) AS mean FROM trades "
        "WHERE value > 0.5 GROUP BY 1, key"
    )
    sql = {"kind": "sql", "statement": statement}
    created = client.post(url, json={"name": "means", "source": "trades", "operators": [sql]})
    assert created.status_code == 201, created.text
    assert created.json()["operators"][0]["statement"] == statement


def test_sharing_across_classes(client: TestClient, class_ids: dict[str, int]) -> None:
    fraud = f"/api/v1/classes/{class_ids['fraud']}/queries"
    ads = f"/api/v1/classes/{class_ids['ads']}/queries"
    missing = client.post(ads, json={"name": "q", "source": "query:clean", "operators": [FILTER]})
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["loc"] == ["body", "source"]
    assert "names no shared query" in missing.json()["detail"][0]["msg"]

    shared = client.post(
        fraud,
        json={
            "name": "clean",
            "source": "trades",
            "shared": True,
            "operators": [{"kind": "project", "columns": ["key", "value"]}],
        },
    )
    assert shared.status_code == 201, shared.text
    for url in (fraud, ads):
        reader = client.post(
            url, json={"name": "hot", "source": "query:clean", "operators": [FILTER]}
        )
        assert reader.status_code == 201, reader.text

    client.app.state.dispatcher = RecordingDispatcher()  # type: ignore[attr-defined]
    job = client.post("/api/v1/jobs", json={"rate_per_s": 100, "duration_s": 60}).json()
    config = client.get(f"/api/v1/jobs/{job['id']}/config").json()
    assert set(config["config"]["classes"]) == {"fraud", "ads"}

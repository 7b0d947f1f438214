"""Probe (issue 42, finding 7): changes that pull a source from under stored queries.

Before: a declared column's type could change under a query that reads it (a filter
``amount > 100`` kept running on a string), a change reached only the queries reading
the stream directly (not those reading it through a shared query), and a shared query
could be deleted, renamed or unshared while another class read it (a stream gets 409).
Now each is refused, naming the query that reads the source and the rule.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

TRADES: dict[str, Any] = {
    "name": "trades",
    "columns": [
        {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 20}},
        {"name": "amount", "type": "double"},
        {"name": "desk", "type": "string", "generator": {"kind": "choice", "values": ["a"]}},
    ],
}
AMOUNT_AS_STRING = {
    "name": "amount",
    "type": "string",
    "generator": {"kind": "choice", "values": ["x"]},
}


def _class(client: TestClient, name: str, priority: int) -> str:
    created = client.post(
        "/api/v1/classes", json={"name": name, "priority": priority, "delay_target_s": 2}
    )
    assert created.status_code == 201, created.text
    return f"/api/v1/classes/{created.json()['id']}"


def _query(client: TestClient, url: str, body: dict[str, Any]) -> str:
    created = client.post(f"{url}/queries", json=body)
    assert created.status_code == 201, created.text
    return f"{url}/queries/{created.json()['id']}"


def _with(column: dict[str, Any]) -> dict[str, Any]:
    """TRADES with ``column`` in place of the one of its name."""
    columns = [column if c["name"] == column["name"] else c for c in TRADES["columns"]]
    return {**TRADES, "columns": columns}


def _refusals(answer: Any) -> dict[str, str]:
    """A 422's messages by the field they are on (several on one field joined)."""
    assert answer.status_code == 422, answer.text
    found: dict[str, str] = {}
    for item in answer.json()["detail"]:
        field = item["loc"][-1]
        found[field] = f"{found[field]}\n{item['msg']}" if field in found else item["msg"]
    return found


def test_a_column_a_stored_query_reads_keeps_its_type(client: TestClient) -> None:
    stream = client.post("/api/v1/streams", json=TRADES).json()
    url = f"/api/v1/streams/{stream['id']}"
    fraud, ads = _class(client, "fraud", 6), _class(client, "ads", 1)
    _query(
        client,
        fraud,
        {
            "name": "big",
            "source": "trades",
            "operators": [{"kind": "filter", "predicate": "amount > 100"}],
        },
    )
    # a shared query that does not read ``account``; a reader of it in another class does
    _query(
        client,
        fraud,
        {
            "name": "clean",
            "source": "trades",
            "shared": True,
            "operators": [{"kind": "filter", "predicate": "amount > 0"}],
        },
    )
    _query(
        client,
        ads,
        {
            "name": "few",
            "source": "query:clean",
            "operators": [{"kind": "filter", "predicate": "account < 5"}],
        },
    )

    refused = _refusals(client.put(url, json=_with(AMOUNT_AS_STRING)))
    assert list(refused) == ["columns[1].type"], refused
    message = refused["columns[1].type"]
    assert "query 'big' of class 'fraud' reads column 'amount' of stream 'trades'" in message
    assert "checked as double" in message and "(double -> string refused)" in message
    assert "query 'clean' of class 'fraud' reads column 'amount'" in message
    assert client.get(url).json()["columns"][1]["type"] == "double"  # nothing changed

    # read through the shared query only: still refused, naming the reader
    account = {"name": "account", "type": "double"}
    refused = _refusals(client.put(url, json=_with(account)))
    assert "query 'few' of class 'ads' reads column 'account' of stream 'trades'" in str(refused)
    # and so is dropping the column (it was checked on direct readers only)
    dropped = {**TRADES, "columns": TRADES["columns"][1:]}
    refused = _refusals(client.put(url, json=dropped))
    assert "query 'few' of class 'ads' reads stream 'trades' and would fail" in refused["columns"]

    # a column no stored query reads may change its type
    desk = {"name": "desk", "type": "long", "generator": {"kind": "choice", "values": [1, 2]}}
    assert client.put(url, json=_with(desk)).status_code == 200


def test_a_shared_query_another_class_reads_is_kept(client: TestClient) -> None:
    fraud, ads = _class(client, "fraud", 6), _class(client, "ads", 1)
    clean_body = {
        "name": "clean",
        "source": "trades",
        "shared": True,
        "operators": [{"kind": "project", "columns": ["key", "value"]}],
    }
    clean = _query(client, fraud, clean_body)
    hot = _query(
        client,
        ads,
        {
            "name": "hot",
            "source": "query:clean",
            "operators": [{"kind": "filter", "predicate": "value > 0.5"}],
        },
    )
    readers = "shared query 'clean' is read by query 'hot' of class 'ads'"

    deleted = client.delete(clean)
    assert deleted.status_code == 409, deleted.text
    assert readers in deleted.json()["detail"] and "delete or change them first" in deleted.text
    for change in ({"name": "clean2"}, {"shared": False}):
        changed = client.put(clean, json={**clean_body, **change})
        assert changed.status_code == 409 and readers in changed.json()["detail"], changed.text
    narrower = {**clean_body, "operators": [{"kind": "project", "columns": ["key"]}]}
    refused = _refusals(client.put(clean, json=narrower))["operators"]
    assert "query 'hot' of class 'ads' reads shared query 'clean' and would fail" in refused
    owner = client.delete(fraud)
    assert owner.status_code == 409, owner.text
    assert "query 'hot' of class 'ads' reads shared query 'clean'" in owner.json()["detail"]
    assert client.get(clean).json()["operators"] == clean_body["operators"]  # all kept

    assert client.delete(hot).status_code == 204
    assert client.delete(clean).status_code == 204
    assert client.delete(fraud).status_code == 204

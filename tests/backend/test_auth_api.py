"""Who may do what: the authorization matrix, login, logout, user management."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.backend.conftest import PASSWORD, login_headers

CLASS = {"name": "fraud", "priority": 6, "delay_target_s": 1.5}

# (method, path, body) of every user-facing route that reads or changes something.
READS = [
    ("GET", "/api/v1/classes", None),
    ("GET", "/api/v1/classes/1", None),
    ("GET", "/api/v1/jobs", None),
    ("GET", "/api/v1/jobs/1", None),
    ("GET", "/api/v1/jobs/1/metrics", None),
    ("GET", "/api/v1/jobs/1/log", None),
    ("GET", "/api/v1/auth/me", None),
]
CHANGES = [
    ("POST", "/api/v1/classes", CLASS),
    ("PATCH", "/api/v1/classes/1", {"priority": 2}),
    ("DELETE", "/api/v1/classes/1", None),
    ("POST", "/api/v1/jobs", {}),
    ("POST", "/api/v1/jobs/1/stop", None),
    ("POST", "/api/v1/jobs/1/restart", None),
]
ADMIN_ONLY = [
    ("GET", "/api/v1/users", None),
    ("POST", "/api/v1/users", {"username": "new", "password": "longenough", "role": "viewer"}),
    ("PATCH", "/api/v1/users/1", {"role": "operator"}),
]


@pytest.mark.parametrize(("method", "path", "body"), READS + CHANGES + ADMIN_ONLY)
def test_no_credentials_is_401(anonymous: TestClient, method: str, path: str, body) -> None:
    response = anonymous.request(method, path, json=body)
    assert response.status_code == 401, response.text
    assert "Bearer" in response.json()["detail"]


@pytest.mark.parametrize(("method", "path", "body"), CHANGES + ADMIN_ONLY)
def test_viewer_change_is_403(anonymous: TestClient, method: str, path: str, body) -> None:
    response = anonymous.request(
        method, path, json=body, headers=login_headers(anonymous, "viewer")
    )
    assert response.status_code == 403, response.text
    assert "role='viewer'" in response.json()["detail"]


@pytest.mark.parametrize(("method", "path", "body"), READS)
def test_viewer_reads(anonymous: TestClient, method: str, path: str, body) -> None:
    response = anonymous.request(
        method, path, json=body, headers=login_headers(anonymous, "viewer")
    )
    assert response.status_code in (200, 404), response.text


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ONLY)
def test_operator_cannot_manage_users(anonymous: TestClient, method: str, path: str, body):
    response = anonymous.request(method, path, json=body, headers=login_headers(anonymous, "ops"))
    assert response.status_code == 403


def test_admin_manages_users(anonymous: TestClient) -> None:
    admin = login_headers(anonymous, "admin")
    created = anonymous.post(
        "/api/v1/users",
        json={"username": "carol", "password": "s3cret-enough", "role": "operator"},
        headers=admin,
    )
    assert created.status_code == 201, created.text
    assert "password" not in created.text and "s3cret" not in created.text
    carol = {"Authorization": login_headers_for(anonymous, "carol", "s3cret-enough")}
    assert anonymous.post("/api/v1/classes", json=CLASS, headers=carol).status_code == 201

    user_id = created.json()["id"]
    demoted = anonymous.patch(f"/api/v1/users/{user_id}", json={"role": "viewer"}, headers=admin)
    assert demoted.json()["role"] == "viewer"
    assert anonymous.delete("/api/v1/classes/1", headers=carol).status_code == 403

    anonymous.patch(f"/api/v1/users/{user_id}", json={"active": False}, headers=admin)
    assert anonymous.get("/api/v1/classes", headers=carol).status_code == 401

    duplicate = anonymous.post(
        "/api/v1/users", json={"username": "carol", "password": "whatever1"}, headers=admin
    )
    assert duplicate.status_code == 409
    short = anonymous.post(
        "/api/v1/users", json={"username": "dave", "password": "short"}, headers=admin
    )
    assert short.status_code == 422 and short.json()["detail"][0]["loc"][-1] == "password"
    assert "short" not in short.json()["detail"][0]["msg"]  # a password is never echoed


def login_headers_for(client: TestClient, username: str, password: str) -> str:
    response = client.post("/api/v1/auth/login", json={"username": username, "password": password})
    assert response.status_code == 200, response.text
    return f"Bearer {response.json()['access_token']}"


def test_wrong_password_and_unknown_user_look_the_same(anonymous: TestClient) -> None:
    wrong = anonymous.post("/api/v1/auth/login", json={"username": "ops", "password": "nope"})
    unknown = anonymous.post("/api/v1/auth/login", json={"username": "zed", "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()


def test_logout_revokes_the_token(anonymous: TestClient) -> None:
    headers = login_headers(anonymous, "viewer")
    me = anonymous.get("/api/v1/auth/me", headers=headers).json()
    assert me["username"] == "viewer" and me["role"] == "viewer"
    assert anonymous.post("/api/v1/auth/logout", headers=headers).status_code == 204
    assert anonymous.get("/api/v1/auth/me", headers=headers).status_code == 401


def test_garbage_token_is_401(anonymous: TestClient) -> None:
    response = anonymous.get("/api/v1/classes", headers={"Authorization": "Bearer nonsense"})
    assert response.status_code == 401

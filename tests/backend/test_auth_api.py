"""Login, logout and user management (who may call what: tests/backend/test_role_matrix.py)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api_fixtures import PASSWORD, login_headers

CLASS = {"name": "fraud", "priority": 6, "delay_target_s": 1.5}


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

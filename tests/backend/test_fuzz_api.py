"""Schemathesis against the OpenAPI spec: at least 1,000 generated requests, no 5xx."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from sqlalchemy.orm import Session

from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings
from backend.users.models import Role
from tests.backend.conftest import login_headers, make_user
from tests.backend.test_jobs_api import RecordingDispatcher

EXAMPLES_PER_OPERATION = 50
# Long polls (metrics with wait_s) wait for real when nothing comes; their waiting is
# tested in test_wakeups, here only their answers.
MAX_WAIT_S = 0.05
# Left out: logging out would revoke the token the fuzzer uses, the event stream never
# ends by design, and deactivating the fuzzer's own account would turn the rest into 401s.
SKIPPED = {
    ("POST", "/api/v1/auth/logout"),
    ("GET", "/api/v1/jobs/{job_id}/metrics/stream"),
    ("PATCH", "/api/v1/users/{user_id}"),
}


def test_no_server_error_in_generated_requests(tmp_path: Path) -> None:
    settings_ = Settings(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'fuzz.db'}")
    upgrade(settings_.sqlalchemy_url)
    app = create_app(settings_, dispatcher=RecordingDispatcher())
    with Session(app.state.engine) as session:
        make_user(session, "admin", Role.ADMIN)
    client = TestClient(app)
    auth = login_headers(client, "admin")
    # Something to find: a class and a job, so ids 1 hit real rows too.
    client.post(
        "/api/v1/classes", json={"name": "seed", "priority": 1, "delay_target_s": 1}, headers=auth
    )
    client.post("/api/v1/jobs", json={}, headers=auth)

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    sent = 0
    server_errors: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED:
            continue

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def exercise(case: Any) -> None:
            nonlocal sent
            wait_s = (case.query or {}).get("wait_s")
            if isinstance(wait_s, int | float) and wait_s > MAX_WAIT_S:
                case.query["wait_s"] = MAX_WAIT_S  # a long poll really waits: keep it short
            response = case.call(headers=auth)
            sent += 1
            if response.status_code >= 500:
                server_errors.append(
                    f"{case.method} {case.formatted_path} → "
                    f"{response.status_code}: {response.text[:200]}"
                )

        exercise()
    print(f"\nschemathesis: {sent} generated requests, {len(server_errors)} server errors")
    assert not server_errors, "\n".join(server_errors[:20])
    assert sent >= 1000

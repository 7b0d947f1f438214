"""Schemathesis against the OpenAPI spec, as viewer, operator and admin, on SQLite and on
PostgreSQL: every generated request is answered without a server error, and every answer
whose status the spec documents matches the documented schema.

At least 1,000 generated requests per database (2,000 in all); the counts are printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import response_schema_conformance
from sqlalchemy.orm import Session

from backend.db import utcnow
from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings
from backend.users.models import ApiToken, Role
from backend.users.repository import UserRepository
from backend.users.security import new_token, token_digest
from tests.api_fixtures import make_user
from tests.backend.test_jobs_api import RecordingDispatcher

EXAMPLES_PER_OPERATION = 10
MIN_REQUESTS_PER_DATABASE = 1000
ROLES = {"viewer": Role.VIEWER, "ops": Role.OPERATOR, "admin": Role.ADMIN}
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


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of this test's own, built by ``alembic upgrade head``."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'fuzz.db'}"
    else:
        url = str(request.getfixturevalue("empty_postgres_url"))
    upgrade(url)
    yield url


def _token(session: Session, username: str) -> dict[str, str]:
    user = UserRepository(session).by_username(username)
    assert user is not None
    token = new_token()
    expires_at = utcnow() + timedelta(hours=1)
    UserRepository(session).add_token(
        ApiToken(user_id=user.id, digest=token_digest(token), expires_at=expires_at)
    )
    session.commit()
    return {"Authorization": f"Bearer {token}"}


def fuzz(
    operation: Any,
    username: str,
    headers: dict[str, str],
    sent: dict[str, int],
    server_errors: list[str],
    violations: list[str],
) -> None:
    """Up to EXAMPLES_PER_OPERATION generated requests to one operation as ``username``."""

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy())
    def exercise(case: Any) -> None:
        wait_s = (case.query or {}).get("wait_s")
        if isinstance(wait_s, int | float) and wait_s > MAX_WAIT_S:
            case.query["wait_s"] = MAX_WAIT_S  # a long poll really waits: keep it short
        sent[username] += 1
        try:
            response = case.call(headers=headers)
        except Exception as error:  # the app raised: the test client re-raises a 500's cause
            server_errors.append(f"{username}: {case.method} {case.formatted_path}: {error!r}")
            return
        where = f"{username}: {case.method} {case.formatted_path} → {response.status_code}"
        if response.status_code >= 500:
            server_errors.append(f"{where}: {response.text[:200]}")
            return
        try:
            case.validate_response(response, checks=[response_schema_conformance])
        except (Failure, FailureGroup) as failure:
            violations.append(f"{where}: {str(failure)[:300]}")

    exercise()


def test_generated_requests_get_no_server_error_and_documented_answers(
    database_url: str, tmp_path: Path
) -> None:
    app = create_app(
        Settings(data_dir=tmp_path, database_url=database_url), dispatcher=RecordingDispatcher()
    )
    with Session(app.state.engine) as session:
        for username, role in ROLES.items():
            make_user(session, username, role)
        auth = {username: _token(session, username) for username in ROLES}
    # Its lifespan stops what requests started (the previews' worker processes).
    with TestClient(app) as client:
        # Something to find: a class and a job, so ids 1 hit real rows too.
        client.post(
            "/api/v1/classes",
            json={"name": "seed", "priority": 1, "delay_target_s": 1},
            headers=auth["admin"],
        )
        client.post("/api/v1/jobs", json={}, headers=auth["admin"])

        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
        sent: dict[str, int] = {}
        server_errors: list[str] = []
        violations: list[str] = []
        for username, headers in auth.items():
            sent[username] = 0
            for result in schema.get_all_operations():
                assert isinstance(result, Ok), f"the spec has an invalid operation: {result}"
                operation = result.ok()
                if (operation.method.upper(), operation.path) not in SKIPPED:
                    fuzz(operation, username, headers, sent, server_errors, violations)
    total = sum(sent.values())
    print(
        f"\nschemathesis ({database_url.split(':', maxsplit=1)[0]}): {total} generated requests "
        f"({', '.join(f'{k} {v}' for k, v in sent.items())}), "
        f"{len(server_errors)} server errors, {len(violations)} schema violations"
    )
    assert not server_errors, "\n".join(server_errors[:20])
    assert not violations, "\n".join(violations[:20])
    assert total >= MIN_REQUESTS_PER_DATABASE

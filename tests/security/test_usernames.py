"""Probe (issue 42, finding 7): usernames that differ only in case.

Before: an admin could create ``ADMIN`` beside ``admin`` (two accounts a reader of the
audit trail takes for one), and ``ops``, ``OPS`` and ``Ops`` each had a failure window of
their own at login. Now a username is unique regardless of case (a unique index on
``lower(username)``, added by a migration that lists the accounts it cannot take rather
than merging them), and a login matches it regardless of case, its failures counted once.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError

from backend.db import make_engine
from backend.migrate import alembic_config, upgrade
from backend.settings import Settings
from tests.api_fixtures import PASSWORD, login_headers

LOGIN = "/api/v1/auth/login"


def test_a_username_that_differs_only_in_case_is_taken(anonymous: TestClient) -> None:
    admin = login_headers(anonymous, "admin")
    for name in ("ADMIN", "Admin", "OPS"):
        created = anonymous.post(
            "/api/v1/users",
            headers=admin,
            json={"username": name, "password": "another long password", "role": "admin"},
        )
        assert created.status_code == 409, created.text
        detail = created.json()["detail"]
        assert f"username={name!r} is taken (as {name.lower()!r})" in detail
        assert "unique regardless of case" in detail
    users = anonymous.get("/api/v1/users", headers=admin).json()
    assert sorted(u["username"] for u in users) == ["admin", "ops", "viewer"]


def test_a_login_matches_the_username_regardless_of_case(anonymous: TestClient) -> None:
    answer = anonymous.post(LOGIN, json={"username": "OPS", "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    assert answer.json()["username"] == "ops" and answer.json()["role"] == "operator"
    # a character Python would fold into ASCII (the Kelvin sign into "k") matches nothing
    kelvin = anonymous.post(LOGIN, json={"username": "\u212aelvin", "password": PASSWORD})
    assert kelvin.status_code == 401


def test_failed_logins_count_once_whatever_the_case(anonymous: TestClient) -> None:
    limit = Settings().login_failures_per_user
    spellings = ["ops", "OPS", "Ops", "oPS"]
    codes = [
        anonymous.post(
            LOGIN, json={"username": spellings[i % len(spellings)], "password": f"guess-{i}"}
        ).status_code
        for i in range(limit)
    ]
    assert codes == [401] * limit
    blocked = anonymous.post(LOGIN, json={"username": "oPs", "password": PASSWORD})
    assert blocked.status_code == 429, blocked.text


# --- the migration ----------------------------------------------------------------------

CLASHING = ["ADMIN", "admin", "Ops", "ops", "solo"]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def at_0010(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    """A database at revision 0010 whose users include names that differ only in case."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'm.db'}"
    else:
        url = str(request.getfixturevalue("empty_postgres_url"))
    command.upgrade(alembic_config(url), "0010")
    engine = make_engine(url)
    with engine.begin() as conn:
        for name in CLASHING:
            conn.execute(
                text(
                    "INSERT INTO users (username, password_hash, role, active, created_at) "
                    "VALUES (:name, 'x', 'viewer', true, :at)"
                ),
                {"name": name, "at": datetime(2026, 1, 1, tzinfo=UTC)},
            )
    yield url, engine
    engine.dispose()


def _state(engine: Engine) -> tuple[str, list[str]]:
    with engine.connect() as conn:
        revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        names = conn.execute(text("SELECT username FROM users ORDER BY id")).scalars().all()
    return revision, list(names)


def test_the_migration_lists_clashing_usernames_and_changes_nothing(
    at_0010: tuple[str, Engine],
) -> None:
    url, engine = at_0010
    with pytest.raises(RuntimeError) as refused:
        upgrade(url)
    message = str(refused.value)
    assert "differ only in case: 'ADMIN', 'admin'; 'Ops', 'ops'." in message
    assert "solo" not in message and "rename or delete" in message
    assert _state(engine) == ("0010", CLASHING)  # nothing merged, renamed or dropped

    with engine.begin() as conn:  # the operator resolves the clashes
        conn.execute(text("UPDATE users SET username = 'admin-2' WHERE username = 'ADMIN'"))
        conn.execute(text("DELETE FROM users WHERE username = 'Ops'"))
    upgrade(url)  # through 0011 to the head revision
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert _state(engine) == (head, ["admin-2", "admin", "ops", "solo"])
    with pytest.raises(IntegrityError), engine.begin() as conn:  # the index holds the rule
        conn.execute(text("UPDATE users SET username = 'SOLO' WHERE username = 'admin-2'"))

"""Fixtures of the API tests (backend, security): a database built by ``alembic upgrade
head`` (SQLite and PostgreSQL), each test inside a rolled-back transaction, and clients.

Registered once, in ``tests/conftest.py``, so every folder shares the same session-scoped
databases (a second registration would build a second set on the same PostgreSQL
database and collide on its users).

Every pytest run imports this module (through ``tests/conftest.py``), most of them for
tests that never use an API: the application and database modules are imported inside
the fixtures and helpers, only when a test needs them (about 2 s of start-up otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from fastapi.testclient import TestClient
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session

    from backend.users.models import Role


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)]
)
def migrated_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """An engine on a database built only by ``alembic upgrade head``."""
    from sqlalchemy.orm import Session

    from backend.db import make_engine
    from backend.migrate import upgrade
    from backend.users.models import Role

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    upgrade(url)
    engine = make_engine(url)
    # Users are made once per database (password hashing is deliberately slow).
    with Session(engine) as session:
        for username, role in (
            ("admin", Role.ADMIN),
            ("ops", Role.OPERATOR),
            ("viewer", Role.VIEWER),
        ):
            make_user(session, username, role)
    yield engine
    engine.dispose()


@pytest.fixture
def db_session(migrated_engine: Engine) -> Iterator[Session]:
    """A session whose commits are savepoints inside one transaction rolled back at the end."""
    from sqlalchemy.orm import Session

    connection = migrated_engine.connect()
    transaction = connection.begin()
    session = Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )
    try:
        yield session
    finally:
        session.close()
        transaction.rollback()
        connection.close()


PASSWORD = "correct horse battery"


def make_user(session: Session, username: str, role: Role) -> None:
    from backend.users.schemas import UserCreate
    from backend.users.service import create_user

    create_user(session, UserCreate(username=username, password=PASSWORD, role=role))
    session.commit()


def login_headers(client: TestClient, username: str) -> dict[str, str]:
    response = client.post("/api/v1/auth/login", json={"username": username, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


@pytest.fixture
def anonymous(db_session: Session, migrated_engine: Engine, tmp_path: Path) -> Iterator[TestClient]:
    """A client with no credentials; users admin, ops and viewer exist."""
    from fastapi.testclient import TestClient

    from backend.api.deps import get_read_sessions, get_session
    from backend.main import create_app
    from backend.settings import Settings

    settings = Settings(
        data_dir=tmp_path,
        database_url=str(migrated_engine.url.render_as_string(hide_password=False)),
    )
    app = create_app(settings)

    def _session() -> Iterator[Session]:  # as get_session: commit, or roll back on error
        try:
            yield db_session
            db_session.commit()
        except BaseException:
            db_session.rollback()
            raise

    app.dependency_overrides[get_session] = _session
    app.dependency_overrides[get_read_sessions] = lambda: lambda: nullcontext(db_session)
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def client(anonymous: TestClient) -> TestClient:
    """Logged in as an operator (changes classes and jobs, cannot manage users)."""
    anonymous.headers.update(login_headers(anonymous, "ops"))
    return anonymous

"""API tests against a migrated database, each test inside a rolled-back transaction."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from backend.api.deps import get_session
from backend.db import make_engine
from backend.main import create_app
from backend.migrate import upgrade
from backend.settings import Settings


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def migrated_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """An engine on a database built only by ``alembic upgrade head``."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


@pytest.fixture
def db_session(migrated_engine: Engine) -> Iterator[Session]:
    """A session whose commits are savepoints inside one transaction rolled back at the end."""
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


@pytest.fixture
def client(db_session: Session, migrated_engine: Engine, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path,
        database_url=str(migrated_engine.url.render_as_string(hide_password=False)),
    )
    app = create_app(settings)

    def _session() -> Iterator[Session]:
        yield db_session
        db_session.commit()

    app.dependency_overrides[get_session] = _session
    with TestClient(app) as test_client:
        yield test_client

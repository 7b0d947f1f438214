"""The schema is Alembic's: migrations build exactly the models, and undo cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from backend.db import make_engine
from backend.migrate import alembic_config, upgrade
from backend.models import Base


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'm.db'}"
    # A second, empty schema-less database would need CREATE DATABASE; reuse the session
    # database only for the model comparison (it is at head already).
    return str(request.getfixturevalue("postgres_url"))


def test_models_match_migrations(fresh_url: str) -> None:
    upgrade(fresh_url)
    engine = make_engine(fresh_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == [], f"models and migrations disagree: {diff}"


def test_downgrade_to_base_and_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    upgrade(url)
    command.downgrade(alembic_config(url), "base")
    engine = make_engine(url)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    upgrade(url)
    engine = make_engine(url)
    assert {"jobs", "query_classes", "metric_samples", "users"} <= set(
        inspect(engine).get_table_names()
    )
    engine.dispose()

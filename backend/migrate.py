"""Run Alembic migrations from code (the start command and the tests use this)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection

ROOT = Path(__file__).resolve().parents[1]


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["configure_logging"] = False
    if url is not None:
        config.attributes["url"] = url
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(url: str | None = None, connection: Connection | None = None) -> None:
    """Bring the database at ``url`` (default: the settings' database) to the head revision."""
    command.upgrade(alembic_config(url, connection), "head")

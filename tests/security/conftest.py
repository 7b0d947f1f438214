"""The probes of the security review reuse the API tests' fixtures: a migrated SQLite and
PostgreSQL database, each test in a rolled-back transaction, users admin/ops/viewer."""

from tests.backend.conftest import anonymous, client, db_session, migrated_engine

__all__ = ["anonymous", "client", "db_session", "migrated_engine"]

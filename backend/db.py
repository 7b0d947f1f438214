"""Engine, sessions, the declarative base, and work deferred until after commit.

The request-scoped session (``backend.api.deps``) and the task-scoped session
(``session_scope``) are the only places that commit; services only flush. Work that
must not run unless the transaction is durable (enqueueing a Celery task) is registered
with ``after_commit`` and runs right after the commit succeeds; a rollback discards it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, Engine, MetaData, TypeDecorator, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.pool import NullPool

_AFTER_COMMIT_KEY = "headroom_after_commit"
log = logging.getLogger(__name__)

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite drops the offset)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def utcnow() -> datetime:
    return datetime.now(UTC)


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL and a busy timeout so the API, the worker
    and ingest can share the file."""
    if url.startswith("sqlite"):
        # No pool: a SQLite connection is a file handle, and a request holds its connection
        # across thread hops, so a small pool could run dry while its holders wait for a
        # worker thread (a deadlock until the pool timeout).
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, poolclass=NullPool
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy, not the driver, open transactions (so SAVEPOINT works).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection: Any) -> None:
            # Writers take the write lock up front (IMMEDIATE) so concurrent writers wait for
            # each other instead of failing on a lock upgrade; read-only units of work ask
            # for DEFERRED, which in WAL mode never blocks anyone.
            mode = connection.get_execution_options().get(SQLITE_BEGIN_OPTION, "IMMEDIATE")
            connection.exec_driver_sql(f"BEGIN {mode}")

        return engine
    # More connections than the API's 40 request threads, for the same reason.
    return create_engine(url, pool_pre_ping=True, pool_size=20, max_overflow=40)


SQLITE_BEGIN_OPTION = "headroom_sqlite_begin"


def mark_read_only(session: Session) -> None:
    """This unit of work only reads: on SQLite it must not take the write lock."""
    session.connection(execution_options={SQLITE_BEGIN_OPTION: "DEFERRED"})


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False)


def after_commit(session: Session, callback: Callable[[], Any]) -> None:
    """Run ``callback`` once ``session``'s transaction has committed; drop it on rollback."""
    session.info.setdefault(_AFTER_COMMIT_KEY, []).append(callback)


@event.listens_for(Session, "after_commit")
def _run_after_commit(session: Session) -> None:
    callbacks = session.info.pop(_AFTER_COMMIT_KEY, [])
    for callback in callbacks:
        try:
            callback()
        except Exception:
            # The transaction is durable; whatever the callback did late (an enqueue while
            # the broker is down) is reconciled later by the job watchdog.
            log.warning("after-commit work failed; the watchdog will catch up", exc_info=True)


@event.listens_for(Session, "after_soft_rollback")
def _discard_after_commit(session: Session, _previous_transaction: Any) -> None:
    session.info.pop(_AFTER_COMMIT_KEY, None)


@contextmanager
def unit_of_work(session: Session) -> Iterator[Session]:
    """``session`` as one unit of work: commit on success, else roll back; closed after."""
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def session_scope(factory: sessionmaker[Session]) -> AbstractContextManager[Session]:
    """One unit of work outside a request (tasks, CLI): commit on success, else roll back."""
    return unit_of_work(factory())

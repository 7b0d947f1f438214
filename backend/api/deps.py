"""Shared route dependencies as ``Annotated`` aliases.

Dependencies that do no blocking work are ``async def``: FastAPI runs a plain ``def``
dependency in a worker thread, a hop that costs more than such a dependency itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    contextmanager,
    nullcontext,
)
from typing import Annotated, Any, Protocol

from fastapi import Depends, Path, Request
from sqlalchemy.orm import Session

from backend.api.sqlite_gate import writes
from backend.db import mark_read_only, unit_of_work
from backend.settings import Settings


def get_session(request: Request) -> Iterator[Session]:
    """The request's unit of work: the one place a request commits or rolls back.

    Declared with ``scope="function"`` so the commit (and the after-commit work it
    triggers) completes before the response is sent: a client that reads right after a
    write sees it.
    """
    session: Session = request.app.state.session_factory()
    if not writes(request.method, request.scope["path"]):
        mark_read_only(session)
    with unit_of_work(session):
        yield session


async def get_read_sessions(request: Request) -> Callable[[], AbstractContextManager[Session]]:
    """Short read-only sessions for long-lived responses (streams), one per poll, so no
    transaction stays open while the response waits."""
    factory = request.app.state.session_factory

    @contextmanager
    def _session() -> Iterator[Session]:
        with factory() as session:
            mark_read_only(session)
            yield session

    return _session


async def get_write_gate(request: Request) -> AbstractAsyncContextManager[Any]:
    """The SQLite write gate, for a route the gate middleware lets through ungated
    (``SQLiteWriteGate.self_gated_paths``): it holds this around its own write and commit
    only, not around slow work before them. A no-op on PostgreSQL."""
    lock: AbstractAsyncContextManager[Any] | None = getattr(
        request.app.state, "sqlite_write_lock", None
    )
    return lock if lock is not None else nullcontext()


def from_app_state(name: str) -> Any:
    """A dependency on what the application holds as ``app.state.<name>`` (set up once in
    ``backend.main``): its settings, its dispatcher, a process-wide pool or bound."""

    async def _get(request: Request) -> Any:
        return getattr(request.app.state, name)

    return Depends(_get)


class Dispatcher(Protocol):
    """Hands job work to the workers; the API never runs a job itself."""

    def launch(self, job_id: int) -> None: ...

    def stop(self, job_id: int) -> None: ...


SessionDep = Annotated[Session, Depends(get_session, scope="function")]
ReadSessionsDep = Annotated[
    Callable[[], AbstractContextManager[Session]], Depends(get_read_sessions)
]
SettingsDep = Annotated[Settings, from_app_state("settings")]
DispatcherDep = Annotated[Dispatcher, from_app_state("dispatcher")]
WriteGateDep = Annotated[AbstractAsyncContextManager[Any], Depends(get_write_gate)]

# Ids are 32-bit integers in every supported database; larger values are a 422, not a 500.
IdPath = Annotated[int, Path(ge=1, le=2_147_483_647)]

"""One writing request at a time on SQLite, queued without holding a thread.

SQLite has one write lock per file. A request holds its transaction across several
worker-thread hops (dependencies, endpoint, commit); if waiting writers occupied every
worker thread, the lock holder could not get a thread to commit: a deadlock until the
busy timeout. Writers therefore queue here, in the event loop, before taking any thread.
Reads are never gated (WAL readers do not block), nor are the POSTs whose unit of work
only reads (``READ_ONLY_POST_SUFFIXES``: a preview holds its request for seconds while
its replay runs; afterwards it keeps its prediction, taking this lock itself around that
write and its commit: ``backend.api.deps.WriteGateDep``). PostgreSQL needs none of this.

A path in ``self_gated_paths`` (the login, whose scrypt must not hold the gate) passes
ungated and takes the same lock itself around its write (``backend.api.deps.WriteGateDep``).
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Receive, Scope, Send

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PREVIEW_PATH = "/config/preview"
"""A live change's preview, under a job (``backend.tuning.routes``): it reads, and
writes what it keeps under the gate itself."""
READ_ONLY_POST_SUFFIXES = (PREVIEW_PATH,)
"""Endings of the paths of the POST routes whose unit of work only reads: they pass the
gate (``backend.api.deps.get_session``)."""


def writes(method: str, path: str) -> bool:
    """Whether a request's unit of work may write: neither a read method nor a POST whose
    unit of work only reads."""
    if method in READ_METHODS:
        return False
    return not (method == "POST" and path.endswith(READ_ONLY_POST_SUFFIXES))


class SQLiteWriteGate:
    def __init__(
        self, app: ASGIApp, lock: asyncio.Lock, self_gated_paths: frozenset[str] = frozenset()
    ) -> None:
        self.app = app
        self.lock = lock
        self.self_gated_paths = self_gated_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or not writes(scope["method"], scope["path"])
            or scope["path"] in self.self_gated_paths
        ):
            await self.app(scope, receive, send)
            return
        async with self.lock:
            await self.app(scope, receive, send)

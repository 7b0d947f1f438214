"""The last line of defence: an unexpected exception becomes a 500 answer, and the
connection stays usable.

Starlette's own ``ServerErrorMiddleware`` sends a 500 and then re-raises, and uvicorn
closes the connection on the re-raised exception: a client's next request on the same
keep-alive connection was reset. This middleware sits inside it, logs the exception with
its traceback, answers ``{"detail": "internal error"}`` (never the exception's text, which
may carry a secret or a file's content) and does not re-raise. An exception after the
answer has started cannot be turned into a 500 and is re-raised as before.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from backend.api.middleware import HttpMiddleware

log = logging.getLogger(__name__)


class UnhandledErrors(HttpMiddleware):
    """Plain ASGI middleware (no ``BaseHTTPMiddleware``: it would buffer every answer)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            if started:
                raise
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            await JSONResponse(status_code=500, content={"detail": "internal error"})(
                scope, receive, send
            )

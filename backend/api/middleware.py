"""The base of the API's own middlewares: plain ASGI, acting on HTTP requests only.

Plain ASGI rather than Starlette's ``BaseHTTPMiddleware`` (``@app.middleware``): that one
runs every request through an extra task and memory stream and buffers the answer, which
cost more than what these middlewares do.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class HttpMiddleware:
    """Hands every HTTP request to ``handle``; any other scope (lifespan, websocket) goes
    straight to the app, since there is no request to check, count or answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request: pass it on to ``self.app``, or answer it."""
        raise NotImplementedError

"""How many bytes a request body may have, route by route.

A schema that admits a large body declares its limit, a number computed next to it from
its maxima, as its ``max_body_bytes`` (e.g. ``IngestBatch.max_body_bytes``); a
``ParsedBodyRoute`` taking that schema as its body passes it as FastAPI's own
``max_body_size``, which a route may also declare itself. Every other route (login,
users, jobs, stops, acknowledgements) takes ``DEFAULT_BODY_BYTES``. ``RouteLimits``
reads the routes' limits from the routers, and the body guard (``body_guard.py``)
refuses a body over its route's limit with 413 before reading past the limit, whatever
its content type and whether it is sent with a ``Content-Length`` or chunked.

A route that takes a body larger than ``THREAD_PARSE_BYTES`` is a ``ParsedBodyRoute``:
the guard parses such a body in a worker thread and this route hands FastAPI that
document, so FastAPI does not parse it again on the event loop.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute
from starlette.routing import compile_path
from starlette.types import Scope

KIB = 1024
DEFAULT_BODY_BYTES = 64 * KIB
"""The limit of every route that declares none. Their bodies hold a few short fields: at
their maxima, with every character escaped, a login or a new user (100 + 1,000
characters) is 6.7 KB, a job (1,000 class ids, a 200-character master) 13 KB, a class
with every parameter of its manager set 1.6 KB."""
JSON_CHAR_BYTES = 6
"""The most bytes one character of text takes in a JSON body: an escape such as
``\\u00e9`` (an encoder may escape every non-ASCII character, and escapes control
characters). A character beyond U+FFFF, escaped as a surrogate pair, takes 12 bytes for
one character: a text of such characters at its maximum length fits only as UTF-8."""
ENVELOPE_BYTES = 1 * KIB
"""Room for the keys, brackets and short fields around a body's one large part."""
THREAD_PARSE_BYTES = 64 * KIB
"""A JSON body larger than this is screened and parsed in a worker thread (json takes
about 2 ms per 64 KiB here; a route's largest bodies take hundreds of ms)."""
PARSED_BODY_KEY = "headroom.parsed_body"
"""Where in the ASGI scope the guard leaves the document it parsed off the event loop."""


def json_text_bytes(chars: int) -> int:
    """The most bytes a JSON string of ``chars`` characters takes: its quotes, and every
    character escaped."""
    return chars * JSON_CHAR_BYTES + 2


@dataclass(frozen=True, slots=True)
class RouteLimit:
    """The body limit of one route: its methods, its path template and its regex."""

    methods: frozenset[str]
    path: str
    regex: re.Pattern[str]
    max_bytes: int

    def label(self, method: str) -> str:
        return f"{method} {self.path}"


class RouteLimits:
    """Each route's body limit, found by method and path (the route's own template)."""

    def __init__(self, routes: Iterable[RouteLimit], default_bytes: int = DEFAULT_BODY_BYTES):
        self.routes = tuple(routes)
        self.default_bytes = default_bytes

    @classmethod
    def of_routers(cls, routers: Iterable[APIRouter], prefix: str = "") -> RouteLimits:
        """The limits the routers' routes declare (``max_body_size``), the default for the
        rest. A route declaring more than ``THREAD_PARSE_BYTES`` must be a
        ``ParsedBodyRoute`` (else FastAPI would parse its largest bodies on the loop)."""
        limits: list[RouteLimit] = []
        for router in routers:
            for route in router.routes:
                if not isinstance(route, APIRoute):
                    continue
                declared: int | None = route.max_body_size
                if (declared or 0) > THREAD_PARSE_BYTES and not isinstance(route, ParsedBodyRoute):
                    raise TypeError(
                        f"{route.path} takes bodies of up to {declared} bytes: declare its "
                        "router with route_class=ParsedBodyRoute"
                    )
                path = prefix + route.path
                limits.append(
                    RouteLimit(
                        methods=frozenset(route.methods or ()),
                        path=path,
                        regex=compile_path(path)[0],
                        max_bytes=DEFAULT_BODY_BYTES if declared is None else declared,
                    )
                )
        return cls(limits)

    def of(self, scope: Scope) -> tuple[int, str]:
        """The limit of the route a request is for, and that route as ``METHOD /path``
        (the request's own path when no route matches it)."""
        method: str = scope["method"]
        path = _route_path(scope)
        for route in self.routes:
            if method in route.methods and route.regex.match(path):
                return route.max_bytes, route.label(method)
        return self.default_bytes, f"{method} {path[:100]}"


def _route_path(scope: Scope) -> str:
    """The path the routes see: without the root path the app may be mounted under."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
        return path[len(root) :] or "/"
    return path


_MISSING = object()


class _ParsedBodyRequest(Request):
    """A request whose JSON body the guard may already have parsed."""

    async def json(self) -> Any:
        document = self.scope.get(PARSED_BODY_KEY, _MISSING)
        return await super().json() if document is _MISSING else document


def schema_body_bytes(endpoint: Callable[..., Any]) -> int | None:
    """The ``max_body_bytes`` the schema of ``endpoint``'s body declares (None: none)."""
    for parameter in inspect.signature(endpoint, eval_str=True).parameters.values():
        declared = getattr(parameter.annotation, "max_body_bytes", None)
        if isinstance(declared, int):
            return declared
    return None


class ParsedBodyRoute(APIRoute):
    """A route that hands FastAPI the document the body guard parsed off the event loop
    (FastAPI's own ``json.loads`` holds the interpreter for ~40 ms per MB), and takes the
    body limit its schema declares unless it declares one itself."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if kwargs.get("max_body_size") is None:
            kwargs["max_body_size"] = schema_body_bytes(endpoint)
        super().__init__(path, endpoint, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handle_parsed(request: Request) -> Response:
            return await handle(_ParsedBodyRequest(request.scope, request.receive))

        return handle_parsed

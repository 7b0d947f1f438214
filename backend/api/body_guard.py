"""Bound every request body, and reject request inputs no route can store, before any
validation sees them.

A body larger than its route's limit (``body_limits.py``) is answered 413 before the
guard reads past the limit: at once when its ``Content-Length`` says so, else as soon as
the bytes read pass it (a chunked body), whatever its content type; the connection is
closed after the answer, so the rest is never read. Without this a 50 MB login body was
read whole and parsed on the event loop (25 s, the API stalled for everyone).

A JSON body with ``NaN``/``Infinity`` (or a number too large for a double), a nesting
deeper than ``MAX_JSON_DEPTH``, a string or key holding a NUL character, or an integer
beyond 64 bits is answered 422 here, naming the field and the rule; so is a NUL in the
query string or the path. Without this guard such values reached pydantic (which echoed
NaN back in a 422 that then failed to serialise), the JSON parser's recursion limit, or
PostgreSQL (which refuses NUL in text): each a 500, and a 500 cost the client its
keep-alive connection.

The guard reads a body once, checks it, and hands the same bytes on to the app. The JSON
rules apply to the bodies FastAPI itself parses as JSON (no content type, or
``application/json`` / ``application/*+json``); a body over ``THREAD_PARSE_BYTES`` is
screened and parsed in a worker thread, so the event loop keeps answering meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Iterator
from email.message import Message
from typing import Any
from urllib.parse import unquote_to_bytes

import anyio.to_thread
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.api.body_limits import PARSED_BODY_KEY, THREAD_PARSE_BYTES, RouteLimits
from backend.api.middleware import HttpMiddleware
from backend.errors import clip, cut, readable

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request body may have (the deepest real body,
a class's query spec, is under 10)."""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

Loc = tuple[str | int, ...]
"""A location in FastAPI's 422 shape: ("body", "samples", 0, "t")."""


class BadInput(Exception):
    """One broken rule: where (``loc``, FastAPI's shape), the rule and a type tag."""

    def __init__(self, loc: Loc, rule: str, kind: str) -> None:
        super().__init__(rule)
        self.loc = loc
        self.rule = rule
        self.kind = kind

    def detail(self) -> dict[str, Any]:
        # A key may itself hold the NUL; the value is never echoed (it may be unprintable,
        # a secret, or not JSON at all).
        loc = [
            cut(part.replace("\x00", "\\u0000")) if isinstance(part, str) else part
            for part in self.loc
        ]
        field = ".".join(str(part) for part in loc[1:]) or str(loc[0])
        return {"loc": loc, "msg": clip(f"{field}: {self.rule}"), "type": self.kind, "input": None}


class _BigInt(str):
    """An integer literal beyond 64 bits, kept as its text (never converted: Python
    refuses to convert very long digit strings at all)."""


def _parse_int(text: str) -> int | _BigInt:
    if len(text) > 20:  # 2**63 has 19 digits; a sign makes 20
        return _BigInt(text)
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else _BigInt(text)


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789E", b"000000000e")
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_RISKY_NUMBERS = (b"0" * 19, b"e000", b"e+000", b"e-000")


SCREEN_SLICE_BYTES = 256 * 1024
"""The screen reads a body in slices of this size: a few ms of C each, between which a
worker thread running it hands the GIL to the event loop (a 10 MB body in one piece held
it for ~300 ms)."""
_LONGEST_PATTERN_BYTES = 19  # b"0" * 19: consecutive slices overlap by one byte less


def may_break_rules(body: bytes, slice_bytes: int = SCREEN_SLICE_BYTES) -> bool:
    """A screen at C speed (90 ms for a 6 MB batch of samples here; ``parse_json`` takes
    200 ms): False only when ``body`` cannot break a rule. True asks for ``parse_json``
    (strings that merely look like a rule breaker, e.g. ``"NaN"`` as text, pass it)."""
    overlap = _LONGEST_PATTERN_BYTES - 1
    if any(_risky_text(piece) for piece in _slices(body, slice_bytes, overlap)):
        return True
    brackets = sum(len(piece.translate(None, _NOT_BRACKET)) for piece in _slices(body, slice_bytes))
    if brackets <= MAX_JSON_DEPTH:
        return False  # too few brackets, in strings or not, to nest too deeply
    if any(b'\\"' in piece for piece in _slices(body, slice_bytes, overlap=1)):
        return True  # an escaped quote: the split below cannot tell the strings apart
    return _nested_too_deeply(_slices(body, slice_bytes))


def _slices(body: bytes, size: int, overlap: int = 0) -> Iterator[bytes]:
    """``body`` in pieces of ``size`` bytes, each also holding the ``overlap`` bytes before
    it (so a pattern across a boundary lies whole in one piece)."""
    for start in range(0, max(len(body), 1), size):
        yield body[max(0, start - overlap) : start + size]


def _risky_text(piece: bytes) -> bool:
    if b"NaN" in piece or b"Infinity" in piece or b"\\u0000" in piece:
        return True
    digits = piece.translate(_DIGITS_AS_ZERO)
    # 19+ digits (beyond 64 bits?) or a 3-digit exponent (beyond a double?)
    return any(pattern in digits for pattern in _RISKY_NUMBERS)


def _nested_too_deeply(pieces: Iterable[bytes]) -> bool:
    """Whether the brackets outside strings nest deeper than ``MAX_JSON_DEPTH``: a "]" in a
    key or a text would hide a level. With no escaped quote, every other part between
    quotes is outside the strings; a piece that starts inside a string starts with text."""
    depth = 0
    in_string = False
    for piece in pieces:
        parts = piece.split(b'"')
        outside = b"".join(parts[1 if in_string else 0 :: 2])
        in_string ^= len(parts) % 2 == 0  # an odd number of quotes
        for step in map(_STEP.__getitem__, outside.translate(None, _NOT_BRACKET)):
            depth += step
            if depth > MAX_JSON_DEPTH:
                return True
    return False


def parse_json(body: bytes) -> Any:
    """The body as JSON, or ``BadInput`` for the rules above; malformed JSON is left to
    FastAPI (``ValueError``), which reports it with its position."""
    document = _loads(body)
    check_value(document, ("body",))
    return document


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body, parse_int=_parse_int, object_hook=_each_object)
    except RecursionError:
        raise BadInput(
            ("body",), f"is nested too deeply: at most {MAX_JSON_DEPTH} levels", "too_deep"
        ) from None


def _each_object(value: dict[str, Any]) -> dict[str, Any]:
    """Called by the parser for every object: a Python call lets the interpreter hand the
    GIL to the event loop between objects (json's C parser holds it otherwise, ~40 ms per
    MB, even in a worker thread)."""
    return value


def check_value(document: Any, root: Loc) -> None:
    """Raise ``BadInput`` at the first value (depth-first) that breaks a rule."""
    for value, loc, depth in _walk(document, root):
        if isinstance(value, _BigInt):
            raise BadInput(
                loc, f"integers must lie within 64 bits ({INT64_MIN} to {INT64_MAX})", "int_range"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise BadInput(
                loc,
                "numbers must be finite (NaN, Infinity and values beyond ±1.8e308 are refused)",
                "finite_number",
            )
        if isinstance(value, str) and "\x00" in value:
            raise BadInput(loc, "text must not contain the NUL character (U+0000)", "nul_char")
        if depth > MAX_JSON_DEPTH:
            raise BadInput(
                loc, f"is nested too deeply: at most {MAX_JSON_DEPTH} levels", "too_deep"
            )


def _walk(document: Any, root: Loc) -> Iterator[tuple[Any, Loc, int]]:
    """Every value and key with its location and container depth; iterative, so a deep
    document cannot exhaust the stack."""
    stack: list[tuple[Any, Loc, int]] = [(document, root, 0)]
    while stack:
        value, loc, depth = stack.pop()
        yield value, loc, depth
        if isinstance(value, dict):
            for key, item in reversed(value.items()):
                yield key, (*loc, key), depth + 1
                stack.append((item, (*loc, key), depth + 1))
        elif isinstance(value, list):
            stack.extend(
                (item, (*loc, i), depth + 1) for i, item in reversed(list(enumerate(value)))
            )


def is_json(content_type: str | None) -> bool:
    """Whether FastAPI parses a body of this content type as JSON."""
    if not content_type:
        return True
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def check_query_and_path(scope: Scope) -> None:
    """A NUL in the path or in a query parameter's name or value is refused."""
    if "\x00" in scope.get("path", ""):
        raise BadInput(("path",), "must not contain the NUL character (%00)", "nul_char")
    query: bytes = scope.get("query_string", b"")
    if b"%00" not in query and b"\x00" not in query:
        return
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        if b"\x00" in unquote_to_bytes(name) + unquote_to_bytes(value):
            field = unquote_to_bytes(name).replace(b"\x00", b"").decode("utf-8", "replace")
            raise BadInput(
                ("query", field or "?"),
                "must not contain the NUL character (%00)",
                "nul_char",
            )


class BodyGuard(HttpMiddleware):
    """Pure ASGI middleware applying each route's body limit and the rules above to every
    HTTP request."""

    def __init__(self, app: ASGIApp, limits: RouteLimits) -> None:
        super().__init__(app)
        self.limits = limits

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            check_query_and_path(scope)
        except BadInput as bad:
            await _reject(bad, scope, receive, send)
            return
        limit, route = self.limits.of(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            # Refused before a byte of the body is read (uvicorn sends no 100-continue).
            what = f"declares {declared} (Content-Length)"
            await _too_large(scope, receive, send, limit, route, what)
            return
        try:
            body, complete = await _read_body(receive, limit)
        except _TooLarge as over:
            await _too_large(scope, receive, send, limit, route, f"passed it ({over} bytes read)")
            return
        if complete and body and is_json(_header(scope, b"content-type")):
            try:
                await _screen(scope, body)
            except BadInput as bad:
                await _reject(bad, scope, receive, send)
                return
            except ValueError as error:  # a large body only: not JSON, or not UTF-8
                await _not_json(error, scope, receive, send)
                return
        await self.app(scope, _replay(body, complete, receive), send)


async def _screen(scope: Scope, body: bytes) -> None:
    """Apply the rules to a JSON body. A large one is parsed in a worker thread (its
    document left in the scope for FastAPI, see ``ParsedBodyRoute``), malformed JSON
    included; a small one's malformed JSON is left to FastAPI, which reports its position."""
    if len(body) > THREAD_PARSE_BYTES:
        scope[PARSED_BODY_KEY] = await anyio.to_thread.run_sync(_parse_large, body)
    elif may_break_rules(body):
        with contextlib.suppress(ValueError):
            parse_json(body)


def _parse_large(body: bytes) -> Any:
    """The document of a large JSON body, walked for the rules only where the screen
    finds a risk (the walk costs twice the parse)."""
    risky = may_break_rules(body)
    document = _loads(body)
    if risky:
        check_value(document, ("body",))
    return document


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _content_length(scope: Scope) -> int | None:
    """The declared ``Content-Length`` (None without one; the server refuses a bad one).
    A length of more than 18 digits is beyond any limit: it is not converted at all."""
    digits = (_header(scope, b"content-length") or "").strip()
    if not digits.isdigit():
        return None
    return int(digits) if len(digits) <= 18 else 10**18


class _TooLarge(Exception):
    """The body passed its route's limit while being read; the message is bytes read."""


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole body, up to ``limit`` bytes (``_TooLarge`` as soon as more arrived);
    ``complete`` is False if the client disconnected before its end."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge(size)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, complete: bool, receive: Receive) -> Receive:
    sent = False

    async def _receive() -> dict[str, Any]:
        nonlocal sent
        if not sent and complete:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return dict(await receive())

    return _receive


async def _reject(bad: BadInput, scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(status_code=422, content={"detail": [bad.detail()]})
    await response(scope, receive, send)


async def _not_json(error: ValueError, scope: Scope, receive: Receive, send: Send) -> None:
    """A large body that is no JSON (or no UTF-8): FastAPI's 422 for malformed JSON,
    without FastAPI parsing it again on the event loop."""
    position = error.pos if isinstance(error, json.JSONDecodeError) else getattr(error, "start", 0)
    item = {"type": "json_invalid", "loc": ("body", position), "msg": "JSON decode error"}
    response = JSONResponse(status_code=422, content={"detail": readable([{**item, "input": {}}])})
    await response(scope, receive, send)


async def _too_large(
    scope: Scope, receive: Receive, send: Send, limit: int, route: str, what: str
) -> None:
    """413, and the connection closed after it: the rest of the body is never read."""
    detail = f"the body of {route} may hold at most {limit} bytes; this one {what}"
    response = JSONResponse(
        status_code=413,
        content={"detail": detail, "limit_bytes": limit},
        headers={"Connection": "close"},
    )
    await response(scope, receive, send)

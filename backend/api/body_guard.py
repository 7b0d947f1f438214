"""Reject request inputs no route can store, before any validation sees them.

A JSON body with ``NaN``/``Infinity`` (or a number too large for a double), a nesting
deeper than ``MAX_JSON_DEPTH``, a string or key holding a NUL character, or an integer
beyond 64 bits is answered 422 here, naming the field and the rule; so is a NUL in the
query string or the path. Without this guard such values reached pydantic (which echoed
NaN back in a 422 that then failed to serialise), the JSON parser's recursion limit, or
PostgreSQL (which refuses NUL in text): each a 500, and a 500 cost the client its
keep-alive connection.

The guard reads a JSON body once, checks it, and hands the same bytes on to the app.
It applies to the bodies FastAPI itself parses as JSON (no content type, or
``application/json`` / ``application/*+json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from email.message import Message
from itertools import accumulate
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request body may have (the deepest real body,
a class's query spec, is under 10)."""
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

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
            part.replace("\x00", "\\u0000") if isinstance(part, str) else part for part in self.loc
        ]
        field = ".".join(str(part) for part in loc[1:]) or str(loc[0])
        return {"loc": loc, "msg": f"{field}: {self.rule}", "type": self.kind, "input": None}


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


def may_break_rules(body: bytes) -> bool:
    """A screen at C speed (90 ms for a 6 MB batch of samples here; ``parse_json`` takes
    200 ms): False only when ``body`` cannot break a rule. True asks for ``parse_json``
    (strings that merely look like a rule breaker, e.g. ``"NaN"`` as text, pass it)."""
    if b"NaN" in body or b"Infinity" in body or b"\\u0000" in body:
        return True
    digits = body.translate(_DIGITS_AS_ZERO)
    if any(pattern in digits for pattern in _RISKY_NUMBERS):
        return True  # 19+ digits (beyond 64 bits?) or a 3-digit exponent (beyond a double?)
    if len(body.translate(None, _NOT_BRACKET)) <= MAX_JSON_DEPTH:
        return False  # too few brackets, in strings or not, to nest too deeply
    if b'\\"' in body:
        return True  # an escaped quote: the split below cannot tell the strings apart
    # Brackets count outside strings only: a "]" in a key or a text would hide a level.
    # With no escaped quote, every other piece between quotes is outside the strings.
    outside = b"".join(body.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > MAX_JSON_DEPTH


def parse_json(body: bytes) -> Any:
    """The body as JSON, or ``BadInput`` for the rules above; malformed JSON is left to
    FastAPI (``ValueError``), which reports it with its position."""
    try:
        document = json.loads(body, parse_int=_parse_int)
    except RecursionError:
        raise BadInput(
            ("body",), f"is nested too deeply: at most {MAX_JSON_DEPTH} levels", "too_deep"
        ) from None
    check_value(document, ("body",))
    return document


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


class BodyGuard:
    """Pure ASGI middleware applying the rules above to every HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            check_query_and_path(scope)
        except BadInput as bad:
            await _reject(bad, scope, receive, send)
            return
        if scope["method"] not in BODY_METHODS or not is_json(_header(scope, b"content-type")):
            await self.app(scope, receive, send)
            return
        body, more = await _read_body(receive)
        if body and may_break_rules(body):
            try:
                parse_json(body)
            except BadInput as bad:
                await _reject(bad, scope, receive, send)
                return
            except ValueError:
                pass  # not JSON at all: FastAPI answers 422 json_invalid with the position
        await self.app(scope, _replay(body, more, receive), send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The whole body; ``more`` is False if the client disconnected before its end."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunks.append(message.get("body", b""))
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

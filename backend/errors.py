"""Domain errors carry their HTTP status; one handler renders them."""

from __future__ import annotations

import math
import reprlib
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from spark_runner.core.errors import ParameterError
from spark_runner.scenario.errors import ScenarioError


class DomainError(Exception):
    """An error the caller can act on: its status, its sentence, and any headers the
    answer needs (e.g. ``Retry-After`` on a 429)."""

    status_code = 400

    def __init__(self, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}


class FieldErrors(Exception):
    """Several broken rules of one request, each as (path in the body, sentence); a 422
    in FastAPI's shape. ``location`` is ``body``, or ``header``/``query`` for such fields."""

    def __init__(self, errors: list[tuple[str, str]], location: str = "body") -> None:
        super().__init__("; ".join(f"{path}: {msg}" for path, msg in errors))
        self.errors = errors
        self.location = location


class NotFound(DomainError):
    status_code = 404


class Conflict(DomainError):
    status_code = 409


class Unauthorized(DomainError):
    """401: no credentials, or credentials that name nobody (a person or a job)."""

    status_code = 401


class Forbidden(DomainError):
    """403: the caller is known, and its role is too low for the route."""

    status_code = 403


def parameter_error_detail(error: ParameterError, location: str = "body") -> dict[str, Any]:
    """A core ``ParameterError`` in FastAPI's 422 item shape: loc, msg, type, input."""
    value = _echo(error.field, error.value)
    return {
        "loc": [location, cut(error.field)],
        "msg": _parameter_message(error),
        "type": "value_error",
        "input": excerpt(value),
    }


def _parameter_message(error: ParameterError) -> str:
    """``str(error)`` with the value as an excerpt (and a secret as ``***``)."""
    value = _echo(error.field, error.value)
    return clip(f"{cut(error.field)}={short_repr(value)} is invalid: {error.rule}")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _domain_error(_request: Request, exc: DomainError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status_code, content={"detail": clip(exc.detail)}, headers=exc.headers
        )

    @app.exception_handler(ParameterError)
    async def _parameter_error(_request: Request, exc: ParameterError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": [parameter_error_detail(exc)]})

    @app.exception_handler(FieldErrors)
    async def _field_errors(_request: Request, exc: FieldErrors) -> JSONResponse:
        items = [
            {
                "loc": [exc.location, cut(path)],
                "msg": clip(f"{path}: {msg}"),
                "type": "value_error",
                "input": None,
            }
            for path, msg in exc.errors
        ]
        return JSONResponse(status_code=422, content={"detail": items})

    @app.exception_handler(ScenarioError)
    async def _scenario_error(_request: Request, exc: ScenarioError) -> JSONResponse:
        items = [
            {
                "loc": ["body", "yaml", issue.path or "<document>"],
                "msg": clip(issue.render("line")),
                "type": "scenario_error",
                "input": None,
                **({"line": issue.line} if issue.line else {}),
            }
            for issue in exc.issues
        ]
        return JSONResponse(status_code=422, content={"detail": items})

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": readable(exc.errors())})


# Values never echoed back in an error (nor, therefore, in any log of it).
SECRET_FIELDS = frozenset({"password", "access_token", "ingest_token", "token"})


MAX_ECHO_CHARS = 80
"""The most characters of an input an error echoes: in ``input``, in ``msg`` and in a
``loc`` (a key). A 2 MB field's 422 stays a few hundred bytes."""
MAX_MESSAGE_CHARS = 1_000
"""The longest ``msg`` or ``detail`` (a rule listing what is allowed takes ~600); a
longer one, a rule that quotes a long input, keeps its start and its end."""


def readable(errors: Any) -> list[dict[str, Any]]:
    """Make every 422 item name the field, the value and the rule in ``msg``; the value
    (in ``msg`` and ``input``) only as an excerpt."""
    items: list[dict[str, Any]] = []
    for error in errors:
        loc = [cut(str(part)) for part in error.get("loc", ())]
        field = loc[-1] if loc else "request"
        # A missing field's "input" is the whole enclosing object: the field has no value.
        value = None if error.get("type") == "missing" else error.get("input")
        value = _echo(field, value)
        rule = str(error.get("msg", "invalid"))
        rule = rule.removeprefix("Value error, ")
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, ParameterError):
            # A model-level rule (e.g. threshold ordering): point at the field it names,
            # and echo that field's value rather than the whole object.
            loc = [*loc, cut(cause.field)] if loc[-1:] != [cause.field] else loc
            msg = _parameter_message(cause)
            value = _echo(cause.field, cause.value)
        else:
            msg = clip(f"{field}={short_repr(value)} is invalid: {rule}")
        items.append(
            {
                "loc": loc,
                "msg": msg,
                "type": error.get("type", "value_error"),
                "input": excerpt(value),
            }
        )
    return items


def _echo(field: str, value: Any) -> Any:
    return "***" if field in SECRET_FIELDS else value


def cut(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text``, cut to ``limit`` characters (the last one an ellipsis)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(text: str) -> str:
    """``text`` of at most ``MAX_MESSAGE_CHARS``: a longer one keeps its start and end
    (where a rule quoting an input states the rule)."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    head = MAX_MESSAGE_CHARS * 3 // 5
    tail = MAX_MESSAGE_CHARS - head - 3
    return f"{text[:head]} … {text[-tail:]}"


class _ShortRepr(reprlib.Repr):
    """``reprlib``'s bounded repr, bytes cut like text (a body of another content type
    reaches validation as bytes)."""

    def repr_bytes(self, value: bytes, level: int) -> str:
        return repr(value[: self.maxstring])


_REPR = _ShortRepr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = MAX_ECHO_CHARS


def short_repr(value: Any) -> str:
    """``repr(value)`` in at most ``MAX_ECHO_CHARS`` characters, built without rendering
    the whole value (``reprlib`` looks at the first few items and characters only)."""
    try:
        return cut(_REPR.repr(value))
    except ValueError:  # an int beyond 4,300 digits, which Python refuses to render
        return "<a number too long to show>"


def excerpt(value: Any) -> Any:
    """``value`` as an error echoes it: itself, as strict JSON carries it, when short;
    else a text of at most ``MAX_ECHO_CHARS`` characters (a string's start, a container's
    ``short_repr``)."""
    if isinstance(value, str):
        return cut(value)
    if isinstance(value, bytes):
        return short_repr(value)
    if _shorter_than(value, MAX_ECHO_CHARS):
        return _jsonable(value)
    return short_repr(value)


def _shorter_than(value: Any, budget: int) -> bool:
    """Whether ``value`` renders in about ``budget`` characters; stops as soon as it
    cannot (every item costs at least one), so a huge value costs no more than a small
    one."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            budget -= 2 + 2 * len(item)
            if budget >= 0:
                stack.extend(item.keys())
                stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            budget -= 2 + len(item)
            if budget >= 0:
                stack.extend(item)
        elif isinstance(item, str | bytes):
            budget -= len(item) + 2
        elif isinstance(item, int):
            budget -= item.bit_length() // 3 + 2  # its digits (a bool counts as 1 or 0)
        else:
            budget -= 24  # a float at its widest, None
        if budget < 0:
            return False
    return True


def _jsonable(value: Any) -> Any:
    """``value`` as strict JSON can carry it: a non-finite number (which JSON cannot
    hold, so rendering it would fail with a 500) becomes its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)

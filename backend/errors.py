"""Domain errors carry their HTTP status; one handler renders them."""

from __future__ import annotations

import math
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


def parameter_error_detail(error: ParameterError, location: str = "body") -> dict[str, Any]:
    """A core ``ParameterError`` in FastAPI's 422 item shape: loc, msg, type, input."""
    return {
        "loc": [location, error.field],
        "msg": str(error),
        "type": "value_error",
        "input": _jsonable(error.value),
    }


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _domain_error(_request: Request, exc: DomainError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status_code, content={"detail": exc.detail}, headers=exc.headers
        )

    @app.exception_handler(ParameterError)
    async def _parameter_error(_request: Request, exc: ParameterError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": [parameter_error_detail(exc)]})

    @app.exception_handler(FieldErrors)
    async def _field_errors(_request: Request, exc: FieldErrors) -> JSONResponse:
        items = [
            {
                "loc": [exc.location, path],
                "msg": f"{path}: {msg}",
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
                "msg": issue.render("line"),
                "type": "scenario_error",
                "input": None,
                **({"line": issue.line} if issue.line else {}),
            }
            for issue in exc.issues
        ]
        return JSONResponse(status_code=422, content={"detail": items})

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": _readable(exc.errors())})


# Values never echoed back in an error (nor, therefore, in any log of it).
SECRET_FIELDS = frozenset({"password", "access_token", "ingest_token", "token"})


def _readable(errors: Any) -> list[dict[str, Any]]:
    """Make every 422 item name the field, the value and the rule in ``msg``."""
    items: list[dict[str, Any]] = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        field = loc[-1] if loc else "request"
        # A missing field's "input" is the whole enclosing object: the field has no value.
        value = None if error.get("type") == "missing" else error.get("input")
        value = "***" if field in SECRET_FIELDS else value
        rule = str(error.get("msg", "invalid"))
        rule = rule.removeprefix("Value error, ")
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, ParameterError):
            # A model-level rule (e.g. threshold ordering): point at the field it names,
            # and echo that field's value rather than the whole object.
            loc = [*loc, cause.field] if loc[-1:] != [cause.field] else loc
            msg = str(cause)
            value = "***" if cause.field in SECRET_FIELDS else cause.value
        else:
            msg = f"{field}={_short(value)} is invalid: {rule}"
        items.append(
            {
                "loc": loc,
                "msg": msg,
                "type": error.get("type", "value_error"),
                "input": _jsonable(value),
            }
        )
    return items


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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

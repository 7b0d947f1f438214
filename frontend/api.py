"""Thin typed HTTP client for the headroom API (``/api/v1``).

The dashboard never opens the database: everything it shows comes through this client.
Response shapes are ``TypedDict``s that mirror the JSON of the API contract one to one;
times are epoch seconds (``t``) or ISO-8601 strings (``*_at``), durations are seconds.

Every failure surfaces as :class:`ApiError`, which carries the HTTP status (``None`` when
no response arrived: refused, timed out) and the parsed ``detail`` of the error body, so
a page can place each message next to the field it concerns.

Authentication: a client made with ``token=`` sends ``Authorization: Bearer <token>``
on every request. A 401 on any request but the login itself sets ``unauthorized``, so
whoever owns the client can end the session once the request is done. The token is
never part of a message, a ``repr`` or a log line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, NotRequired, Self, TypedDict, cast

import httpx

API_PREFIX = "/api/v1"
DEFAULT_TIMEOUT_S = 3.0
LOGIN_PATH = "/auth/login"

JobStatus = Literal["pending", "starting", "running", "stopping", "stopped", "failed"]
Role = Literal["viewer", "operator", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "operator", "admin")  # least to most privileged
ACTIVE_JOB_STATUSES: frozenset[str] = frozenset({"pending", "starting", "running"})
TERMINAL_JOB_STATUSES: frozenset[str] = frozenset({"stopped", "failed"})


class Health(TypedDict):
    status: str
    database: str


class QueryClass(TypedDict):
    id: int
    name: str
    priority: float
    delay_target_s: float
    tau0: float
    tau1: float
    tau2: float
    tau3: float
    created_at: str
    updated_at: str


class QueryClassCreate(TypedDict):
    name: str | None
    priority: float | None
    delay_target_s: float | None
    tau0: NotRequired[float]
    tau1: NotRequired[float]
    tau2: NotRequired[float]
    tau3: NotRequired[float]


class JobClass(TypedDict):
    """The frozen snapshot of a class a job was launched with."""

    name: str
    priority: float
    delay_target_s: float


class Job(TypedDict):
    id: int
    status: JobStatus
    spark_master: str
    restart_of: int | None  # the job this run restarted
    created_by: str | None  # username that started it
    pid: int | None
    exit_code: int | None
    failure_reason: str | None  # the reason, then "--- log tail ---" and the last lines
    created_at: str
    started_at: str | None
    stop_requested_at: str | None
    stopped_at: str | None
    control_period_s: float
    classes: list[JobClass]


class JobLog(TypedDict):
    job_id: int
    lines: list[str]


class LoginResult(TypedDict):
    access_token: str
    token_type: str
    expires_at: str | None
    username: str
    role: Role


class User(TypedDict):
    id: int
    username: str
    role: Role
    active: bool
    created_at: str


class UserCreate(TypedDict):
    username: str
    password: str
    role: Role


class UserUpdate(TypedDict, total=False):
    password: str
    role: Role
    active: bool


class MetricSample(TypedDict):
    """One control period of one class: counts over ``period_s``, rates per second."""

    class_name: str
    seq: int
    t: float
    period_s: float
    arrived_count: int
    output_count: int
    arrival_rate: float
    response_time_mean_s: float | None  # None: nothing was output in the period
    response_time_max_s: float | None


class JobMetrics(TypedDict):
    job_id: int
    samples: list[MetricSample]


class ApiError(Exception):
    """A request that did not succeed.

    ``status_code`` is ``None`` when the API could not be reached at all. ``detail`` is
    the ``detail`` member of the JSON error body when there is one (a string, or
    FastAPI's list of validation errors), else the raw body text.
    """

    def __init__(self, message: str, *, status_code: int | None = None, detail: Any = None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.detail = detail

    @property
    def forbidden(self) -> bool:
        """The caller's role may not do this (HTTP 403); ``detail`` says what it needs."""
        return self.status_code == httpx.codes.FORBIDDEN

    @property
    def field_errors(self) -> dict[str, str]:
        """``{field: message}`` of a 422 response; empty for any other error."""
        if self.status_code != httpx.codes.UNPROCESSABLE_ENTITY:
            return {}
        return field_errors(self.detail)


def field_errors(detail: Any) -> dict[str, str]:
    """Map FastAPI's 422 ``detail`` list to ``{field: message}``.

    The field is the last element of ``loc`` (``["body", "tau2"]`` → ``"tau2"``); an
    error on the body as a whole (``loc == ["body"]``) is keyed ``"body"``. Several
    messages for one field are joined with ``"; "``. Anything that is not a list of
    error objects (a plain string detail) gives ``{}``.
    """
    if not isinstance(detail, list):
        return {}
    errors: dict[str, list[str]] = {}
    for item in detail:
        if not isinstance(item, Mapping):
            continue
        loc = item.get("loc")
        field = str(loc[-1]) if isinstance(loc, Sequence) and loc else "body"
        message = str(item.get("msg", "invalid value"))
        errors.setdefault(field, []).append(message)
    return {field: "; ".join(messages) for field, messages in errors.items()}


def error_text(err: ApiError) -> str:
    """What to tell the user about ``err``: for a 403 the API's own sentence (which role
    it needs), for anything else the full message with status and endpoint."""
    if err.forbidden:
        return detail_text(err.detail) or err.message
    return err.message


def detail_text(detail: Any) -> str:
    """One readable line for any ``detail`` (string, validation list or other JSON)."""
    if isinstance(detail, str):
        return detail
    by_field = field_errors(detail)
    if by_field:
        return "; ".join(f"{field}: {message}" for field, message in by_field.items())
    return "" if detail is None else str(detail)


class ApiClient:
    """Synchronous client; one instance per unit of work, closed when done.

    Use as a context manager: ``with ApiClient(url) as api: api.list_classes()``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=self.base_url + API_PREFIX,
            timeout=timeout_s,
            transport=transport,
            headers=headers,
        )
        self.unauthorized = False  # a request (not the login) was answered 401

    def __repr__(self) -> str:  # never the token
        return f"ApiClient({self.base_url!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- endpoints -------------------------------------------------------------------

    def health(self) -> Health:
        return cast(Health, self._request("GET", "/health"))

    def login(self, username: str, password: str) -> LoginResult:
        body = {"username": username, "password": password}
        return cast(LoginResult, self._request("POST", LOGIN_PATH, json=body))

    def logout(self) -> None:
        self._request("POST", "/auth/logout")

    def me(self) -> User:
        return cast(User, self._request("GET", "/auth/me"))

    def list_users(self) -> list[User]:
        return cast(list[User], self._request("GET", "/users"))

    def create_user(self, body: UserCreate) -> User:
        return cast(User, self._request("POST", "/users", json=body))

    def update_user(self, user_id: int, body: UserUpdate) -> User:
        return cast(User, self._request("PATCH", f"/users/{user_id}", json=body))

    def list_classes(self) -> list[QueryClass]:
        return cast(list[QueryClass], self._request("GET", "/classes"))

    def create_class(self, body: QueryClassCreate) -> QueryClass:
        return cast(QueryClass, self._request("POST", "/classes", json=body))

    def delete_class(self, class_id: int) -> None:
        self._request("DELETE", f"/classes/{class_id}")

    def list_jobs(self) -> list[Job]:
        return cast(list[Job], self._request("GET", "/jobs"))

    def get_job(self, job_id: int) -> Job:
        return cast(Job, self._request("GET", f"/jobs/{job_id}"))

    def start_job(
        self,
        class_ids: Sequence[int] | None,
        duration_s: float | None,
        *,
        idempotency_key: str | None = None,
    ) -> Job:
        """Launch a job; a retry with the same ``idempotency_key`` gets the same job."""
        body: dict[str, Any] = {"duration_s": duration_s}
        if class_ids is not None:
            body["class_ids"] = list(class_ids)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(Job, self._request("POST", "/jobs", json=body, headers=headers))

    def stop_job(self, job_id: int) -> Job:
        return cast(Job, self._request("POST", f"/jobs/{job_id}/stop"))

    def restart_job(self, job_id: int) -> Job:
        """A new run of a stopped or failed job (409 otherwise); returns the NEW job."""
        return cast(Job, self._request("POST", f"/jobs/{job_id}/restart"))

    def job_log(self, job_id: int, lines: int = 200) -> JobLog:
        params = {"lines": str(lines)}
        return cast(JobLog, self._request("GET", f"/jobs/{job_id}/log", params=params))

    def job_metrics(self, job_id: int, since: float | None = None) -> JobMetrics:
        params = {} if since is None else {"since": repr(since)}
        return cast(JobMetrics, self._request("GET", f"/jobs/{job_id}/metrics", params=params))

    # -- plumbing --------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        try:
            response = self._http.request(method, path, json=json, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise ApiError(f"The API at {self.base_url} did not answer in time ({exc}).") from exc
        except httpx.TransportError as exc:
            raise ApiError(f"Cannot reach the API at {self.base_url} ({exc}).") from exc
        if response.is_success:
            if response.status_code == httpx.codes.NO_CONTENT or not response.content:
                return None
            return _json_or_error(response)
        if response.status_code == httpx.codes.UNAUTHORIZED and path != LOGIN_PATH:
            self.unauthorized = True
        detail = _error_detail(response)
        summary = detail_text(detail) or response.reason_phrase
        raise ApiError(
            f"{summary} (HTTP {response.status_code} on {method} {API_PREFIX}{path})",
            status_code=response.status_code,
            detail=detail,
        )


def _json_or_error(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise ApiError(
            f"The API answered {response.request.url.path} with a body that is not JSON.",
            status_code=response.status_code,
            detail=response.text,
        ) from exc


def _error_detail(response: httpx.Response) -> Any:
    try:
        body = response.json()
    except ValueError:
        return response.text
    if isinstance(body, Mapping) and "detail" in body:
        return body["detail"]
    return body

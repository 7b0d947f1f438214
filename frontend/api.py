"""Thin typed HTTP client for the headroom API (``/api/v1``).

The dashboard never opens the database: everything it shows comes through this client.
Request and response bodies are the ``TypedDict``s of ``frontend.api_types``, generated
from the API's OpenAPI schema (``scripts/api_types.py``; a test fails when they drift),
re-exported here under the dashboard's names; times are epoch seconds (``t``) or
ISO-8601 strings (``*_at``), durations are seconds.

Every failure surfaces as :class:`ApiError`, which carries the HTTP status (``None`` when
no response arrived: refused, timed out) and the parsed ``detail`` of the error body, so
a page can place each message next to the field it concerns.

Authentication: a client made with ``token=`` sends ``Authorization: Bearer <token>``
on every request. A 401 on any request but the login itself sets ``unauthorized``, so
whoever owns the client can end the session once the request is done. The token is
never part of a message, a ``repr`` or a log line.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypedDict, Unpack, cast

import httpx

from frontend import api_types as schema

API_PREFIX = "/api/v1"
DEFAULT_TIMEOUT_S = 3.0
# The what-if replays the job's last minutes through the simulator twice: up to about a
# second on an idle core, more beside a running Spark job on two cores (CI's review once
# showed no prediction there, most likely past the 3 s default), and an API process's
# first preview also starts the process that replays it. A busy API refuses at once
# (429, 503) rather than keeping the request waiting.
PREVIEW_TIMEOUT_S = 20.0
LOGIN_PATH = "/auth/login"
TRUNCATED_HEADER = "x-headroom-truncated"

Role = schema.Role
ROLES: tuple[Role, ...] = ("viewer", "operator", "admin")  # least to most privileged
ACTIVE_JOB_STATUSES: frozenset[schema.JobStatus] = frozenset({"pending", "starting", "running"})
TERMINAL_JOB_STATUSES: frozenset[schema.JobStatus] = frozenset({"stopped", "failed"})

# The API's bodies under the names the dashboard uses (frontend.api_types, generated from
# the API's OpenAPI schema, has them under the schema's names).
QueryClass = schema.QueryClassRead
QueryClassCreate = schema.QueryClassCreate
ContinuousQuery = schema.QueryRead
Stream = schema.StreamRead
StreamColumn = schema.StreamColumn
StreamCreate = schema.StreamSpec
Job = schema.JobRead
JobCreate = schema.JobCreate
ScenarioSummary = schema.ScenarioSummary
Manager = schema.ManagerRead
ManagerParam = schema.ManagerParamRead
LoginResult = schema.TokenResponse
User = schema.UserRead
UserCreate = schema.UserCreate
UserUpdate = schema.UserUpdate
MetricSample = schema.MetricSample
ActionLog = schema.ActionLogRead
ClassConfig = schema.ClassControl
LiveConfig = schema.LiveConfig
ConfigVersion = schema.VersionRead
JobConfig = schema.JobConfigRead
ClassPrediction = schema.ClassPrediction
TrackRecord = schema.TrackRecord
ClassSummary = schema.ClassSummary
RunSummary = schema.RunSummary

# What follows is the client's own: no body of the API has these shapes.

ParamValue = float | int | str | bool
"""A manager parameter value, as the API stores it (the schema spells it out inline)."""


class MetricsQuery(TypedDict, total=False):
    """Parameters of ``GET /jobs/{id}/metrics`` (and its CSV export); epoch seconds.

    Query parameters, not a body: the schema lists them per route, not as a type.
    The window selects samples, ``step_s`` merges them into buckets, then ``limit`` keeps
    at most that many results: the newest with ``last_s``, else the oldest. The CSV export
    without ``limit`` streams every sample of the window.
    """

    since: float  # only t > since
    until: float  # only t <= until
    last_s: float  # only the newest last_s seconds of the job's samples
    class_name: str
    step_s: float  # downsample into buckets of this many seconds (before limit)
    limit: int  # at most 100000
    wait_s: float  # a long poll: wait up to this long for a sample with t > newer_than
    newer_than: float


class RunRange(TypedDict, total=False):
    """Part of a run: epoch seconds (``since`` exclusive, ``until``) or seconds after the
    run's first sample (``since_s``, ``until_s``, both inclusive), not both. Query
    parameters of ``/jobs/{id}/summary`` and ``/runs/compare``, not a body."""

    since: float
    until: float
    since_s: float
    until_s: float


class CsvExport(TypedDict):
    """``GET /jobs/{id}/metrics/export`` as the client hands it on: the CSV text and what
    the response's headers say of it (the schema has no JSON body for it)."""

    filename: str
    content: str
    truncated: bool  # only with a limit: rows were left out (X-Headroom-Truncated)


class _SendOptions(TypedDict, total=False):
    """What a request may carry besides its method and path (``ApiClient._send``'s
    keywords), typed once for the methods that pass them on."""

    json: Any
    params: Mapping[str, str] | None
    headers: Mapping[str, str] | None
    timeout_s: float | None


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


def form_field(key: str, fields: Collection[str]) -> str | None:
    """The form field an error key belongs to, or ``None``.

    The core names nested fields with dots: ``classes.ads.tau2`` belongs to ``tau2``,
    ``manager_params.headroom`` to ``manager_params``; the last segment that is a field
    of the form wins.
    """
    if key in fields:
        return key
    for segment in reversed(key.split(".")):
        if segment in fields:
            return segment
    return None


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
        # The API's sentences name their field already ("tau2=0.3 is invalid: ...").
        return "; ".join(
            message if message.startswith(field) else f"{field}: {message}"
            for field, message in by_field.items()
        )
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

    def health(self) -> schema.Health:
        return cast(schema.Health, self._request("GET", "/health"))

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

    def list_queries(self, class_id: int) -> list[ContinuousQuery]:
        return cast(list[ContinuousQuery], self._request("GET", f"/classes/{class_id}/queries"))

    def get_query(self, class_id: int, query_id: int) -> ContinuousQuery:
        path = f"/classes/{class_id}/queries/{query_id}"
        return cast(ContinuousQuery, self._request("GET", path))

    def create_query(self, class_id: int, body: Mapping[str, Any]) -> ContinuousQuery:
        """``body`` goes as given (a spec the user wrote): the API judges every part."""
        path = f"/classes/{class_id}/queries"
        return cast(ContinuousQuery, self._request("POST", path, json=body))

    def replace_query(
        self, class_id: int, query_id: int, body: Mapping[str, Any]
    ) -> ContinuousQuery:
        path = f"/classes/{class_id}/queries/{query_id}"
        return cast(ContinuousQuery, self._request("PUT", path, json=body))

    def delete_query(self, class_id: int, query_id: int) -> None:
        self._request("DELETE", f"/classes/{class_id}/queries/{query_id}")

    def list_streams(self) -> list[Stream]:
        return cast(list[Stream], self._request("GET", "/streams"))

    def create_stream(self, body: StreamCreate) -> Stream:
        return cast(Stream, self._request("POST", "/streams", json=body))

    def delete_stream(self, stream_id: int) -> None:
        self._request("DELETE", f"/streams/{stream_id}")

    def list_scenarios(self) -> list[ScenarioSummary]:
        """The stored scenarios a job can run, by id."""
        return cast(list[ScenarioSummary], self._request("GET", "/scenarios"))

    def list_jobs(self) -> list[Job]:
        return cast(list[Job], self._request("GET", "/jobs"))

    def get_job(self, job_id: int) -> Job:
        return cast(Job, self._request("GET", f"/jobs/{job_id}"))

    def get_class(self, class_id: int) -> QueryClass:
        return cast(QueryClass, self._request("GET", f"/classes/{class_id}"))

    def update_class(self, class_id: int, body: Mapping[str, Any]) -> QueryClass:
        return cast(QueryClass, self._request("PATCH", f"/classes/{class_id}", json=body))

    def start_job(
        self,
        class_ids: Sequence[int] | None,
        duration_s: float | None,
        *,
        idempotency_key: str | None = None,
        options: JobCreate | None = None,
    ) -> Job:
        """Launch a job; a retry with the same ``idempotency_key`` gets the same job.

        ``options`` adds the other fields of ``POST /jobs`` (manager, policy, ...).
        """
        body: dict[str, Any] = {**(options or {}), "duration_s": duration_s}
        if class_ids is not None:
            body["class_ids"] = list(class_ids)
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return cast(Job, self._request("POST", "/jobs", json=body, headers=headers))

    def stop_job(self, job_id: int) -> Job:
        return cast(Job, self._request("POST", f"/jobs/{job_id}/stop"))

    def restart_job(self, job_id: int) -> Job:
        """A new run of a stopped or failed job (409 otherwise); returns the NEW job."""
        return cast(Job, self._request("POST", f"/jobs/{job_id}/restart"))

    def job_log(self, job_id: int, lines: int = 200) -> schema.JobLog:
        params = {"lines": str(lines)}
        return cast(schema.JobLog, self._request("GET", f"/jobs/{job_id}/log", params=params))

    def job_metrics(
        self, job_id: int, since: float | None = None, query: MetricsQuery | None = None
    ) -> schema.MetricSeries:
        """Samples oldest first: after ``since`` and within ``query`` (``last_s``, ...)."""
        values: dict[str, Any] = dict(query or {})
        if since is not None:
            values["since"] = since
        params = _query_params(values)
        return cast(
            schema.MetricSeries, self._request("GET", f"/jobs/{job_id}/metrics", params=params)
        )

    def job_actions(self, job_id: int, limit: int = 50) -> ActionLog:
        """The newest ``limit`` control actions of a job (oldest first), with its thresholds."""
        params = {"limit": str(limit)}
        return cast(ActionLog, self._request("GET", f"/jobs/{job_id}/actions", params=params))

    def clusters(self) -> schema.ClustersRead:
        """The coordinated masters and the allocation each has in force."""
        return cast(schema.ClustersRead, self._request("GET", "/clusters"))

    def reallocations(self, master: str, limit: int = 200) -> schema.ReallocationsRead:
        """A coordinated master's newest ``limit`` changes of allocation, oldest first."""
        params = {"master": master, "limit": str(limit)}
        return cast(
            schema.ReallocationsRead,
            self._request("GET", "/clusters/reallocations", params=params),
        )

    def handoffs(self, limit: int = 50) -> schema.HandoffsRead:
        """The newest ``limit`` hand-offs of classes between jobs, newest first."""
        params = {"limit": str(limit)}
        return cast(schema.HandoffsRead, self._request("GET", "/handoffs", params=params))

    def create_handoff(self, body: schema.HandoffCreate) -> schema.HandoffRead:
        """Move a class from the job computing it to one holding it in standby."""
        return cast(schema.HandoffRead, self._request("POST", "/handoffs", json=body))

    def export_metrics(self, job_id: int, query: MetricsQuery | None = None) -> CsvExport:
        """The samples as CSV text, with the file name the API suggests."""
        path = f"/jobs/{job_id}/metrics/export"
        response = self._send("GET", path, params=_query_params(dict(query or {})))
        filename = _attachment_name(response.headers.get("content-disposition", ""))
        return {
            "filename": filename or f"job-{job_id}-metrics.csv",
            "content": response.text,
            "truncated": response.headers.get(TRUNCATED_HEADER, "false") == "true",
        }

    def list_managers(self) -> list[Manager]:
        """The selectable load managers with their parameters, defaults and rules."""
        return cast(list[Manager], self._request("GET", "/managers"))

    def job_config(self, job_id: int) -> JobConfig:
        return cast(JobConfig, self._request("GET", f"/jobs/{job_id}/config"))

    def change_job_config(self, job_id: int, body: Mapping[str, Any]) -> JobConfig:
        """A new configuration version (partial body, same shape as the config)."""
        return cast(JobConfig, self._request("PATCH", f"/jobs/{job_id}/config", json=body))

    def preview_job_config(self, job_id: int, body: Mapping[str, Any]) -> schema.WhatIfRead:
        """What a change would do, predicted by replaying the job's last minutes; nothing
        is stored."""
        path = f"/jobs/{job_id}/config/preview"
        return cast(
            schema.WhatIfRead, self._request("POST", path, json=body, timeout_s=PREVIEW_TIMEOUT_S)
        )

    def run_summary(
        self, job_id: int, since: float | None = None, until: float | None = None
    ) -> RunSummary:
        params = _query_params({"since": since, "until": until})
        return cast(RunSummary, self._request("GET", f"/jobs/{job_id}/summary", params=params))

    def compare_runs(self, a: int, b: int, within: RunRange | None = None) -> schema.RunComparison:
        """Both runs' summaries, over ``within`` when given (offsets ``since_s``/``until_s``
        count from each run's own first sample)."""
        params = _query_params({"a": a, "b": b, **(within or {})})
        return cast(schema.RunComparison, self._request("GET", "/runs/compare", params=params))

    # -- plumbing --------------------------------------------------------------------

    def _request(self, method: str, path: str, **options: Unpack[_SendOptions]) -> Any:
        """The decoded body (None when empty), or ``ApiError``; ``options`` as ``_send``
        takes them."""
        response = self._send(method, path, **options)
        if response.status_code == httpx.codes.NO_CONTENT or not response.content:
            return None
        return _json_or_error(response)

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> httpx.Response:
        """The successful response, or ``ApiError``; ``timeout_s`` overrides the client's
        timeout for this request."""
        timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else httpx.Timeout(timeout_s)
        try:
            response = self._http.request(
                method, path, json=json, params=params, headers=headers, timeout=timeout
            )
        except httpx.TimeoutException as exc:
            raise ApiError(f"The API at {self.base_url} did not answer in time ({exc}).") from exc
        except httpx.TransportError as exc:
            raise ApiError(f"Cannot reach the API at {self.base_url} ({exc}).") from exc
        if response.is_success:
            return response
        if response.status_code == httpx.codes.UNAUTHORIZED and path != LOGIN_PATH:
            self.unauthorized = True
        detail = _error_detail(response)
        summary = detail_text(detail) or response.reason_phrase
        raise ApiError(
            f"{summary} (HTTP {response.status_code} on {method} {API_PREFIX}{path})",
            status_code=response.status_code,
            detail=detail,
        )


def _query_params(values: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters without the ``None`` ones; floats keep every digit (``repr``)."""
    params: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        params[key] = repr(value) if isinstance(value, float) else str(value)
    return params


def _attachment_name(disposition: str) -> str | None:
    """``attachment; filename="x.csv"`` → ``x.csv``."""
    for part in disposition.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "filename" and value:
            return value.strip().strip('"')
    return None


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

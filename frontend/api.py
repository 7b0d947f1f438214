"""Thin typed HTTP client for the headroom API (``/api/v1``).

The dashboard never opens the database: everything it shows comes through this client.
Response shapes are ``TypedDict``s that mirror the JSON of the API contract one to one;
times are epoch seconds (``t``) or ISO-8601 strings (``*_at``), durations are seconds.

Every failure surfaces as :class:`ApiError`, which carries the HTTP status (``None`` when
no response arrived: refused, timed out) and the parsed ``detail`` of the error body, so
a page can place each message next to the field it concerns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, NotRequired, Self, TypedDict, cast

import httpx

API_PREFIX = "/api/v1"
DEFAULT_TIMEOUT_S = 3.0

JobStatus = Literal["pending", "starting", "running", "stopping", "stopped", "failed"]
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
    created_at: str
    started_at: str | None
    stopped_at: str | None
    failure_reason: str | None
    classes: list[JobClass]


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
        timeout_s: float = DEFAULT_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url + API_PREFIX, timeout=timeout_s, transport=transport
        )

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

    def start_job(self, class_ids: Sequence[int] | None, duration_s: float | None) -> Job:
        body: dict[str, Any] = {"duration_s": duration_s}
        if class_ids is not None:
            body["class_ids"] = list(class_ids)
        return cast(Job, self._request("POST", "/jobs", json=body))

    def stop_job(self, job_id: int) -> Job:
        return cast(Job, self._request("POST", f"/jobs/{job_id}/stop"))

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
    ) -> Any:
        try:
            response = self._http.request(method, path, json=json, params=params)
        except httpx.TimeoutException as exc:
            raise ApiError(f"The API at {self.base_url} did not answer in time ({exc}).") from exc
        except httpx.TransportError as exc:
            raise ApiError(f"Cannot reach the API at {self.base_url} ({exc}).") from exc
        if response.is_success:
            if response.status_code == httpx.codes.NO_CONTENT or not response.content:
                return None
            return _json_or_error(response)
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

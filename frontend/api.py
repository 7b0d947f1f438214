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

from collections.abc import Collection, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, NotRequired, Self, TypedDict, cast

import httpx

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

JobStatus = Literal["pending", "starting", "running", "stopping", "stopped", "failed"]
JobSource = Literal["generator", "redis"]  # where a job's streams come from
JobSink = Literal["none", "parquet", "json", "redis"]  # where its output rows go
ColumnType = Literal["long", "double", "string", "boolean", "timestamp"]
Role = Literal["viewer", "operator", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "operator", "admin")  # least to most privileged
ACTIVE_JOB_STATUSES: frozenset[str] = frozenset({"pending", "starting", "running"})
TERMINAL_JOB_STATUSES: frozenset[str] = frozenset({"stopped", "failed"})


class Health(TypedDict):
    status: str
    database: str


ParamValue = float | int | str | bool
"""A manager parameter value, as the API stores it."""


class QueryClass(TypedDict):
    id: int
    name: str
    priority: float
    delay_target_s: float
    tau0: float
    tau1: float
    tau2: float
    tau3: float
    manager: str
    manager_params: dict[str, ParamValue]
    reserve_fraction: float
    max_lend_fraction: float
    catch_up: bool
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
    manager: NotRequired[str]
    manager_params: NotRequired[dict[str, ParamValue]]
    reserve_fraction: NotRequired[float]
    max_lend_fraction: NotRequired[float]
    catch_up: NotRequired[bool]


class QuerySpecBody(TypedDict):
    """``POST``/``PUT /classes/{id}/queries``: a continuous query in the scenario format's
    operator vocabulary (docs/scenario-format.md); the API validates every operator."""

    name: str
    source: str  # a stream, or query:<name> to read a shared query's output
    operators: list[dict[str, Any]]
    shared: NotRequired[bool]


class ContinuousQuery(QuerySpecBody):
    id: int
    class_id: int
    created_at: str
    updated_at: str


class StreamColumn(TypedDict):
    """One column of a declared stream (docs/scenario-format.md, ``streams[].columns``)."""

    name: str
    type: ColumnType
    generator: dict[str, Any]  # how a generated stream draws it: {"kind", ...}


class StreamCreate(TypedDict):
    """``POST /streams``: ``columns`` go as the user wrote them; the API judges them."""

    name: str
    columns: Any
    event_time: NotRequired[str]
    description: NotRequired[str]


class Stream(TypedDict):
    """A declared stream: the columns its tuples carry, which queries reading it are
    checked against."""

    id: int
    name: str
    columns: list[StreamColumn]
    event_time: str | None  # the timestamp column windows use; None: the arrival instant
    description: str
    created_at: str
    updated_at: str


class JobCreate(TypedDict, total=False):
    """``POST /jobs``: everything is optional; the API fills its defaults.

    The workload is either the chosen classes, each fed a generated stream at
    ``rate_per_s``, or a stored scenario (``scenario_id``: its classes, queries and
    workload), in which case the API ignores ``class_ids`` and ``rate_per_s``.
    """

    scenario_id: int
    class_ids: list[int]
    duration_s: float | None
    rate_per_s: float
    spark_master: str
    manager: str  # overrides every class's own manager
    recommend_only: bool
    policy: str
    redistribution_every: int
    source: JobSource  # generator (default), or each stream's Redis stream
    sink: JobSink  # none (default), files under the job's directory, or a Redis stream
    queries: str  # one (default): every class in one streaming query; tier: one per tier


class ScenarioSummary(TypedDict):
    """A stored scenario as ``GET /scenarios`` lists it (without its document)."""

    id: int
    name: str
    description: str
    updated_at: str


class JobClass(TypedDict):
    """The frozen snapshot of a class a job was launched with."""

    name: str
    priority: float
    delay_target_s: float
    rate_per_s: float | None  # generated arrivals/s (0: a scenario's workload)
    manager: str | None  # the load manager it was launched with


class JobEngine(TypedDict, total=False):
    """How the Spark engine ran the job: its snapshot's engine settings as stored (a
    newer engine may add settings; an older snapshot may lack some)."""

    source: str | None  # generator or redis
    redis_url: str | None  # without its password
    redis_prefix: str | None
    sink: str | None
    sink_path: str | None
    target_utilization: float | None
    warmup_s: float | None
    plain: bool | None
    queries: str | None  # one, or tier (a query per priority tier)
    burn: bool | None
    burn_repetition_ns: float | None
    partitions: int | None


class JobLaunch(TypedDict):
    """The options a job was started with, from its immutable snapshot."""

    scenario_id: int | None  # the stored scenario it ran; None: the registered classes
    scenario_name: str | None
    rate_per_s: float | None  # generated rate per class; None: the scenario's workload
    duration_s: float | None  # None: until stopped
    manager: str | None  # the one manager asked for every class; None: each class's own
    mode: Literal["dilos", "per_class"]
    recommend_only: bool
    policy: str
    redistribution_every: int
    engine: JobEngine


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
    launch: JobLaunch


class ManagerParam(TypedDict):
    """One parameter of a load manager (``GET /managers``), as the core validates it."""

    name: str
    type: Literal["float", "int", "bool", "str"]
    default: ParamValue
    description: str
    unit: str | None  # e.g. "s/s"
    rules: list[str]  # each worded as the API's 422 states it, e.g. "must be > 0 s/s"
    minimum: float | None  # inclusive bounds; None: unbounded
    exclusive_minimum: float | None
    maximum: float | None
    exclusive_maximum: float | None
    choices: list[str] | None  # the allowed values of a text parameter


class Manager(TypedDict):
    """A selectable load manager (``GET /managers``)."""

    kind: str  # what a class's ``manager`` takes
    label: str
    summary: str
    default: bool  # the manager a new class gets when it names none
    parameters: list[ManagerParam]  # what ``manager_params`` takes (not the delay target)


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
    """One control period of one class: counts over ``period_s``, rates per second.

    The first nine fields are always set; the others are what the controller knows (a
    job may report ``None`` for any of them). Fractions are within [0, 1]; ``load`` and
    ``headroom`` are in seconds of work per second (s/s); ``capacity_usage`` is load /
    headroom.
    """

    class_name: str
    seq: int
    t: float
    period_s: float
    arrived_count: int
    output_count: int
    arrival_rate: float
    response_time_mean_s: float | None  # None: nothing was output in the period
    response_time_max_s: float | None
    response_time_p50_s: float | None
    response_time_p95_s: float | None
    response_time_p99_s: float | None
    violation_mean_s: float | None
    violation_max_s: float | None
    admitted_count: int | None
    shed_count: int | None
    waiting_count: int | None
    load: float | None
    capacity_share: float | None
    headroom: float | None
    capacity_usage: float | None
    shed_fraction: float | None
    oracle_shed_fraction: float | None
    floor_s: float | None  # None: the engine does not measure it
    manager: str | None
    manager_state: str | None  # normal, UT, OT, overloaded or infeasible
    redistributed: bool | None
    config_version: int | None
    # A warm-up period: its tuples waited through the job's first Spark batch, so its
    # response times measure Spark's start, not lateness.
    warmup: bool | None
    executors: int | None  # elastic jobs: the pool serving, the size asked, the job's u
    executors_requested: int | None
    job_usage: float | None


class JobMetrics(TypedDict):
    job_id: int
    samples: list[MetricSample]
    # More results matched than ``limit``: with last_s the oldest were left out, else
    # the newest.
    truncated: bool


class ActionVerdict(TypedDict):
    """Violation (s) and loss over the periods before a control action and after it."""

    outcome: Literal["improved", "unchanged", "worse"]
    periods: int
    violation_before_s: float
    violation_after_s: float
    loss_before: float
    loss_after: float


class ControlAction(TypedDict):
    """One control action of a job (``GET /jobs/{id}/actions``)."""

    seq: int
    at_s: float  # epoch s
    kind: Literal["scale_out", "scale_in", "shed_more", "shed_less"]
    class_name: str | None  # shedding only
    usage: float
    threshold: float | None  # scaling only: the τ crossed, and for how long
    held_s: float | None
    manager_state: str | None
    executors_before: int | None  # None: not elastic
    executors_after: int | None
    shed_before: float
    shed_after: float
    verdict: ActionVerdict | None  # None until it is in


class ActionLog(TypedDict):
    job_id: int
    thresholds: dict[str, float]  # the job's tau0..tau3
    actions: list[ControlAction]  # oldest first
    truncated: bool


class MetricsQuery(TypedDict, total=False):
    """Parameters of ``GET /jobs/{id}/metrics`` (and its CSV export); epoch seconds.

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


class ClassConfig(TypedDict):
    """The live-tunable settings of one class of a running job."""

    priority: float
    delay_target_s: float
    tau0: float
    tau1: float
    tau2: float
    tau3: float
    manager: str
    manager_params: dict[str, ParamValue]
    reserve_fraction: float
    max_lend_fraction: float
    catch_up: bool


class LiveConfig(TypedDict):
    version: int
    recommend_only: bool
    policy: str
    redistribution_every: int
    redistribution_enabled: bool
    classes: dict[str, ClassConfig]
    elastic: dict[str, float | int | str] | None  # None: the job does not scale


class ConfigChangeRecord(TypedDict):
    path: str  # e.g. "classes.ads.tau2"
    old: Any
    new: Any


class ConfigVersion(TypedDict):
    version: int
    changes: list[ConfigChangeRecord]
    created_by: str | None
    created_at: str
    applied_at: str | None  # None: the job has not acknowledged it yet


class ConfigAtVersion(TypedDict):
    """One version's whole configuration and when the job applied it."""

    version: int
    config: LiveConfig
    created_by: str | None
    created_at: str
    applied_at: str | None  # None: not acknowledged yet


class ClassPrediction(TypedDict):
    """One class over the replayed window (None: no output, or nothing arrived)."""

    mean_violation_s: float | None
    loss_fraction: float | None
    mean_response_time_s: float | None


class ClassPreview(TypedDict):
    measured: ClassPrediction
    current: ClassPrediction
    proposed: ClassPrediction


class ConfigPreview(TypedDict):
    """``POST /jobs/{id}/config/preview``: measured, and predicted before and after."""

    job_id: int
    window_s: float
    classes: dict[str, ClassPreview]


class JobConfig(TypedDict):
    """``GET /jobs/{id}/config``: the newest configuration and its audit trail."""

    job_id: int
    latest_version: int
    applied_version: int | None
    pending_versions: list[int]
    config: LiveConfig  # the newest (= latest["config"])
    versions: list[ConfigVersion]
    # The newest version; the newest the job acknowledged (None until it acknowledges its
    # launch configuration); what it runs now (that, or the launch configuration).
    latest: ConfigAtVersion
    applied: ConfigAtVersion | None
    in_force: ConfigAtVersion
    thresholds: dict[str, float]  # the job's usage thresholds in force (tau0..tau3)


class ClassSummary(TypedDict):
    """QoS and QoD of one class over a run (or a time range of it)."""

    class_name: str
    delay_target_s: float | None
    periods: int
    warmup_periods: int  # of ``periods``; left out of the response times and violations
    arrived: int
    output: int
    shed: int | None
    mean_response_time_s: float | None
    p95_response_time_s: float | None
    max_response_time_s: float | None
    mean_violation_s: float | None
    max_violation_s: float | None
    late_period_fraction: float | None
    loss_fraction: float | None
    shed_fraction_mean: float | None
    oracle_loss_fraction: float | None
    oracle_gap: float | None


class RunSummary(TypedDict):
    job: Job
    classes: list[ClassSummary]
    first_sample_t: float | None  # origin of since_s/until_s (epoch s)


class RunRange(TypedDict, total=False):
    """Part of a run: epoch seconds (``since`` exclusive, ``until``) or seconds after the
    run's first sample (``since_s``, ``until_s``, both inclusive), not both."""

    since: float
    until: float
    since_s: float
    until_s: float


class RunComparison(TypedDict):
    a: RunSummary
    b: RunSummary


class CsvExport(TypedDict):
    filename: str
    content: str
    truncated: bool  # only with a limit: rows were left out (X-Headroom-Truncated)


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

    def job_log(self, job_id: int, lines: int = 200) -> JobLog:
        params = {"lines": str(lines)}
        return cast(JobLog, self._request("GET", f"/jobs/{job_id}/log", params=params))

    def job_metrics(
        self, job_id: int, since: float | None = None, query: MetricsQuery | None = None
    ) -> JobMetrics:
        """Samples oldest first: after ``since`` and within ``query`` (``last_s``, ...)."""
        values: dict[str, Any] = dict(query or {})
        if since is not None:
            values["since"] = since
        params = _query_params(values)
        return cast(JobMetrics, self._request("GET", f"/jobs/{job_id}/metrics", params=params))

    def job_actions(self, job_id: int, limit: int = 50) -> ActionLog:
        """The newest ``limit`` control actions of a job (oldest first), with its thresholds."""
        params = {"limit": str(limit)}
        return cast(ActionLog, self._request("GET", f"/jobs/{job_id}/actions", params=params))

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

    def preview_job_config(self, job_id: int, body: Mapping[str, Any]) -> ConfigPreview:
        """What a change would do, predicted by replaying the job's last minutes; nothing
        is stored."""
        path = f"/jobs/{job_id}/config/preview"
        return cast(
            ConfigPreview, self._request("POST", path, json=body, timeout_s=PREVIEW_TIMEOUT_S)
        )

    def run_summary(
        self, job_id: int, since: float | None = None, until: float | None = None
    ) -> RunSummary:
        params = _query_params({"since": since, "until": until})
        return cast(RunSummary, self._request("GET", f"/jobs/{job_id}/summary", params=params))

    def compare_runs(self, a: int, b: int, within: RunRange | None = None) -> RunComparison:
        """Both runs' summaries, over ``within`` when given (offsets ``since_s``/``until_s``
        count from each run's own first sample)."""
        params = _query_params({"a": a, "b": b, **(within or {})})
        return cast(RunComparison, self._request("GET", "/runs/compare", params=params))

    # -- plumbing --------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """The decoded body (None when empty), or ``ApiError``; ``timeout_s`` overrides the
        client's timeout for this request."""
        response = self._send(
            method, path, json=json, params=params, headers=headers, timeout_s=timeout_s
        )
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
        """The successful response, or ``ApiError``."""
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

"""Jobs page: start a streaming job, watch it start, stop, restart it, and read its log.

A job runs a workload: either the chosen classes, each fed a generated stream at a
constant rate, or a stored scenario (its own classes, queries and arrivals). The start
form mirrors ``POST /jobs`` (``JobCreate``): with a scenario the class choice and the
rate do not apply (the API ignores them), and an empty duration, policy or
redistribution period means the scenario's own (see ``workload_form``).

A job goes pending (queued for a worker) → starting (Spark is coming up) → running
(its first metrics arrived); the table shows where it is on that way with a progress
bar and since when it has been there.

The page polls the list every 1.5 s but re-renders the table only when the jobs
changed (``JobsTable.fingerprint``): re-rendering replaces the buttons, and a click
that lands while its button is being replaced would be lost. So the table is a pure
function of the jobs (no clock, no elapsed seconds that would change every poll).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import dash_bootstrap_components as dbc
from dash import dcc, html
from dash.development.base_component import Component

from frontend.api import (
    ACTIVE_JOB_STATUSES,
    TERMINAL_JOB_STATUSES,
    ApiClient,
    ApiError,
    Job,
    JobCreate,
    ScenarioSummary,
    error_text,
    form_field,
)
from frontend.components import (
    data_table,
    error_alert,
    form_number,
    format_number,
    format_timestamp,
    is_blank,
    no_rows_yet,
    row_button,
    status_badge,
    success_alert,
)
from frontend.managers import POLICIES
from spark_runner.core.redistribution import DEFAULT_POLICY

OPTION_FIELDS: tuple[str, ...] = (
    "rate_per_s",
    "spark_master",
    "manager",
    "recommend_only",
    "policy",
    "redistribution_every",
    "source",
    "sink",
    "queries",
    "standby",
)
START_FIELDS: tuple[str, ...] = ("workload", "class_ids", "duration_s", *OPTION_FIELDS)
OWN_MANAGER = "own"  # the manager choice meaning "each class keeps its own"
DEFAULT_POLICY_CHOICE = "default"  # the policy choice: the API's default, or the scenario's
GENERATED = "generated"  # the workload: the chosen classes, one constant-rate stream each
GENERATED_CHOICE: dict[str, str] = {
    "label": "generated: constant rate per class",
    "value": GENERATED,
}
# Where the job's streams come from and where its output rows go (JobCreate.source/sink).
SOURCE_CHOICES: list[dict[str, str]] = [
    {"label": "Generated", "value": "generator"},
    {"label": "Redis streams", "value": "redis"},
]
SINK_CHOICES: list[dict[str, str]] = [
    {"label": "None", "value": "none"},
    {"label": "Parquet files", "value": "parquet"},
    {"label": "JSON files", "value": "json"},
    {"label": "Redis stream", "value": "redis"},
]
# How the job's classes map to Spark streaming queries (JobCreate.queries).
QUERIES_CHOICES: list[dict[str, str]] = [
    {"label": "One query for every class", "value": "one"},
    {"label": "A query per priority tier", "value": "tier"},
]
DEFAULT_SOURCE = "generator"
DEFAULT_SINK = "none"
DEFAULT_QUERIES = "one"
SCENARIO_PREFIX = "scenario:"  # a workload value "scenario:<id>": that stored scenario
# What JobCreate ignores when a scenario runs: the scenario brings its classes and arrivals.
GENERATED_ONLY: frozenset[str] = frozenset({"class_ids", "rate_per_s"})
# API field names that the form shows under another name.
API_FIELD_ALIASES: dict[str, str] = {"scenario_id": "workload"}
NUMBER_MESSAGES: dict[str, str] = {
    "duration_s": "Enter a duration in seconds (a number), or leave it empty.",
    "rate_per_s": "Enter an arrival rate in rows per second (a number), or leave it empty.",
    "redistribution_every": "Enter a whole number of control periods, or leave it empty.",
}
STOP_BUTTON_TYPE = "job-stop"
RESTART_BUTTON_TYPE = "job-restart"
LOG_BUTTON_TYPE = "job-log"
LOG_TAIL_LINES = 200
LOG_TAIL_MARKER = "--- log tail ---"  # how the API appends the log to a failure reason
TABLE_COLUMNS = 9  # of the jobs table (a failure row spans them all)

# The way to "running": (step, label) out of STARTUP_STEPS.
STARTUP_STEPS = 3
STARTUP: dict[str, tuple[int, str]] = {
    "pending": (1, "queued for a worker"),
    "starting": (2, "Spark is starting"),
}


@dataclass(frozen=True)
class ClassChoices:
    """Checklist options (``{"label", "value"}``), the ids to pre-select, an alert."""

    options: list[dict[str, Any]] = field(default_factory=list)
    selected: list[int] = field(default_factory=list)
    alert: Component | None = None


@dataclass(frozen=True)
class WorkloadChoices:
    """Select options for the workload (generated first, then each stored scenario), the
    scenarios as listed (for their descriptions), an alert when they could not be read."""

    options: list[dict[str, str]]
    scenarios: list[ScenarioSummary] = field(default_factory=list)
    alert: Component | None = None


@dataclass(frozen=True)
class WorkloadForm:
    """How the start form looks for one workload: what applies, what an empty field means.

    Mirrors ``JobCreate``: a scenario brings its classes and arrivals (``class_ids`` and
    ``rate_per_s`` are ignored, so the form hides the classes and disables the rate), and
    its own duration, control settings and policy fill what the operator leaves empty.
    """

    scenario_id: int | None
    applies: frozenset[str]  # the START_FIELDS the request carries for this workload
    hint: str
    classes_note: str | None  # shown instead of the class checklist (None: show it)
    rate_hint: str
    duration_placeholder: str
    duration_hint: str
    redistribution_placeholder: str
    policy_options: list[dict[str, str]]

    @property
    def classes_hidden(self) -> bool:
        return "class_ids" not in self.applies

    @property
    def rate_disabled(self) -> bool:
        return "rate_per_s" not in self.applies


@dataclass(frozen=True)
class StartOutcome:
    """``feedback_by_field`` is keyed by ``START_FIELDS``; ``job`` is set on success."""

    feedback_by_field: dict[str, str] = field(default_factory=dict)
    alert: Component | None = None
    job: Job | None = None


@dataclass(frozen=True)
class JobsTable:
    """One poll of the jobs list. ``table`` is ``None`` when nothing changed since the
    poll whose ``fingerprint`` was passed in (keep what is on screen)."""

    table: Component | None
    alert: Component | None
    fingerprint: str | None


@dataclass(frozen=True)
class LogView:
    """What the log panel shows for one job: a title, the failure (if it failed), the
    last lines, and whether more can still arrive (the job is not finished)."""

    title: str
    failure: str | None = None
    lines: list[str] = field(default_factory=list)
    alert: Component | None = None
    live: bool = False


def live_href(job_id: int) -> str:
    return f"/live?job_id={job_id}"


def history_href(job_id: int) -> str:
    return f"/history?job_id={job_id}"


def load_class_choices(api: ApiClient) -> ClassChoices:
    """Every class as a checklist option, all pre-selected (the API's own default)."""
    try:
        classes = api.list_classes()
    except ApiError as err:
        return ClassChoices(alert=error_alert(err.message))
    options = [
        {
            "label": f"{cls['name']} (priority {format_number(cls['priority'])}, "
            f"target {format_number(cls['delay_target_s'])} s)",
            "value": cls["id"],
        }
        for cls in classes
    ]
    return ClassChoices(options=options, selected=[cls["id"] for cls in classes])


# -- the workload -------------------------------------------------------------------------


def scenario_value(scenario_id: int) -> str:
    """The workload choice that runs stored scenario ``scenario_id``."""
    return f"{SCENARIO_PREFIX}{scenario_id}"


def scenario_of(workload: str | None) -> int | None:
    """The stored scenario a workload choice runs; ``None`` for the generated workload
    (and for anything that is not ``scenario:<id>``, see ``workload_feedback``)."""
    if not isinstance(workload, str) or not workload.startswith(SCENARIO_PREFIX):
        return None
    number = workload.removeprefix(SCENARIO_PREFIX)
    return int(number) if number.isascii() and number.isdigit() and int(number) > 0 else None


def workload_feedback(workload: str | None) -> str | None:
    """A message when ``workload`` is neither the generated one nor a scenario; ``None``
    (the generated workload) stands for a form without the choice."""
    if workload is None or workload == GENERATED or scenario_of(workload) is not None:
        return None
    return "Choose a workload: generated streams or a stored scenario."


def load_workload_choices(api: ApiClient) -> WorkloadChoices:
    """The generated workload, then every stored scenario (``GET /scenarios``). When the
    scenarios cannot be read, the generated workload stays available, with an alert."""
    generated = [dict(GENERATED_CHOICE)]
    try:
        scenarios = api.list_scenarios()
    except ApiError as err:
        return WorkloadChoices(
            options=generated,
            alert=error_alert(f"Stored scenarios could not be loaded: {error_text(err)}"),
        )
    options = generated + [
        {"label": f"scenario: {s['name']} (#{s['id']})", "value": scenario_value(s["id"])}
        for s in scenarios
    ]
    return WorkloadChoices(options=options, scenarios=list(scenarios))


def keep_workload(current: str | None, options: Sequence[Mapping[str, str]]) -> str:
    """The workload to keep selected once the choices are (re)loaded: the current one
    while it is still offered (a scenario may have been deleted), else generated."""
    return current if current in {o["value"] for o in options} else GENERATED


def workload_form(workload: str | None, scenarios: Sequence[ScenarioSummary] = ()) -> WorkloadForm:
    """What the start form shows and sends for ``workload`` (``scenarios``: the listed
    ones, for the chosen scenario's name and description)."""
    scenario_id = scenario_of(workload)
    policies = [{"label": policy, "value": policy} for policy in POLICIES]
    if scenario_id is None:
        return WorkloadForm(
            scenario_id=None,
            applies=frozenset(START_FIELDS),
            hint="Each chosen class gets one generated stream at the arrival rate below.",
            classes_note=None,
            rate_hint="The generated input of each class.",
            duration_placeholder="until stopped",
            duration_hint="Leave empty to run until you stop it.",
            redistribution_placeholder="10",
            policy_options=[
                {"label": f"default ({DEFAULT_POLICY})", "value": DEFAULT_POLICY_CHOICE},
                *policies,
            ],
        )
    listed = next((s for s in scenarios if s["id"] == scenario_id), None)
    name = f"{listed['name']!r}" if listed else f"#{scenario_id}"
    description = f" {listed['description'].strip()}" if listed and listed["description"] else ""
    return WorkloadForm(
        scenario_id=scenario_id,
        applies=frozenset(START_FIELDS) - GENERATED_ONLY,
        hint=f"Runs scenario {name}: its classes, queries and arrivals.{description}",
        classes_note=f"The classes of scenario {name} run (the class choice does not apply).",
        rate_hint="Does not apply: the scenario's streams feed its classes.",
        duration_placeholder="the scenario's",
        duration_hint="Leave empty to run the scenario's duration.",
        redistribution_placeholder="the scenario's",
        policy_options=[
            {"label": "the scenario's own", "value": DEFAULT_POLICY_CHOICE},
            *policies,
        ],
    )


def build_start_request(
    workload: str | None,
    class_ids: Sequence[int] | None,
    duration_s: float | None,
    options: Mapping[str, Any] | None = None,
) -> tuple[JobCreate, dict[str, str]]:
    """The whole start form → the ``POST /jobs`` body, plus a message for each field
    that cannot be sent as it is (keyed by ``START_FIELDS``).

    Only the fields that apply to the workload are sent (``workload_form``): a scenario
    sends ``scenario_id`` and no classes or rate; the generated workload always sends
    the ticked ids (an empty checklist is an error here rather than the API's "all
    classes" default, so what runs is what the operator ticked). ``duration_s`` goes as
    given (``None``: until stopped, or the scenario's duration); the API judges it.
    """
    form = workload_form(workload)
    body, feedback = build_start_options(options or {}, applies=form.applies)
    wrong_workload = workload_feedback(workload)
    if wrong_workload is not None:
        feedback["workload"] = wrong_workload
    elif form.scenario_id is not None:
        body["scenario_id"] = form.scenario_id
    elif not class_ids:
        feedback["class_ids"] = "Choose at least one class (create classes on the Classes page)."
    else:
        body["class_ids"] = list(class_ids)
    body["duration_s"] = duration_s
    return body, feedback


def build_start_options(
    values: Mapping[str, Any], applies: Collection[str] = START_FIELDS
) -> tuple[JobCreate, dict[str, str]]:
    """The optional fields of the start form → the matching ``POST /jobs`` fields, plus a
    message for each one that is not a number where a number belongs.

    Empty fields are left out, so the API applies its defaults (its Spark master, each
    class's own manager, the relative policy or the scenario's, ...); so are the fields
    not in ``applies`` (the rate, when a scenario runs). A manager chosen here overrides
    the manager of every class of the job. The source and the output go as chosen (the
    API refuses Redis when the control plane has none configured).
    """
    options: dict[str, Any] = {}
    feedback: dict[str, str] = {}
    for key in ("rate_per_s", "redistribution_every"):
        raw = values.get(key)
        if is_blank(raw) or key not in applies:
            continue
        number = form_number(raw)
        if number is None:
            feedback[key] = NUMBER_MESSAGES[key]
        elif key == "redistribution_every" and number.is_integer():
            options[key] = int(number)
        else:
            options[key] = number
    # The choices that mean "leave it to the API" (each class's own manager, the
    # default or the scenario's policy).
    unset = {"manager": OWN_MANAGER, "policy": DEFAULT_POLICY_CHOICE}
    for key in ("spark_master", "manager", "policy", "source", "sink", "queries"):
        raw = values.get(key)
        if isinstance(raw, str) and raw.strip() and raw != unset.get(key):
            options[key] = raw.strip()
    if values.get("recommend_only"):
        options["recommend_only"] = True
    standby = values.get("standby")
    if isinstance(standby, str) and standby.strip():
        options["standby"] = [n.strip() for n in standby.split(",") if n.strip()]
    return cast(JobCreate, options), feedback


def start_job(
    api: ApiClient,
    class_ids: Sequence[int] | None,
    duration_s: float | None,
    idempotency_key: str | None = None,
    options: Mapping[str, Any] | None = None,
    workload: str | None = None,
) -> StartOutcome:
    """Launch a job running ``workload`` (``None`` or ``GENERATED``: the ``class_ids``
    with generated streams; ``scenario:<id>``: that stored scenario).

    ``duration_s=None`` runs it until stopped (a scenario: for its duration). The
    ``idempotency_key`` (one per filled-in form) makes a double submit start one job.
    ``options`` are the other form values; see ``build_start_request`` for what is sent.
    The API's 422 messages come back keyed by the form field they name.
    """
    body, feedback = build_start_request(workload, class_ids, duration_s, options)
    if feedback:
        return StartOutcome(feedback_by_field=feedback)
    ids = body.pop("class_ids", None)
    duration = body.pop("duration_s", None)
    try:
        job = api.start_job(ids, duration, idempotency_key=idempotency_key, options=body)
    except ApiError as err:
        by_field = err.field_errors
        on_form: dict[str, str] = {}
        for key, msg in by_field.items():
            target = start_field(key)
            if target is not None:
                on_form[target] = f"{on_form[target]}; {msg}" if target in on_form else msg
        if on_form and len(on_form) == len(by_field):
            return StartOutcome(feedback_by_field=on_form)
        return StartOutcome(
            feedback_by_field=on_form,
            alert=error_alert(f"Could not start the job: {error_text(err)}"),
        )
    return StartOutcome(alert=_started_alert(f"Started job {job['id']}", job), job=job)


def start_field(key: str) -> str | None:
    """The start form field an API error key belongs to (``scenario_id`` → workload)."""
    return API_FIELD_ALIASES.get(key) or form_field(key, START_FIELDS)


def stop_job(api: ApiClient, job_id: int) -> Component:
    """Ask the API to stop a job; returns the alert to show."""
    try:
        job = api.stop_job(job_id)
    except ApiError as err:
        return error_alert(f"Could not stop job {job_id}: {error_text(err)}")
    return success_alert(f"Stopping job {job_id} (now {job['status']}).")


def restart_job(api: ApiClient, job_id: int) -> Component:
    """Start a new run of a stopped or failed job with its frozen configuration."""
    try:
        job = api.restart_job(job_id)
    except ApiError as err:
        return error_alert(f"Could not restart job {job_id}: {error_text(err)}")
    return _started_alert(f"Restarted job {job_id} as job {job['id']}", job)


def _started_alert(headline: str, job: Job) -> Component:
    return success_alert(
        [
            f"{headline} ({job['status']}). ",
            dcc.Link("Watch it live", href=live_href(job["id"]), className="alert-link"),
            ".",
        ]
    )


# -- the table ---------------------------------------------------------------------------


def load_jobs_table(
    api: ApiClient, *, can_control: bool = True, previous: str | None = None
) -> JobsTable:
    """The jobs table, newest first, unless the jobs are those of the ``previous``
    fingerprint; on an API error a placeholder and an alert.

    ``can_control`` (operator or higher) adds Stop and Restart buttons.
    """
    try:
        jobs = api.list_jobs()
    except ApiError as err:
        placeholder = html.P("Jobs could not be loaded.", className="text-muted")
        return JobsTable(placeholder, error_alert(err.message), None)
    fingerprint = jobs_fingerprint(jobs, can_control)
    if fingerprint == previous:
        return JobsTable(None, None, fingerprint)
    return JobsTable(render_jobs_table(jobs, can_control=can_control), None, fingerprint)


def jobs_fingerprint(jobs: Sequence[Job], can_control: bool) -> str:
    """Changes exactly when the rendered table would."""
    data = json.dumps([can_control, list(jobs)], sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()


def startup_progress(job: Job) -> tuple[int, str] | None:
    """``(step, label)`` of a job still on its way to running (of ``STARTUP_STEPS``),
    ``None`` once it runs or has ended."""
    return STARTUP.get(job["status"])


def waiting_since(job: Job) -> str | None:
    """When the job entered its current start-up step: created while pending, its
    process started while starting."""
    return job["created_at"] if job["status"] == "pending" else job["started_at"]


def split_failure(reason: str | None) -> tuple[str, list[str]]:
    """A failure reason → ``(headline, log tail lines)``; the API appends the tail after
    ``LOG_TAIL_MARKER``."""
    if not reason:
        return "no reason given", []
    headline, _, tail = reason.partition(LOG_TAIL_MARKER)
    return headline.strip() or "no reason given", [line for line in tail.splitlines() if line]


def workload_label(job: Job) -> str:
    """Which workload a job runs, from its ``launch`` block: the stored scenario by
    name and id, or the generated rate per class."""
    launch = job["launch"]
    if launch["scenario_id"] is not None:
        name = launch["scenario_name"] or "unnamed"
        return f"scenario {name} (#{launch['scenario_id']})"
    if launch["rate_per_s"] is None:
        return "generated"
    return f"generated, {format_number(launch['rate_per_s'])} rows/s per class"


def launch_details(job: Job) -> list[str]:
    """The other launch options worth a glance: manager, mode, shedding, duration and
    where it runs (the Spark master; the source when it is not the generator and the
    output when there is one)."""
    launch = job["launch"]
    details = [f"manager {launch['manager']}" if launch["manager"] else "each class's manager"]
    if launch["mode"] == "dilos":
        details.append(f"DILoS {launch['policy']}, every {launch['redistribution_every']}")
    else:
        details.append("per-class quotas")
    if launch["recommend_only"]:
        details.append("recommend only")
    duration = launch["duration_s"]
    details.append("until stopped" if duration is None else f"{format_number(duration)} s")
    details.append(job["spark_master"])
    engine = launch["engine"]
    source, sink = engine.get("source"), engine.get("sink")
    if source and source != DEFAULT_SOURCE:
        details.append(f"{source} source")
    if sink and sink != DEFAULT_SINK:
        details.append(f"{sink} output")
    if engine.get("queries") == "tier":
        details.append("a query per tier")
    return details


JOB_TABLE_HEADS = (
    "ID",
    "Status",
    "Classes",
    "Workload",
    "By",
    "Created (UTC)",
    "Started (UTC)",
    "Stopped (UTC)",
    "",
)


def render_jobs_table(jobs: Sequence[Job], *, can_control: bool = True) -> Component:
    if not jobs:
        return no_rows_yet(
            "No jobs yet.", can_control, "Start one below.", "An operator can start one."
        )
    rows: list[Component] = []
    for job in sorted(jobs, key=lambda j: j["id"], reverse=True):
        rows.append(_job_row(job, can_control=can_control))
        if job["status"] == "failed":
            rows.append(_failure_row(job))
    return data_table(JOB_TABLE_HEADS, rows, "jobs-table-grid")


def _failure_row(job: Job) -> Component:
    headline, _tail = split_failure(job["failure_reason"])
    exit_code = job.get("exit_code")
    facts = f" (exit code {exit_code})" if exit_code is not None and "code" not in headline else ""
    return html.Tr(
        html.Td(
            [
                f"Job {job['id']} failed: {headline}{facts}. ",
                html.Span("Open its log for the last lines.", className="text-muted"),
            ],
            colSpan=TABLE_COLUMNS,
            className="text-danger small border-top-0 pt-0",
        ),
        id=f"job-failure-{job['id']}",
    )


def status_cell(job: Job) -> list[Component | str]:
    """The status badge; on the way to running also a progress bar and since when."""
    cell: list[Component | str] = [status_badge(job["status"])]
    progress = startup_progress(job)
    if progress is None:
        return cell
    step, label = progress
    since = waiting_since(job)
    cell.append(
        dbc.Progress(
            value=100 * step / STARTUP_STEPS,
            striped=True,
            animated=True,
            style={"height": "6px", "maxWidth": "10rem"},
            class_name="mt-1",
            id=f"job-progress-{job['id']}",
        )
    )
    cell.append(html.Div(f"{step}/{STARTUP_STEPS} {label}", className="small text-muted"))
    if since:
        cell.append(
            html.Div(f"since {format_timestamp(since)[-8:]} UTC", className="small text-muted")
        )
    return cell


def _job_row(job: Job, *, can_control: bool) -> Component:
    classes = ", ".join(cls["name"] for cls in job["classes"]) or "—"
    actions: list[Component] = [
        dcc.Link(
            "Live", href=live_href(job["id"]), className="btn btn-sm btn-outline-primary me-2"
        ),
        dcc.Link(
            "History",
            href=history_href(job["id"]),
            className="btn btn-sm btn-outline-secondary me-2",
        ),
        row_button("Log", LOG_BUTTON_TYPE, job["id"], "outline-secondary", class_name="me-2"),
    ]
    if can_control and job["status"] in ACTIVE_JOB_STATUSES:
        actions.append(row_button("Stop", STOP_BUTTON_TYPE, job["id"], "outline-danger"))
    if can_control and job["status"] in TERMINAL_JOB_STATUSES:
        actions.append(row_button("Restart", RESTART_BUTTON_TYPE, job["id"], "outline-success"))
    id_cell: list[Component | str] = [str(job["id"])]
    if job.get("restart_of") is not None:
        id_cell.append(html.Div(f"restart of #{job['restart_of']}", className="small text-muted"))
    return html.Tr(
        [
            html.Td(id_cell),
            html.Td(status_cell(job)),
            html.Td(classes),
            html.Td(
                [
                    html.Div(workload_label(job)),
                    html.Div(" · ".join(launch_details(job)), className="small text-muted"),
                ],
                id=f"job-workload-{job['id']}",
            ),
            html.Td(job.get("created_by") or "—"),
            html.Td(format_timestamp(job["created_at"]), className="text-nowrap"),
            html.Td(format_timestamp(job["started_at"]), className="text-nowrap"),
            html.Td(format_timestamp(job["stopped_at"]), className="text-nowrap"),
            html.Td(actions, className="text-nowrap"),
        ],
        id=f"job-row-{job['id']}",
    )


# -- the log panel -----------------------------------------------------------------------


def load_log(api: ApiClient, job_id: int, lines: int = LOG_TAIL_LINES) -> LogView:
    """The job's status, failure reason and the last ``lines`` lines of its log."""
    title = f"Job {job_id} · log (last {lines} lines)"
    try:
        job = api.get_job(job_id)
        log = api.job_log(job_id, lines)
    except ApiError as err:
        return LogView(
            title=title,
            alert=error_alert(f"Could not read the log of job {job_id}: {err.message}"),
        )
    failure = None
    if job["status"] == "failed":
        failure, _tail = split_failure(job["failure_reason"])
    return LogView(
        title=f"Job {job_id} · {job['status']} · log (last {lines} lines)",
        failure=failure,
        lines=log["lines"],
        live=job["status"] not in TERMINAL_JOB_STATUSES,
    )


def render_log(view: LogView) -> list[Component]:
    """The body of the log panel."""
    parts: list[Component] = []
    if view.alert is not None:
        parts.append(view.alert)
    if view.failure is not None:
        parts.append(dbc.Alert(f"Failed: {view.failure}", color="danger", id="job-log-failure"))
    text = "\n".join(view.lines) if view.lines else "(the log is empty so far)"
    parts.append(
        html.Pre(
            text,
            id="job-log-lines",
            className="bg-light border rounded p-2 small mb-0",
            style={"maxHeight": "60vh", "overflowY": "auto", "whiteSpace": "pre-wrap"},
        )
    )
    return parts

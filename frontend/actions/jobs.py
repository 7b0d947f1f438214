"""Jobs page: start a streaming job for chosen classes, watch it start, stop, restart it,
and read its log.

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
import math
from collections.abc import Mapping, Sequence
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
    error_text,
    form_field,
)
from frontend.components import (
    error_alert,
    format_number,
    format_timestamp,
    status_badge,
    success_alert,
)

OPTION_FIELDS: tuple[str, ...] = (
    "rate_per_s",
    "spark_master",
    "manager",
    "recommend_only",
    "policy",
    "redistribution_every",
)
START_FIELDS: tuple[str, ...] = ("class_ids", "duration_s", *OPTION_FIELDS)
OWN_MANAGER = "own"  # the manager choice meaning "each class keeps its own"
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


def build_start_options(values: Mapping[str, Any]) -> tuple[JobCreate, dict[str, str]]:
    """The optional fields of the start form → the matching ``POST /jobs`` fields, plus a
    message for each one that is not a number where a number belongs.

    Empty fields are left out, so the API applies its defaults (its Spark master, each
    class's own manager, the relative policy, ...). A manager chosen here overrides the
    manager of every class of the job.
    """
    options: dict[str, Any] = {}
    feedback: dict[str, str] = {}
    for key in ("rate_per_s", "redistribution_every"):
        raw = values.get(key)
        if _blank(raw):
            continue
        number = _number(raw)
        if number is None:
            feedback[key] = NUMBER_MESSAGES[key]
        elif key == "redistribution_every" and number.is_integer():
            options[key] = int(number)
        else:
            options[key] = number
    for key in ("spark_master", "manager", "policy"):
        raw = values.get(key)
        if isinstance(raw, str) and raw.strip() and not (key == "manager" and raw == OWN_MANAGER):
            options[key] = raw.strip()
    if values.get("recommend_only"):
        options["recommend_only"] = True
    return cast(JobCreate, options), feedback


def start_job(
    api: ApiClient,
    class_ids: Sequence[int] | None,
    duration_s: float | None,
    idempotency_key: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> StartOutcome:
    """Launch a job for ``class_ids``; ``duration_s=None`` runs it until stopped.

    The ids are always sent explicitly: an empty checklist is an error here rather than
    the API's "all classes" default, so what runs is what the operator ticked. The
    ``idempotency_key`` (one per filled-in form) makes a double submit start one job.
    ``options`` are the other form values (see ``build_start_options``).
    """
    body, feedback = build_start_options(options or {})
    if not class_ids:
        feedback["class_ids"] = "Choose at least one class (create classes on the Classes page)."
    if feedback:
        return StartOutcome(feedback_by_field=feedback)
    try:
        job = api.start_job(
            list(class_ids or ()), duration_s, idempotency_key=idempotency_key, options=body
        )
    except ApiError as err:
        by_field = err.field_errors
        on_form: dict[str, str] = {}
        for key, msg in by_field.items():
            target = form_field(key, START_FIELDS)
            if target is not None:
                on_form[target] = f"{on_form[target]}; {msg}" if target in on_form else msg
        if on_form and len(on_form) == len(by_field):
            return StartOutcome(feedback_by_field=on_form)
        return StartOutcome(
            feedback_by_field=on_form,
            alert=error_alert(f"Could not start the job: {error_text(err)}"),
        )
    return StartOutcome(alert=_started_alert(f"Started job {job['id']}", job), job=job)


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


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _number(value: Any) -> float | None:
    """A finite form number, else ``None`` (bools are not numbers)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


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


def render_jobs_table(jobs: Sequence[Job], *, can_control: bool = True) -> Component:
    if not jobs:
        hint = "Start one below." if can_control else "An operator can start one."
        return html.P(f"No jobs yet. {hint}", className="text-muted")
    header = html.Thead(
        html.Tr(
            [
                html.Th(text)
                for text in (
                    "ID",
                    "Status",
                    "Classes",
                    "By",
                    "Created (UTC)",
                    "Started (UTC)",
                    "Stopped (UTC)",
                    "",
                )
            ]
        )
    )
    rows: list[Component] = []
    for job in sorted(jobs, key=lambda j: j["id"], reverse=True):
        rows.append(_job_row(job, can_control=can_control))
        if job["status"] == "failed":
            rows.append(_failure_row(job))
    table: Component = dbc.Table(
        [header, html.Tbody(rows)], hover=True, size="sm", id="jobs-table-grid"
    )
    return table


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
            colSpan=8,
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
        dbc.Button(
            "Log",
            id={"type": LOG_BUTTON_TYPE, "index": job["id"]},
            color="outline-secondary",
            size="sm",
            class_name="me-2",
        ),
    ]
    if can_control and job["status"] in ACTIVE_JOB_STATUSES:
        actions.append(
            dbc.Button(
                "Stop",
                id={"type": STOP_BUTTON_TYPE, "index": job["id"]},
                color="outline-danger",
                size="sm",
            )
        )
    if can_control and job["status"] in TERMINAL_JOB_STATUSES:
        actions.append(
            dbc.Button(
                "Restart",
                id={"type": RESTART_BUTTON_TYPE, "index": job["id"]},
                color="outline-success",
                size="sm",
            )
        )
    id_cell: list[Component | str] = [str(job["id"])]
    if job.get("restart_of") is not None:
        id_cell.append(html.Div(f"restart of #{job['restart_of']}", className="small text-muted"))
    return html.Tr(
        [
            html.Td(id_cell),
            html.Td(status_cell(job)),
            html.Td(classes),
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

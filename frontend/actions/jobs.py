"""Jobs page: start a streaming job for chosen classes, watch its status, stop it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html
from dash.development.base_component import Component

from frontend.api import ACTIVE_JOB_STATUSES, ApiClient, ApiError, Job
from frontend.components import (
    error_alert,
    format_number,
    format_timestamp,
    status_badge,
    success_alert,
)

START_FIELDS: tuple[str, ...] = ("class_ids", "duration_s")
STOP_BUTTON_TYPE = "job-stop"


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


def live_href(job_id: int) -> str:
    return f"/live?job_id={job_id}"


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


def start_job(
    api: ApiClient, class_ids: Sequence[int] | None, duration_s: float | None
) -> StartOutcome:
    """Launch a job for ``class_ids``; ``duration_s=None`` runs it until stopped.

    The ids are always sent explicitly: an empty checklist is an error here rather than
    the API's "all classes" default, so what runs is what the operator ticked.
    """
    if not class_ids:
        return StartOutcome(
            feedback_by_field={
                "class_ids": "Choose at least one class (create classes on the Classes page)."
            }
        )
    try:
        job = api.start_job(list(class_ids), duration_s)
    except ApiError as err:
        by_field = err.field_errors
        on_form = {key: msg for key, msg in by_field.items() if key in START_FIELDS}
        if on_form and len(on_form) == len(by_field):
            return StartOutcome(feedback_by_field=on_form)
        return StartOutcome(
            feedback_by_field=on_form, alert=error_alert(f"Could not start the job: {err.message}")
        )
    return StartOutcome(
        alert=success_alert(
            [
                f"Started job {job['id']} ({job['status']}). ",
                dcc.Link("Watch it live", href=live_href(job["id"]), className="alert-link"),
                ".",
            ]
        ),
        job=job,
    )


def stop_job(api: ApiClient, job_id: int) -> Component:
    """Ask the API to stop a job; returns the alert to show."""
    try:
        job = api.stop_job(job_id)
    except ApiError as err:
        return error_alert(f"Could not stop job {job_id}: {err.message}")
    return success_alert(f"Stopping job {job_id} (now {job['status']}).")


def load_jobs_table(api: ApiClient) -> tuple[Component, Component | None]:
    """``(table, alert)``: the jobs table, newest first, or a placeholder and an alert."""
    try:
        jobs = api.list_jobs()
    except ApiError as err:
        return html.P("Jobs could not be loaded.", className="text-muted"), error_alert(err.message)
    return render_jobs_table(jobs), None


def render_jobs_table(jobs: Sequence[Job]) -> Component:
    if not jobs:
        return html.P("No jobs yet. Start one above.", className="text-muted")
    header = html.Thead(
        html.Tr(
            [
                html.Th(text)
                for text in (
                    "ID",
                    "Status",
                    "Classes",
                    "Spark master",
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
        rows.append(_job_row(job))
        if job["status"] == "failed" and job["failure_reason"]:
            rows.append(
                html.Tr(
                    html.Td(
                        f"Job {job['id']} failed: {job['failure_reason']}",
                        colSpan=8,
                        className="text-danger small border-top-0 pt-0",
                    ),
                    id=f"job-failure-{job['id']}",
                )
            )
    table: Component = dbc.Table(
        [header, html.Tbody(rows)], hover=True, size="sm", id="jobs-table-grid"
    )
    return table


def _job_row(job: Job) -> Component:
    classes = ", ".join(cls["name"] for cls in job["classes"]) or "—"
    actions: list[Component] = [
        dcc.Link("Live", href=live_href(job["id"]), className="btn btn-sm btn-outline-primary me-2")
    ]
    if job["status"] in ACTIVE_JOB_STATUSES:
        actions.append(
            dbc.Button(
                "Stop",
                id={"type": STOP_BUTTON_TYPE, "index": job["id"]},
                color="outline-danger",
                size="sm",
            )
        )
    return html.Tr(
        [
            html.Td(str(job["id"])),
            html.Td(status_badge(job["status"])),
            html.Td(classes),
            html.Td(job["spark_master"]),
            html.Td(format_timestamp(job["created_at"])),
            html.Td(format_timestamp(job["started_at"])),
            html.Td(format_timestamp(job["stopped_at"])),
            html.Td(actions),
        ],
        id=f"job-row-{job['id']}",
    )

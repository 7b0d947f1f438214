"""Live page: per-class response time against the delay target, refreshed every second.

Each refresh asks for the job (status and the class targets frozen at launch) and its
metrics. Only the last ``window_s`` seconds are shown: after the first refresh the
cursor remembers the newest sample time ``latest_t`` and the next request asks for
``since = latest_t - window_s``, so the API sends one window, not the whole history.
Times are the job's own epoch seconds, so the dashboard's clock is never compared with
the job's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import dash_bootstrap_components as dbc
import httpx
import plotly.graph_objects as go
from dash import html
from dash.development.base_component import Component

from frontend.api import (
    ACTIVE_JOB_STATUSES,
    TERMINAL_JOB_STATUSES,
    ApiClient,
    ApiError,
    Job,
    MetricSample,
)
from frontend.components import error_alert, format_number, format_timestamp, status_badge
from frontend.figures import response_time_figure, throughput_figure

LIVE_WINDOW_S = 300.0


class LiveCursor(TypedDict):
    """What the page remembers between refreshes (kept in a ``dcc.Store``)."""

    job_id: int
    latest_t: float | None


@dataclass(frozen=True)
class LiveView:
    """One refresh. A figure of ``None`` means "keep the one on screen" (API error);
    ``polling`` is False once nothing more can arrive (job ended and drained, or gone).
    """

    response_time: go.Figure | None
    throughput: go.Figure | None
    summary: Component
    cursor: LiveCursor | None
    polling: bool


def parse_job_id(value: Any) -> int | None:
    """A job id from the URL query (``?job_id=3``) or a dropdown; junk gives ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def load_job_choices(api: ApiClient) -> tuple[list[Job], Component | None]:
    """``(jobs, alert)``; ``jobs`` is empty when the API could not be reached."""
    try:
        return api.list_jobs(), None
    except ApiError as err:
        return [], error_alert(err.message)


def job_options(jobs: Sequence[Job]) -> list[dict[str, Any]]:
    """Dropdown options, newest job first."""
    return [
        {
            "label": f"Job {job['id']} · {job['status']} · "
            + (", ".join(cls["name"] for cls in job["classes"]) or "no classes"),
            "value": job["id"],
        }
        for job in sorted(jobs, key=lambda j: j["id"], reverse=True)
    ]


def pick_job(jobs: Sequence[Job], requested: int | None, current: int | None) -> int | None:
    """Which job to show: the one on screen, else the one in the URL, else the newest
    active job, else the newest job; ``None`` when there are no jobs."""
    ids = {job["id"] for job in jobs}
    for candidate in (current, requested):
        if candidate is not None and candidate in ids:
            return candidate
    newest_first = sorted(jobs, key=lambda j: j["id"], reverse=True)
    for job in newest_first:
        if job["status"] in ACTIVE_JOB_STATUSES:
            return job["id"]
    return newest_first[0]["id"] if newest_first else None


def metrics_since(cursor: LiveCursor | None, job_id: int, window_s: float) -> float | None:
    """The ``since`` to request: one window before the newest sample seen, or everything."""
    if cursor is None or cursor["job_id"] != job_id or cursor["latest_t"] is None:
        return None
    return cursor["latest_t"] - window_s


def recent(samples: Sequence[MetricSample], window_s: float) -> list[MetricSample]:
    """The samples within ``window_s`` of the newest one."""
    if not samples:
        return []
    cut_t = max(s["t"] for s in samples) - window_s
    return [s for s in samples if s["t"] >= cut_t]


def refresh_live(
    api: ApiClient,
    job_id: int | None,
    cursor: LiveCursor | None,
    window_s: float = LIVE_WINDOW_S,
) -> LiveView:
    if job_id is None:
        return LiveView(
            response_time=response_time_figure([], {}),
            throughput=throughput_figure([]),
            summary=html.P("No job chosen. Start one on the Jobs page.", className="text-muted"),
            cursor=None,
            polling=False,
        )
    try:
        job = api.get_job(job_id)
        metrics = api.job_metrics(job_id, since=metrics_since(cursor, job_id, window_s))
    except ApiError as err:
        gone = err.status_code == httpx.codes.NOT_FOUND
        return LiveView(None, None, error_alert(err.message), cursor, polling=not gone)

    samples = recent(metrics["samples"], window_s)
    previous_t = cursor["latest_t"] if cursor is not None and cursor["job_id"] == job_id else None
    latest_t = max((s["t"] for s in samples), default=previous_t)
    drained = job["status"] in TERMINAL_JOB_STATUSES and latest_t == previous_t
    targets = {cls["name"]: cls["delay_target_s"] for cls in job["classes"]}
    return LiveView(
        response_time=response_time_figure(samples, targets, uirevision=job_id),
        throughput=throughput_figure(samples, list(targets), uirevision=job_id),
        summary=render_summary(job, samples),
        cursor={"job_id": job_id, "latest_t": latest_t},
        polling=not drained,
    )


def render_summary(job: Job, samples: Sequence[MetricSample]) -> Component:
    """Status line plus, per class, the newest response times against the target."""
    latest: dict[str, MetricSample] = {}
    for sample in samples:
        if sample["class_name"] not in latest or sample["t"] >= latest[sample["class_name"]]["t"]:
            latest[sample["class_name"]] = sample
    facts = [f"on {job['spark_master']}"]
    if job["started_at"]:
        facts.append(f"started {format_timestamp(job['started_at'])} UTC")
    if job["stopped_at"]:
        facts.append(f"stopped {format_timestamp(job['stopped_at'])} UTC")
    header = html.Div(
        [
            html.Span(f"Job {job['id']} ", className="fw-bold me-1"),
            status_badge(job["status"]),
            html.Span(" · ".join(facts), className="text-muted ms-1"),
        ],
        className="mb-2",
    )
    parts: list[Component] = [header]
    if job["status"] == "failed":
        parts.append(
            dbc.Alert(f"Failed: {job['failure_reason'] or 'no reason given'}", color="danger")
        )
    rows = []
    for cls in job["classes"]:
        newest = latest.get(cls["name"])
        mean_s = newest["response_time_mean_s"] if newest else None
        max_s = newest["response_time_max_s"] if newest else None
        within = None if mean_s is None else mean_s <= cls["delay_target_s"]
        rows.append(
            html.Tr(
                [
                    html.Td(cls["name"]),
                    html.Td(format_number(cls["priority"])),
                    html.Td(format_number(cls["delay_target_s"])),
                    html.Td(_seconds(mean_s)),
                    html.Td(_seconds(max_s)),
                    html.Td(
                        "—"
                        if within is None
                        else dbc.Badge(
                            "within target" if within else "over target",
                            color="success" if within else "danger",
                        )
                    ),
                ]
            )
        )
    parts.append(
        dbc.Table(
            [
                html.Thead(
                    html.Tr(
                        [
                            html.Th(text)
                            for text in (
                                "Class",
                                "Priority",
                                "Target (s)",
                                "Latest mean (s)",
                                "Latest max (s)",
                                "",
                            )
                        ]
                    )
                ),
                html.Tbody(rows),
            ],
            size="sm",
            class_name="w-auto",
        )
    )
    return html.Div(parts)


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"

"""Live page: a job's per-class QoS charts, refreshed four times a second.

The first refresh of a job asks the API for the newest window (``last_s``) and draws
every chart whole; later refreshes ask only for what is new (``since`` a little before
the newest sample seen, as samples of one period may arrive in separate batches) and
send the browser just the new points (``extendData``). A sample is new when its ``seq``
is above the last one seen for its class, so a point is never drawn twice.

A chart is drawn whole again when the new samples need a trace it does not have (a
class or a metric appears), when the classes' delay-target bands change (live tuning),
or when another job or window is chosen. What the page remembers between refreshes is
the small ``LiveCursor`` (kept in a ``dcc.Store``), never the samples themselves.

Times are the job's own epoch seconds, so the dashboard's clock is never compared with
the job's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

import dash_bootstrap_components as dbc
import httpx
from dash import html
from dash.development.base_component import Component

from frontend.actions.tuning import in_force
from frontend.api import (
    ACTIVE_JOB_STATUSES,
    TERMINAL_JOB_STATUSES,
    ApiClient,
    ApiError,
    Job,
    JobConfig,
    LiveConfig,
    Manager,
    MetricSample,
    MetricsQuery,
)
from frontend.components import error_alert, format_number, format_timestamp, status_badge
from frontend.figures import epoch_to_utc
from frontend.managers import delay_band
from frontend.sample_charts import (
    LIVE_CHARTS,
    STATE_COLORS,
    Band,
    ChartContext,
    TraceKey,
    dashboard_spec,
    extend_dashboard,
    new_trace_keys,
    plan_chart,
    shed_share,
)

Figure = dict[str, Any]  # a plain Plotly figure: {"data": [...], "layout": {...}}
LIVE_WINDOW_S = 120.0
WINDOW_CHOICES_S: tuple[float, ...] = (60.0, 120.0, 300.0, 600.0)
# Samples of one period may be posted in separate batches: look this far back.
LATE_MARGIN_S = 10.0
# How long a refresh waits on the API for a sample newer than those shown: a new sample
# is drawn as soon as it is stored, and an idle view still refreshes about once a second.
LIVE_WAIT_S = 0.7
# The job itself (status, classes) changes rarely: ask for it every few refreshes only.
JOB_REFRESH_TICKS = 4
STATE_BADGES: dict[str, str] = {
    "normal": "success",
    "UT": "primary",
    "OT": "danger",
    "overloaded": "warning",
    "infeasible": "dark",
}


class LiveCursor(TypedDict):
    """What the page remembers between refreshes (kept in a ``dcc.Store``).

    ``job`` is the job as last read (every ``JOB_REFRESH_TICKS`` refreshes), ``plans``
    the traces of each chart (see ``frontend.sample_charts``), ``context`` the classes and
    bands they were drawn with, ``last_seq`` the newest ``seq`` seen per class,
    ``latest`` the newest sample per class (for the summary), and ``shown`` the times
    ``t`` of the samples this refresh put on screen (the page records when).
    """

    job_id: int
    window_s: float
    period_s: float
    status: str
    job: Job
    job_age: int  # refreshes since the job was last asked for
    newest_t: float | None
    last_seq: dict[str, int]
    plans: dict[str, list[list[str]]]
    context: str
    latest: dict[str, MetricSample]
    shown: list[float]


@dataclass(frozen=True)
class LiveView:
    """One refresh.

    ``figure`` (every chart drawn whole, one row each) or ``extend`` (``extendData``
    with the new points) or neither (nothing new, or an API error: keep what is on
    screen). ``summary`` ``None`` keeps the one on screen; ``polling`` is False once
    nothing more can arrive (the job ended and its last samples are drawn, or it is gone).
    """

    figure: Figure | None
    extend: list[Any] | None
    summary: Component | None
    cursor: LiveCursor | None
    polling: bool
    alert: Component | None = None


def parse_job_id(value: Any) -> int | None:
    """A job id from the URL query (``?job_id=3``) or a dropdown; junk gives ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def parse_window(value: Any) -> float:
    """The chosen window in seconds (one of ``WINDOW_CHOICES_S``), else the default."""
    try:
        window_s = float(value)
    except (TypeError, ValueError):
        return LIVE_WINDOW_S
    return window_s if window_s in WINDOW_CHOICES_S else LIVE_WINDOW_S


def window_options() -> list[dict[str, Any]]:
    return [
        {"label": f"last {int(w // 60)} min" if w >= 60 else f"last {int(w)} s", "value": str(w)}
        for w in WINDOW_CHOICES_S
    ]


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


# -- what the charts are drawn with -----------------------------------------------------


def class_bands(job: Job, config: JobConfig | None, managers: Sequence[Manager]) -> dict[str, Band]:
    """Each class's delay-target band: from the configuration the job runs with when
    there is one (the target may have been tuned; a change not applied yet is not in
    force) and its manager's margins in ``managers``, else from the launch snapshot."""
    if config is not None and config.get("job_id") == job["id"]:
        return {
            name: delay_band(cls["delay_target_s"], cls["manager"], cls["manager_params"], managers)
            for name, cls in in_force(config)["classes"].items()
        }
    return {
        cls["name"]: delay_band(cls["delay_target_s"], None, {}, managers) for cls in job["classes"]
    }


def chart_context(job: Job, config: JobConfig | None, managers: Sequence[Manager]) -> ChartContext:
    same = config is not None and config.get("job_id") == job["id"]
    return ChartContext(
        classes=tuple(cls["name"] for cls in job["classes"]),
        bands=class_bands(job, config, managers),
        uirevision=job["id"],
        thresholds=dict(config["thresholds"]) if same and config is not None else {},
    )


def context_key(context: ChartContext) -> str:
    """Changes exactly when the charts must be drawn anew for their context."""
    return json.dumps(
        [list(context.classes), sorted(context.bands.items()), sorted(context.thresholds.items())]
    )


def new_samples(samples: Sequence[MetricSample], last_seq: Mapping[str, int]) -> list[MetricSample]:
    """The samples not seen yet: ``seq`` above the last one seen for their class."""
    return [s for s in samples if s["seq"] > last_seq.get(s["class_name"], -1)]


def advance(
    last_seq: Mapping[str, int],
    latest: Mapping[str, MetricSample],
    samples: Sequence[MetricSample],
) -> tuple[dict[str, int], dict[str, MetricSample]]:
    """The cursor's ``last_seq`` and ``latest`` after ``samples`` were drawn."""
    seqs = dict(last_seq)
    newest = dict(latest)
    for sample in samples:
        name = sample["class_name"]
        seqs[name] = max(seqs.get(name, -1), sample["seq"])
        if name not in newest or sample["t"] >= newest[name]["t"]:
            newest[name] = sample
    return seqs, newest


def _plans_json(plans: Mapping[str, list[TraceKey]]) -> dict[str, list[list[str]]]:
    return {chart_id: [list(key) for key in keys] for chart_id, keys in plans.items()}


def _plans_of(cursor: LiveCursor) -> dict[str, list[TraceKey]]:
    return {
        chart_id: [cast(TraceKey, tuple(key)) for key in keys]
        for chart_id, keys in cursor["plans"].items()
    }


# -- one refresh ----------------------------------------------------------------------------


def empty_figure() -> Figure:
    """Every chart without samples (for "no job" and before the first refresh)."""
    return dashboard_spec(LIVE_CHARTS, {}, [], ChartContext())


def refresh_live(
    api: ApiClient,
    job_id: int | None,
    cursor: LiveCursor | None,
    config: JobConfig | None = None,
    window_s: float = LIVE_WINDOW_S,
    *,
    managers: Sequence[Manager] = (),
) -> LiveView:
    """Everything one tick of the live page shows (see the module docstring); ``managers``
    (the API's) give the managers' default margins around each delay target (without
    them a band is the target's line)."""
    if job_id is None:
        return LiveView(
            figure=empty_figure(),
            extend=None,
            summary=html.P("No job chosen. Start one on the Jobs page.", className="text-muted"),
            cursor=None,
            polling=False,
        )
    cached = cursor.get("job") if cursor is not None and cursor["job_id"] == job_id else None
    job_age = cursor.get("job_age", 0) + 1 if cursor is not None else 0
    if cached is None or job_age >= JOB_REFRESH_TICKS:
        try:
            job = api.get_job(job_id)
        except ApiError as err:
            gone = err.status_code == httpx.codes.NOT_FOUND
            alert = error_alert(err.message)
            return LiveView(None, None, None, cursor, polling=not gone, alert=alert)
        job_age = 0
    else:
        job = cached
    context = chart_context(job, config, managers)
    key = context_key(context)
    same_job = cursor is not None and cursor["job_id"] == job_id
    if cursor is None or not same_job or cursor["window_s"] != window_s or cursor["context"] != key:
        return _redraw(api, job, cursor if same_job else None, context, window_s, config)
    try:
        if cursor["newest_t"] is None:
            fetched = api.job_metrics(job_id, query={"last_s": window_s})["samples"]
        else:
            since = cursor["newest_t"] - LATE_MARGIN_S
            news: MetricsQuery = {}
            if job["status"] not in TERMINAL_JOB_STATUSES:
                # The API answers as soon as a newer sample is stored (a long poll).
                news = {"newer_than": cursor["newest_t"], "wait_s": LIVE_WAIT_S}
            fetched = api.job_metrics(job_id, since=since, query=news)["samples"]
    except ApiError as err:
        return LiveView(None, None, None, cursor, polling=True, alert=error_alert(err.message))
    fresh = new_samples(fetched, cursor["last_seq"])
    ended = job["status"] in TERMINAL_JOB_STATUSES
    if not fresh:
        status_changed = job["status"] != cursor["status"]
        summary = render_summary(job, cursor["latest"], config) if status_changed else None
        return LiveView(
            None,
            None,
            summary,
            {**cursor, "status": job["status"], "job": job, "job_age": job_age, "shown": []},
            # An ended job had one more look after its status changed: stop polling.
            polling=not (ended and not status_changed),
        )
    plans = _plans_of(cursor)
    if any(new_trace_keys(chart, plans.get(chart.chart_id, []), fresh) for chart in LIVE_CHARTS):
        return _redraw(api, job, cursor, context, window_s, config)
    extend = extend_dashboard(
        LIVE_CHARTS,
        plans,
        fresh,
        window_s=window_s,
        period_s=cursor["period_s"],
        class_count=len(context.classes),
    )
    last_seq, latest = advance(cursor["last_seq"], cursor["latest"], fresh)
    newest_t = max([cursor["newest_t"] or 0.0, *(s["t"] for s in fresh)])
    return LiveView(
        figure=None,
        extend=extend,
        summary=render_summary(job, latest, config),
        cursor={
            **cursor,
            "status": job["status"],
            "job": job,
            "job_age": job_age,
            "newest_t": newest_t,
            "last_seq": last_seq,
            "latest": latest,
            "shown": sorted(s["t"] for s in fresh),
        },
        polling=True,
    )


def _redraw(
    api: ApiClient,
    job: Job,
    previous: LiveCursor | None,
    context: ChartContext,
    window_s: float,
    config: JobConfig | None,
) -> LiveView:
    """Fetch the newest window and draw every chart whole."""
    try:
        samples = api.job_metrics(job["id"], query={"last_s": window_s})["samples"]
    except ApiError as err:
        gone = err.status_code == httpx.codes.NOT_FOUND
        return LiveView(
            None, None, None, previous, polling=not gone, alert=error_alert(err.message)
        )
    plans = {chart.chart_id: plan_chart(chart, samples, context.classes) for chart in LIVE_CHARTS}
    seen = previous["last_seq"] if previous is not None else {}
    last_seq, latest = advance({}, {}, samples)
    newest_t = max((s["t"] for s in samples), default=None)
    ended = job["status"] in TERMINAL_JOB_STATUSES
    return LiveView(
        figure=dashboard_spec(LIVE_CHARTS, plans, samples, context),
        extend=None,
        summary=render_summary(job, latest, config),
        cursor={
            "job_id": job["id"],
            "window_s": window_s,
            "period_s": job["control_period_s"],
            "status": job["status"],
            "job": job,
            "job_age": 0,
            "newest_t": newest_t,
            "last_seq": last_seq,
            "plans": _plans_json(plans),
            "context": context_key(context),
            "latest": latest,
            "shown": sorted(s["t"] for s in new_samples(samples, seen)),
        },
        # An ended job is drawn once more and then left alone.
        polling=not (ended and previous is not None and previous["status"] == job["status"]),
    )


# -- the summary ----------------------------------------------------------------------------


def render_summary(
    job: Job, latest: Mapping[str, MetricSample], config: JobConfig | None = None
) -> Component:
    """Status line, then per class the newest sample's QoS against the class's target."""
    live = in_force(config) if config is not None and config.get("job_id") == job["id"] else None
    parts: list[Component] = [_status_line(job, latest, live)]
    if job["status"] == "failed":
        parts.append(
            dbc.Alert(f"Failed: {job['failure_reason'] or 'no reason given'}", color="danger")
        )
    parts.append(_class_table(job, latest, live))
    return html.Div(parts)


def _status_line(
    job: Job, latest: Mapping[str, MetricSample], live: LiveConfig | None
) -> Component:
    """The job's id, status and policy badges, and when it started, stopped and last
    reported."""
    facts = [f"on {job['spark_master']}"]
    if job["started_at"]:
        facts.append(f"started {format_timestamp(job['started_at'])} UTC")
    if job["stopped_at"]:
        facts.append(f"stopped {format_timestamp(job['stopped_at'])} UTC")
    newest = max((s["t"] for s in latest.values()), default=None)
    if newest is not None:
        facts.append(f"newest sample {epoch_to_utc(newest):%H:%M:%S} UTC")
    badges: list[Component] = [status_badge(job["status"])]
    if live is not None:
        badges.append(
            dbc.Badge(
                f"policy {live['policy']}", color="light", text_color="dark", class_name="ms-1"
            )
        )
        if live["recommend_only"]:
            badges.append(
                dbc.Badge("recommend only: sheds nothing", color="info", class_name="ms-1")
            )
    return html.Div(
        [
            html.Span(f"Job {job['id']} ", className="fw-bold me-1"),
            *badges,
            html.Span(" · ".join(facts), className="text-muted ms-2"),
        ],
        className="mb-2",
        id="live-status",
    )


SUMMARY_HEADS = (
    "Class",
    "Priority",
    "Target (s)",
    "Floor (s)",
    "Mean (s)",
    "p95 (s)",
    "",
    "Manager state",
    "Shed",
    "Usage u",
    "Headroom (s/s)",
    "Input (rows/s)",
)


def _class_table(
    job: Job, latest: Mapping[str, MetricSample], live: LiveConfig | None
) -> Component:
    """Per class, its settings in force and its newest sample's QoS."""
    rows = []
    for cls in job["classes"]:
        name = cls["name"]
        tuned = live["classes"].get(name) if live is not None else None
        target_s = tuned["delay_target_s"] if tuned else cls["delay_target_s"]
        priority = tuned["priority"] if tuned else cls["priority"]
        sample = latest.get(name)
        rows.append(
            html.Tr(
                [
                    html.Td(name, className="fw-semibold"),
                    html.Td(format_number(priority)),
                    html.Td(format_number(target_s)),
                    html.Td(_seconds(sample.get("floor_s") if sample else None)),
                    html.Td(_seconds(sample.get("response_time_mean_s") if sample else None)),
                    html.Td(_seconds(sample.get("response_time_p95_s") if sample else None)),
                    html.Td(_target_badge(sample, target_s)),
                    html.Td(_state_badge(sample)),
                    html.Td(_fraction(shed_share(sample) if sample else None)),
                    html.Td(_ratio(sample.get("capacity_usage") if sample else None)),
                    html.Td(_ratio(sample.get("headroom") if sample else None)),
                    html.Td(_rate(sample["arrival_rate"] if sample else None)),
                ],
                id=f"live-row-{name}",
            )
        )
    table: Component = dbc.Table(
        [html.Thead(html.Tr([html.Th(text) for text in SUMMARY_HEADS])), html.Tbody(rows)],
        size="sm",
        class_name="w-auto mb-0",
        id="live-summary-table",
    )
    return table


def _target_badge(sample: MetricSample | None, target_s: float) -> Component | str:
    """Whether the newest period met the class's target; a warm-up period is neither
    (its tuples waited through the job's first Spark batch, which pays for Spark's start)."""
    if sample is None:
        return "—"
    if sample.get("warmup"):
        warmup: Component = dbc.Badge(
            "warm-up",
            color="secondary",
            title="Its tuples waited through the job's first batch (Spark's start): "
            "not judged against the target.",
        )
        return warmup
    worst = sample.get("response_time_p95_s")
    if worst is None:
        worst = sample["response_time_mean_s"]
    if worst is None:
        return "—"
    within = worst <= target_s
    badge: Component = dbc.Badge(
        "within target" if within else "over target", color="success" if within else "danger"
    )
    return badge


def _state_badge(sample: MetricSample | None) -> Component | str:
    state = sample.get("manager_state") if sample else None
    if not state:
        return "—"
    manager = sample.get("manager") if sample else None
    badge: Component = dbc.Badge(
        f"{state}" + (f" · {manager}" if manager else ""),
        color=STATE_BADGES.get(state, "secondary"),
        title=", ".join(STATE_COLORS),
    )
    return badge


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"

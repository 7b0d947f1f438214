"""History page: one run's per-class QoS and QoD over a chosen time range, two runs side
by side, and the samples as CSV.

The time range is chosen in seconds since a run's first sample, so the same range can
be laid over two runs that started at different times. Figures come from the API's
summaries (``GET /jobs/{id}/summary``, or ``/runs/compare`` for two whole runs) and,
for the response-time percentiles over time, from the samples downsampled on the server.

The CSV is fetched by the dashboard server with the signed-in user's token and handed
to the browser as a download: the browser never holds the token.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dash_bootstrap_components as dbc
import plotly.graph_objects as go
from dash import dcc, html
from dash.development.base_component import Component

from frontend.api import (
    ApiClient,
    ApiError,
    ClassSummary,
    CsvExport,
    Job,
    MetricsQuery,
    RunSummary,
    error_text,
)
from frontend.components import error_alert, format_number, format_timestamp, status_badge
from frontend.figures import epoch_to_utc
from frontend.history_figures import compare_figure, qod_figure, qos_figure
from frontend.managers import delay_band
from frontend.sample_charts import HISTORY_RESPONSE_TIME, ChartContext, build_chart, plan_chart

Span = tuple[float, float]  # first and last sample time of a run, epoch seconds
SERIES_POINTS = 300  # about this many points per class in the percentile chart
SERIES_LIMIT = 100_000  # the API's largest answer (buckets, after downsampling)
SINCE_SLACK_S = 1e-6  # ``since`` is exclusive: start just before the first sample


@dataclass(frozen=True)
class RunView:
    """What the page shows for one run (``None`` parts could not be loaded)."""

    summary: RunSummary | None
    series: list[Any] | None = None
    alert: Component | None = None


def run_options(jobs: Sequence[Job]) -> list[dict[str, Any]]:
    """Dropdown options, newest run first."""
    return [
        {
            "label": f"Job {job['id']} · {job['status']} · "
            + (", ".join(c["name"] for c in job["classes"]) or "no classes")
            + f" · {format_timestamp(job['created_at'])}",
            "value": job["id"],
        }
        for job in sorted(jobs, key=lambda j: j["id"], reverse=True)
    ]


def pick_run(jobs: Sequence[Job], requested: int | None) -> int | None:
    """The run in the URL if it exists, else the newest run."""
    ids = [job["id"] for job in jobs]
    if requested in ids:
        return requested
    return max(ids) if ids else None


def run_span(api: ApiClient, job_id: int | None) -> tuple[Span | None, Component | None]:
    """``(span, alert)``: the times of the run's first and last sample (``None``
    without samples), or why they could not be read."""
    if job_id is None:
        return None, None
    try:
        oldest = api.job_metrics(job_id, query={"limit": 1})["samples"]
        if not oldest:
            return None, None
        newest = api.job_metrics(job_id, query={"last_s": SINCE_SLACK_S})["samples"]
    except ApiError as err:
        return None, error_alert(f"Could not read job {job_id}: {error_text(err)}")
    last_t = max((s["t"] for s in newest), default=oldest[0]["t"])
    return (oldest[0]["t"], last_t), None


def slider_settings(span: Span | None) -> dict[str, Any]:
    """``min``, ``max``, ``value`` and ``marks`` of the time-range slider (seconds
    since the first sample): the whole run, marked at a few round offsets."""
    length_s = math.ceil(span[1] - span[0]) if span else 0
    length_s = max(length_s, 1)
    step = _round_step(length_s / 6)
    marks = {offset: _duration(offset) for offset in range(0, length_s + 1, step)}
    last_round = max(marks)
    if 0 < length_s - last_round < step / 2 and last_round > 0:
        del marks[last_round]  # too close to the end mark: their labels would overlap
    marks[length_s] = _duration(length_s)
    return {"min": 0, "max": length_s, "value": [0, length_s], "marks": marks}


def time_range(
    span: Span | None, offsets: Sequence[float] | None
) -> tuple[float | None, float | None]:
    """``(since, until)`` epoch seconds for slider ``offsets`` over a run's ``span``;
    ``(None, None)`` for the whole run."""
    if span is None or not offsets or len(offsets) != 2:
        return None, None
    start_s, end_s = float(offsets[0]), float(offsets[1])
    whole = start_s <= 0 and end_s >= math.ceil(span[1] - span[0])
    if whole:
        return None, None
    return span[0] + start_s - SINCE_SLACK_S, span[0] + end_s


def describe_range(span: Span | None, offsets: Sequence[float] | None) -> str:
    if span is None:
        return "This run has no samples yet."
    since, until = time_range(span, offsets)
    start = epoch_to_utc(span[0] if since is None else since + SINCE_SLACK_S)
    end = epoch_to_utc(span[1] if until is None else until)
    what = "the whole run" if since is None else f"{_duration(int((end - start).total_seconds()))}"
    return f"{start:%Y-%m-%d %H:%M:%S} – {end:%H:%M:%S} UTC ({what})"


def load_run(
    api: ApiClient, job_id: int, span: Span | None, offsets: Sequence[float] | None
) -> RunView:
    """The run's summary and its downsampled samples over the chosen range."""
    since, until = time_range(span, offsets)
    try:
        summary = api.run_summary(job_id, since, until)
        series = api.job_metrics(job_id, since=since, query=_series_query(span, since, until))
    except ApiError as err:
        return RunView(None, alert=error_alert(f"Could not load job {job_id}: {error_text(err)}"))
    return RunView(summary, series["samples"])


def load_comparison(
    api: ApiClient,
    a: int,
    b: int,
    spans: tuple[Span | None, Span | None],
    offsets: Sequence[float] | None,
) -> tuple[RunView, RunView]:
    """Both runs over the same offsets since their own first sample; whole runs come from
    ``/runs/compare`` in one request."""
    if time_range(spans[0], offsets) == (None, None):
        try:
            both = api.compare_runs(a, b)
            series_a = api.job_metrics(a, query=_series_query(spans[0], None, None))
            series_b = api.job_metrics(b, query=_series_query(spans[1], None, None))
        except ApiError as err:
            alert = error_alert(f"Could not compare jobs {a} and {b}: {error_text(err)}")
            return RunView(None, alert=alert), RunView(None)
        return RunView(both["a"], series_a["samples"]), RunView(both["b"], series_b["samples"])
    return load_run(api, a, spans[0], offsets), load_run(api, b, spans[1], offsets)


def _series_query(span: Span | None, since: float | None, until: float | None) -> MetricsQuery:
    query: MetricsQuery = {"limit": SERIES_LIMIT}
    if until is not None:
        query["until"] = until
    if span is not None:
        start = since if since is not None else span[0]
        end = until if until is not None else span[1]
        step_s = (end - start) / SERIES_POINTS
        if step_s > 1.0:
            query["step_s"] = math.ceil(step_s)
    return query


def export_csv(
    api: ApiClient, job_id: int, span: Span | None, offsets: Sequence[float] | None
) -> tuple[dict[str, Any] | None, Component | None]:
    """``(download, alert)``: every sample of the run in the chosen range as CSV, for
    ``dcc.Download`` (no limit: the API streams them all); or ``None`` and why not."""
    since, until = time_range(span, offsets)
    query: MetricsQuery = {}
    if since is not None:
        query["since"] = since
    if until is not None:
        query["until"] = until
    try:
        export: CsvExport = api.export_metrics(job_id, query)
    except ApiError as err:
        return None, error_alert(f"Could not export job {job_id}: {error_text(err)}")
    # What dcc.send_string would build: the browser saves ``content`` as ``filename``.
    download = {
        "content": export["content"],
        "filename": export["filename"],
        "type": "text/csv",
        "base64": False,
    }
    return download, None


# -- rendering -------------------------------------------------------------------------------


def render_run(view: RunView, *, column: str, compact: bool = False) -> list[Component]:
    """One run's column: header, QoS table, QoD table and its figures."""
    if view.summary is None:
        return [view.alert] if view.alert is not None else []
    summary = view.summary
    job = summary["job"]
    classes = summary["classes"]
    parts: list[Component] = [
        html.Div(
            [
                html.Span(f"Job {job['id']} ", className="fw-bold me-1"),
                status_badge(job["status"]),
                html.Span(
                    f" {', '.join(c['name'] for c in job['classes'])} · started "
                    f"{format_timestamp(job['started_at'])} UTC",
                    className="text-muted ms-1",
                ),
            ],
            className="mb-2",
            id=f"history-{column}-header",
        ),
        html.H6("Quality of service (response time vs delay target)"),
        qos_table(classes, f"history-{column}-qos"),
        html.H6("Quality of data (what shedding cost)", className="mt-2"),
        qod_table(classes, f"history-{column}-qod"),
    ]
    figures: list[tuple[str, go.Figure]] = [
        ("series", series_figure(job, view.series or [])),
        ("qos", qos_figure(classes)),
        ("qod", qod_figure(classes)),
    ]
    width = 12 if compact else 6
    parts.append(
        dbc.Row(
            [
                dbc.Col(
                    dcc.Graph(
                        id=f"history-{column}-{name}", figure=fig, config={"displaylogo": False}
                    ),
                    lg=12 if name == "series" else width,
                )
                for name, fig in figures
            ],
            class_name="g-2 mt-2",
        )
    )
    return parts


def series_figure(job: Job, samples: Sequence[Any]) -> go.Figure:
    """Response-time percentiles over time against each class's delay target."""
    context = ChartContext(
        classes=tuple(c["name"] for c in job["classes"]),
        bands={c["name"]: delay_band(c["delay_target_s"], None, {}, ()) for c in job["classes"]},
        uirevision=job["id"],
    )
    plan = plan_chart(HISTORY_RESPONSE_TIME, samples, context.classes)
    return build_chart(HISTORY_RESPONSE_TIME, plan, samples, context)


def render_comparison(a: RunView, b: RunView) -> Component | None:
    if a.summary is None or b.summary is None:
        return None
    graph: Component = dcc.Graph(
        id="history-compare-figure",
        figure=compare_figure(
            a.summary["classes"],
            b.summary["classes"],
            f"job {a.summary['job']['id']}",
            f"job {b.summary['job']['id']}",
        ),
        config={"displaylogo": False},
    )
    return graph


QOS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("delay_target_s", "Target (s)", "s"),
    ("periods", "Periods", "n"),
    ("warmup_periods", "Warm-up periods", "n"),
    ("mean_response_time_s", "Mean (s)", "s"),
    ("p95_response_time_s", "p95 (s)", "s"),
    ("max_response_time_s", "Max (s)", "s"),
    ("mean_violation_s", "Mean violation (s)", "s"),
    ("max_violation_s", "Max violation (s)", "s"),
    ("late_period_fraction", "Late periods", "%"),
)
QOD_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("arrived", "Arrived", "n"),
    ("output", "Output", "n"),
    ("shed", "Shed", "n"),
    ("loss_fraction", "Loss", "%"),
    ("shed_fraction_mean", "Manager's mean shed fraction", "%"),
    ("oracle_loss_fraction", "Oracle loss", "%"),
    ("oracle_gap", "Oracle gap (× oracle)", "x"),
)


def qos_table(classes: Sequence[ClassSummary], table_id: str) -> Component:
    return _table(classes, QOS_COLUMNS, table_id)


def qod_table(classes: Sequence[ClassSummary], table_id: str) -> Component:
    return _table(classes, QOD_COLUMNS, table_id)


def _table(
    classes: Sequence[ClassSummary], columns: Sequence[tuple[str, str, str]], table_id: str
) -> Component:
    header = html.Thead(html.Tr([html.Th("Class"), *(html.Th(label) for _, label, _ in columns)]))
    rows = [
        html.Tr(
            [
                html.Td(cls["class_name"], className="fw-semibold"),
                *(html.Td(_cell(cls.get(key), kind)) for key, _, kind in columns),
            ],
            id=f"{table_id}-{cls['class_name']}",
        )
        for cls in classes
    ]
    if not rows:
        rows = [html.Tr(html.Td("No classes in this range.", colSpan=len(columns) + 1))]
    table: Component = dbc.Table(
        [header, html.Tbody(rows)], size="sm", hover=True, class_name="small mb-1", id=table_id
    )
    return table


def _cell(value: object, kind: str) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    if kind == "%":
        return f"{value:.1%}"
    if kind == "s":
        return f"{value:.3f}"
    if kind == "x":
        return f"{value:.2f}"
    return format_number(value) if isinstance(value, float) else f"{value:,}"


def _round_step(raw_s: float) -> int:
    for step in (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200):
        if raw_s <= step:
            return step
    return 86400


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min" + (f" {seconds % 60} s" if seconds % 60 else "")
    return f"{seconds // 3600} h" + (f" {seconds % 3600 // 60} min" if seconds % 3600 // 60 else "")

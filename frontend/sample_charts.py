"""Charts of metric samples, built whole or extended: every chart of the live page and
the history page's response-time percentiles; pure functions of the samples.

Each chart is a ``Chart``: a list of per-class ``Series`` (a value read from a sample)
and what to draw around them (delay-target bands, a reference line, a manager-state
timeline). ``plan_chart`` decides from the data which traces a chart has: a series that
is ``None`` in every sample of a class (the job does not report it) gets no trace, and
a chart with nothing to draw says so instead of showing empty axes. The plan is a list
of ``TraceKey``\\ s, one per trace, in trace order.

``build_chart`` draws a chart whole for a plan; ``extend_chart`` gives the points that
new samples add to each trace of the same plan, as ``dcc.Graph.extendData``. Drawing A
then extending by B gives the same traces as drawing A + B (tested), so after the first
window the browser only receives the new points. ``new_trace_keys`` tells when new
samples need a trace the plan does not have (a class appears, a job starts reporting a
field): then the chart is drawn whole again.

Capacity-redistribution events (samples with ``redistributed: true``) are vertical
dotted lines on every chart, drawn as a trace on a hidden [0, 1] axis so they extend
like any other trace. Warm-up periods (samples with ``warmup: true``: their tuples waited
through the job's first Spark batch) are shaded grey bands, drawn the same way, on the
charts with delay-target bands: their long response times measure Spark's start, and
the band says so instead of letting them read as lateness. Times are the job's epoch
seconds shown as UTC; no clock is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import plotly.graph_objects as go

from frontend.api import MetricSample
from frontend.figures import class_colors, class_order, epoch_to_iso

TraceKey = tuple[str, str, str]
"""``("series", class, series key)``, ``("state", "", state)``, ``("redistribution",
"", "")`` or ``("warmup", "", "")``."""

REDISTRIBUTION_KEY: TraceKey = ("redistribution", "", "")
REDISTRIBUTION_COLOR = "#6c757d"
WARMUP_KEY: TraceKey = ("warmup", "", "")
WARMUP_FILL = "rgba(108, 117, 125, 0.18)"
WARMUP_LABEL = "warm-up (Spark's start, not lateness)"
OVERLAY_KINDS = frozenset({REDISTRIBUTION_KEY[0], WARMUP_KEY[0]})
"""Trace kinds drawn on a chart's hidden [0, 1] axis, over the plot's whole height."""
STATE_COLORS: dict[str, str] = {
    "normal": "#2ca02c",
    "UT": "#1f77b4",
    "OT": "#d62728",
    "overloaded": "#ff7f0e",
    "infeasible": "#9467bd",
}
STATE_LABELS: dict[str, str] = {
    "normal": "normal",
    "UT": "UT (under target)",
    "OT": "OT (over target)",
    "overloaded": "overloaded",
    "infeasible": "infeasible (target below floor)",
}
OTHER_STATE_COLOR = "#7f7f7f"
NO_SAMPLES = "No samples yet"
CHART_HEIGHT = 300
_AXIS = {
    "gridcolor": "#EBF0F8",
    "linecolor": "#EBF0F8",
    "zerolinecolor": "#EBF0F8",
    "zerolinewidth": 2,
    "ticks": "",
    "automargin": True,
}
# The part of Plotly's "plotly_white" template these charts use: the whole template
# (7 kB, resolved only by the Python library) would be sent with every chart.
LAYOUT_TEMPLATE: dict[str, Any] = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2a3f5f"},
        "hovermode": "closest",
        "xaxis": _AXIS,
        "yaxis": _AXIS,
    }
}
Band = tuple[float, float, float]  # low, target, high (seconds)


@dataclass(frozen=True)
class Series:
    """One line per class: ``value`` of each sample (``None`` leaves a gap)."""

    key: str
    label: str
    value: Callable[[MetricSample], float | None]
    dash: str = "solid"
    width: float = 2.0
    hover_format: str = ".3f"
    unit: str = ""
    fallback_for: str | None = None  # drawn only for classes without data of that series


@dataclass(frozen=True)
class Chart:
    chart_id: str
    title: str
    y_title: str
    series: tuple[Series, ...] = ()
    missing: str = "Not reported by this job"
    y_max: float | None = None  # a fixed upper end of the y axis (fractions: 1.05)
    reference_y: float | None = None
    reference_label: str = ""
    bands: bool = False  # draw each class's delay-target band
    states: bool = False  # a manager-state timeline, one row per class
    job_level: bool = False  # one line for the job (its fields repeat on every class)
    thresholds: bool = False  # draw the job's usage thresholds τ0..τ3


@dataclass(frozen=True)
class ChartContext:
    """What a chart needs besides samples: the job's classes in display order (their
    colours and the timeline's rows), each class's delay-target band, the Plotly
    ``uirevision`` that keeps zoom and legend choices across refreshes, and the job's
    usage thresholds (``tau0``..``tau3``)."""

    classes: tuple[str, ...] = ()
    bands: Mapping[str, Band] = field(default_factory=dict)
    uirevision: Hashable | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)


def output_rate(sample: MetricSample) -> float | None:
    """Rows per second that left the query in the sample's period."""
    period_s = sample["period_s"]
    return sample["output_count"] / period_s if period_s > 0 else None


def shed_share(sample: MetricSample) -> float | None:
    """The share of the period's arrivals that was dropped, whatever dropped it: the
    manager's shed fraction, or the queue rule that drops the oldest tuples a class cannot
    answer in time (under DILoS a low class's loss can be all the latter while its
    manager's fraction reads 0). Draining a backlog can drop more than arrived: at most
    1."""
    shed, arrived = sample.get("shed_count"), sample["arrived_count"]
    if shed is None or arrived <= 0:
        return None
    return min(shed / arrived, 1.0)


def _field(name: str) -> Callable[[MetricSample], float | None]:
    def read(sample: MetricSample) -> float | None:
        value = cast(Mapping[str, Any], sample).get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None

    return read


RESPONSE_TIME = Chart(
    "response_time",
    "Response time vs delay target",
    "response time (s)",
    (
        Series("mean", "mean", _field("response_time_mean_s"), unit=" s"),
        Series("p95", "p95", _field("response_time_p95_s"), dash="dash", unit=" s"),
        Series(
            "max",
            "max",
            _field("response_time_max_s"),
            dash="dot",
            width=1.5,
            unit=" s",
            fallback_for="p95",
        ),
    ),
    bands=True,
)
RATES = Chart(
    "rates",
    "Input rate and output rate",
    "rows/s",
    (
        Series("arrivals", "input", _field("arrival_rate"), hover_format=".1f", unit=" rows/s"),
        Series("output", "output", output_rate, dash="dot", hover_format=".1f", unit=" rows/s"),
    ),
)
LOAD = Chart(
    "load",
    "Load L vs headroom L_C",
    "s of work per s",
    (
        Series("load", "load L", _field("load"), unit=" s/s"),
        Series("headroom", "headroom L_C", _field("headroom"), dash="dash", unit=" s/s"),
    ),
    missing="This job reports no load or headroom",
)
USAGE = Chart(
    "usage",
    "Capacity usage u = L / L_C",
    "u",
    (Series("usage", "u", _field("capacity_usage")),),
    missing="This job reports no capacity usage",
    reference_y=1.0,
    reference_label="u = 1: at capacity",
)
SHARE = Chart(
    "share",
    "Capacity share",
    "share of the processor",
    (Series("share", "share", _field("capacity_share")),),
    missing="This job reports no capacity share",
    y_max=1.05,
)
SHED = Chart(
    "shed",
    "Share of arrivals shed (dashed: the manager's fraction; dotted: the oracle's)",
    "fraction of input shed",
    (
        Series("shed", "shed", shed_share),
        Series("decided", "manager", _field("shed_fraction"), dash="dash", width=1.5),
        Series("oracle", "oracle", _field("oracle_shed_fraction"), dash="dot", width=1.5),
    ),
    missing="This job reports no shedding",
    y_max=1.05,
)
STATE = Chart(
    "state",
    "Manager state",
    "class",
    missing="This job reports no manager state",
    states=True,
)
HISTORY_RESPONSE_TIME = Chart(
    "history_response_time",
    "Response-time percentiles vs delay target",
    "response time (s)",
    (
        Series("p50", "p50", _field("response_time_p50_s"), dash="dot", width=1.5, unit=" s"),
        Series(
            "mean",
            "mean",
            _field("response_time_mean_s"),
            dash="dot",
            width=1.5,
            unit=" s",
            fallback_for="p50",
        ),
        Series("p95", "p95", _field("response_time_p95_s"), unit=" s"),
        Series("p99", "p99", _field("response_time_p99_s"), dash="dash", unit=" s"),
        Series(
            "max",
            "max",
            _field("response_time_max_s"),
            dash="dash",
            unit=" s",
            fallback_for="p99",
        ),
    ),
    bands=True,
)
EXECUTORS = Chart(
    "executors",
    "Executors (dashed: the size the elastic policy asks)",
    "executors",
    (
        Series("executors", "executors serving", _field("executors"), hover_format=".0f"),
        Series(
            "asked",
            "executors asked",
            _field("executors_requested"),
            dash="dash",
            hover_format=".0f",
        ),
    ),
    missing="This job does not scale its executors (no control.elastic)",
    job_level=True,
)
JOB_USAGE = Chart(
    "job_usage",
    "The job's usage u vs its thresholds τ0..τ3",
    "u",
    (Series("job_usage", "job u", _field("job_usage")),),
    missing="This job does not scale its executors (no control.elastic)",
    job_level=True,
    thresholds=True,
)
THRESHOLD_WORDS = {
    "tau0": "τ0: scale in below",
    "tau1": "τ1: size to",
    "tau2": "τ2: shed above while adding",
    "tau3": "τ3: scale out above",
}
JOB_TRACE = ""
"""The class-name slot of a job-level trace (no class is named ``""``)."""
JOB_COLOR = "#343a40"

LIVE_CHARTS: tuple[Chart, ...] = (
    RESPONSE_TIME,
    RATES,
    LOAD,
    USAGE,
    SHARE,
    SHED,
    STATE,
    EXECUTORS,
    JOB_USAGE,
)
CHARTS_BY_ID: dict[str, Chart] = {chart.chart_id: chart for chart in LIVE_CHARTS}


# -- plans ---------------------------------------------------------------------------------


def plan_chart(
    chart: Chart, samples: Sequence[MetricSample], classes: Sequence[str] = ()
) -> list[TraceKey]:
    """The traces ``chart`` has for ``samples``: per class (``classes`` first, then any
    other in order of appearance) each series with data, then the warm-up band (charts
    with delay-target bands) and the redistribution events if there are any."""
    keys: list[TraceKey] = []
    if chart.states:
        present = {state for s in samples if (state := sample_state(s)) is not None}
        keys.extend(("state", "", state) for state in state_order(present))
    elif chart.job_level:
        rows = job_rows(samples)
        keys.extend(
            ("series", JOB_TRACE, series.key)
            for series in chart.series
            if any(series.value(row) is not None for row in rows)
        )
    else:
        by_class = _group(samples)
        for name in class_order(samples, classes):
            rows = by_class.get(name, [])
            with_data = {
                series.key
                for series in chart.series
                if any(series.value(row) is not None for row in rows)
            }
            for series in chart.series:
                if series.key not in with_data:
                    continue
                if series.fallback_for is not None and series.fallback_for in with_data:
                    continue
                keys.append(("series", name, series.key))
    if chart.bands and any(s.get("warmup") for s in samples):
        keys.append(WARMUP_KEY)
    if any(s.get("redistributed") for s in samples):
        keys.append(REDISTRIBUTION_KEY)
    return keys


def new_trace_keys(
    chart: Chart, plan: Sequence[TraceKey], samples: Sequence[MetricSample]
) -> list[TraceKey]:
    """Traces that ``samples`` need and ``plan`` lacks (then draw the chart anew).

    A fallback series (max for p95) is not needed where the plan has its primary."""
    have = set(plan)
    needed = []
    for key in plan_chart(chart, samples):
        if key in have:
            continue
        kind, name, series_key = key
        series = _series(chart, series_key) if kind == "series" else None
        primary = series.fallback_for if series is not None else None
        if primary is not None and ("series", name, primary) in have:
            continue
        needed.append(key)
    return needed


def state_order(states: Iterable[str]) -> list[str]:
    """Known states in their fixed order, then any other state alphabetically."""
    present = set(states)
    known = [state for state in STATE_COLORS if state in present]
    return known + sorted(present - set(STATE_COLORS))


def sample_state(sample: MetricSample) -> str | None:
    state = sample.get("manager_state")
    return state if isinstance(state, str) and state else None


# -- points ----------------------------------------------------------------------------------


def trace_points(
    chart: Chart, key: TraceKey, samples: Sequence[MetricSample]
) -> tuple[list[Any], list[Any]]:
    """``(x, y)`` that ``samples`` give the trace ``key`` of ``chart``."""
    kind, name, series_key = key
    if kind == "redistribution":
        x: list[Any] = []
        y: list[Any] = []
        for t in sorted({s["t"] for s in samples if s.get("redistributed")}):
            at = epoch_to_iso(t)
            x.extend((at, at, None))
            y.extend((0, 1, None))
        return x, y
    if kind == "warmup":
        return warmup_points(samples)
    if kind == "state":
        # One thick segment per period, from its start to its end: a single SVG path
        # per state (a marker per period would be hundreds of elements to redraw).
        x = []
        y = []
        for s in samples:
            if sample_state(s) == series_key:
                x.extend((epoch_to_iso(s["t"] - s["period_s"]), epoch_to_iso(s["t"]), None))
                y.extend((s["class_name"], s["class_name"], None))
        return x, y
    series = _series(chart, series_key)
    if series is None:
        return [], []
    rows = (
        job_rows(samples) if name == JOB_TRACE else [s for s in samples if s["class_name"] == name]
    )
    return [epoch_to_iso(s["t"]) for s in rows], [series.value(s) for s in rows]


def warmup_points(samples: Sequence[MetricSample]) -> tuple[list[Any], list[Any]]:
    """A rectangle over the plot's height (on the hidden [0, 1] axis) from the start to
    the end of each warm-up period, once per period however many classes report it; the
    trace's ``fill: toself`` closes each run of points between gaps into one shape."""
    x: list[Any] = []
    y: list[Any] = []
    for s in job_rows([s for s in samples if s.get("warmup")]):
        start, end = epoch_to_iso(s["t"] - s["period_s"]), epoch_to_iso(s["t"])
        x.extend((start, start, end, end, None))
        y.extend((0, 1, 1, 0, None))
    return x, y


def job_rows(samples: Sequence[MetricSample]) -> list[MetricSample]:
    """One sample per period for the job's own fields (every class's sample of a period
    carries them): the first of each ``seq``, the job's period counter."""
    seen: set[int] = set()
    rows = []
    for sample in samples:
        if sample["seq"] not in seen:
            seen.add(sample["seq"])
            rows.append(sample)
    return rows


def max_points(key: TraceKey, window_s: float, period_s: float, class_count: int) -> int:
    """How many points a trace keeps once extended (the window's worth, with room)."""
    per_class = math.ceil(window_s / max(period_s, 1e-3)) + 2
    if key[0] == "redistribution":
        return 3 * per_class
    if key[0] == "warmup":
        return 5 * per_class * max(class_count, 1)
    if key[0] == "state":
        return 3 * per_class * max(class_count, 1)
    return per_class


# -- one chart ---------------------------------------------------------------------------


def chart_spec(
    chart: Chart,
    plan: Sequence[TraceKey],
    samples: Sequence[MetricSample],
    context: ChartContext,
) -> dict[str, Any]:
    """One chart for ``plan`` (see ``plan_chart``) and ``samples`` (by time), as the
    plain figure dict Dash sends (``{"data": [...], "layout": {...}}``).

    Plain dicts and ISO time strings, because building and encoding a validated
    ``go.Figure`` of a few thousand points takes long enough to delay a refresh."""
    names = class_order(samples, context.classes)
    colors = class_colors(names)
    data = [_trace(chart, key, *trace_points(chart, key, samples), colors) for key in plan]
    layout: dict[str, Any] = {
        **_base_layout(context),
        "title": {"text": chart.title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "margin": {"l": 60, "r": 20, "t": 45, "b": 30},
        "legend": {"orientation": "h", "y": -0.12, "font": {"size": 10}},
        "xaxis": _x_axis(),
        "yaxis": _y_axis(chart, names),
        # A hidden [0, 1] axis for the redistribution lines, which span the plot height.
        "yaxis2": _overlay_axis("y", "x"),
        "height": CHART_HEIGHT,
    }
    shapes, annotations = _decorations(chart, plan, samples, names, colors, context, "x", "y")
    if not _drawn(plan):
        annotations.append(_note(_missing(chart, samples), 0.5, 0.5))
    layout["shapes"] = shapes
    layout["annotations"] = annotations
    return {"data": data, "layout": layout}


def build_chart(
    chart: Chart,
    plan: Sequence[TraceKey],
    samples: Sequence[MetricSample],
    context: ChartContext,
) -> go.Figure:
    """``chart_spec`` as a validated ``go.Figure``."""
    return go.Figure(chart_spec(chart, plan, samples, context))


def extend_chart(
    chart: Chart,
    plan: Sequence[TraceKey],
    samples: Sequence[MetricSample],
    *,
    window_s: float,
    period_s: float,
    class_count: int,
    offset: int = 0,
) -> list[Any] | None:
    """``dcc.Graph.extendData`` adding ``samples`` to a chart drawn for ``plan`` (whose
    first trace is trace ``offset`` of its figure): ``[{"x": [...], "y": [...]}, trace
    indices, {"x": max points, "y": max points}]``; ``None`` when no trace gets a point."""
    xs: list[list[Any]] = []
    ys: list[list[Any]] = []
    indices: list[int] = []
    limits: list[int] = []
    for index, key in enumerate(plan):
        x, y = trace_points(chart, key, samples)
        if not x:
            continue
        xs.append(x)
        ys.append(y)
        indices.append(offset + index)
        limits.append(max_points(key, window_s, period_s, class_count))
    if not indices:
        return None
    return [{"x": xs, "y": ys}, indices, {"x": limits, "y": limits}]


# -- the live dashboard: every chart in one figure -------------------------------------------

ROW_GAP_PX = 62  # room for a row's title and its time labels
TOP_PX = 70  # the legend
ROW_PX: dict[str, int] = {"response_time": 280}
DEFAULT_ROW_PX = 180


def row_heights(charts: Sequence[Chart], class_count: int) -> list[int]:
    """Each row's plot height in pixels (the state timeline grows with the classes)."""
    return [
        40 + 26 * max(class_count, 1)
        if chart.states
        else ROW_PX.get(chart.chart_id, DEFAULT_ROW_PX)
        for chart in charts
    ]


def dashboard_spec(
    charts: Sequence[Chart],
    plans: Mapping[str, Sequence[TraceKey]],
    samples: Sequence[MetricSample],
    context: ChartContext,
) -> dict[str, Any]:
    """Every chart as one row of one figure with a shared, linked time axis.

    One figure is one redraw per refresh instead of one per chart, which is most of
    the browser's work. The traces are the rows' plans in order (then one legend entry
    per class, which toggles that class on every row). Row ``i`` uses axes ``x{i+1}`` and
    ``y{i+1}``; its redistribution lines and warm-up bands use the hidden axis
    ``y{rows+i+1}``.
    """
    names = class_order(samples, context.classes)
    colors = class_colors(names)
    heights = row_heights(charts, len(names))
    total_px = TOP_PX + sum(heights) + ROW_GAP_PX * len(charts)
    layout: dict[str, Any] = {
        **_base_layout(context),
        "height": total_px,
        "margin": {"l": 70, "r": 20, "t": 10, "b": 10},
        "legend": {
            "orientation": "h",
            "x": 0,
            "y": 1,
            "yanchor": "top",
            "font": {"size": 11},
            "groupclick": "togglegroup",
        },
    }
    data: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    plot_px = total_px - TOP_PX - 20  # the margins
    top_px = 0.0
    in_legend: set[str] = set()  # the overlay kinds with a legend entry already
    for row, (chart, height) in enumerate(zip(charts, heights, strict=True)):
        x_ref, y_ref = _axis_ref("x", row), _axis_ref("y", row)
        overlay_ref = _axis_ref("y", len(charts) + row)
        top_px += ROW_GAP_PX
        high = 1 - top_px / plot_px
        top_px += height
        low = max(0.0, 1 - top_px / plot_px)
        x_axis = {**_x_axis(), "anchor": y_ref, "domain": [0, 1]}
        if row:
            x_axis["matches"] = "x"
        layout[_axis_name(x_ref)] = x_axis
        layout[_axis_name(y_ref)] = {
            **_y_axis(chart, names),
            "anchor": x_ref,
            "domain": [low, high],
        }
        layout[_axis_name(overlay_ref)] = {**_overlay_axis(y_ref, x_ref), "domain": [low, high]}
        plan = plans.get(chart.chart_id, [])
        for key in plan:
            trace = _trace(chart, key, *trace_points(chart, key, samples), colors)
            trace["xaxis"] = x_ref
            trace["yaxis"] = overlay_ref if key[0] in OVERLAY_KINDS else y_ref
            if key[0] == "series":
                # the class entries below stand for a class's lines; the job's show theirs
                trace["showlegend"] = key[1] == JOB_TRACE
            elif key[0] in OVERLAY_KINDS:
                trace["showlegend"] = key[0] not in in_legend
                in_legend.add(key[0])
            data.append(trace)
        annotations.append(_row_title(chart, high))
        row_shapes, row_notes = _decorations(
            chart, plan, samples, names, colors, context, x_ref, y_ref
        )
        shapes.extend(row_shapes)
        annotations.extend(row_notes)
        if not _drawn(plan):
            annotations.append(_note(_missing(chart, samples), 0.5, (low + high) / 2))
    # One legend entry per class (no points: never extended, so they come last).
    for name in names:
        data.append(
            {
                "type": "scatter",
                "x": [None],
                "y": [None],
                "name": name,
                "legendgroup": name,
                "mode": "lines",
                "line": {"color": colors[name], "width": 3},
                "hoverinfo": "skip",
                "legendrank": 1,  # the classes first in the legend
            }
        )
    layout["shapes"] = shapes
    layout["annotations"] = annotations
    return {"data": data, "layout": layout}


def extend_dashboard(
    charts: Sequence[Chart],
    plans: Mapping[str, Sequence[TraceKey]],
    samples: Sequence[MetricSample],
    *,
    window_s: float,
    period_s: float,
    class_count: int,
) -> list[Any] | None:
    """``extendData`` for a figure drawn by ``dashboard_spec`` with the same plans."""
    xs: list[list[Any]] = []
    ys: list[list[Any]] = []
    indices: list[int] = []
    limits: list[int] = []
    offset = 0
    for chart in charts:
        plan = plans.get(chart.chart_id, [])
        extend = extend_chart(
            chart,
            plan,
            samples,
            window_s=window_s,
            period_s=period_s,
            class_count=class_count,
            offset=offset,
        )
        offset += len(plan)
        if extend is None:
            continue
        xs.extend(extend[0]["x"])
        ys.extend(extend[0]["y"])
        indices.extend(extend[1])
        limits.extend(extend[2]["x"])
    if not indices:
        return None
    return [{"x": xs, "y": ys}, indices, {"x": limits, "y": limits}]


# -- drawing helpers -------------------------------------------------------------------------

DASH_WORDS = {"solid": "solid", "dash": "dashed", "dot": "dotted"}


def style_hint(chart: Chart) -> str:
    """``solid: mean · dashed: p95 · dotted: max`` for a chart with several series."""
    if len(chart.series) < 2:
        return ""
    return " · ".join(f"{DASH_WORDS.get(s.dash, s.dash)}: {s.label}" for s in chart.series)


def _axis_ref(letter: str, row: int) -> str:
    return letter if row == 0 else f"{letter}{row + 1}"


def _axis_name(ref: str) -> str:
    """``x`` → ``xaxis``, ``y3`` → ``yaxis3``."""
    return f"{ref[0]}axis{ref[1:]}"


def _base_layout(context: ChartContext) -> dict[str, Any]:
    return {"template": LAYOUT_TEMPLATE, "uirevision": context.uirevision}


def _x_axis() -> dict[str, Any]:
    return {"type": "date", "tickformat": "%H:%M:%S"}


def _y_axis(chart: Chart, names: Sequence[str]) -> dict[str, Any]:
    if chart.states:
        return {
            "title": {"text": ""},
            "type": "category",
            "categoryorder": "array",
            "categoryarray": list(reversed(names)),
            "range": [-0.5, max(len(names), 1) - 0.5],
        }
    axis: dict[str, Any] = {"title": {"text": chart.y_title}, "rangemode": "tozero"}
    if chart.y_max is not None:
        axis["range"] = [0, chart.y_max]
    return axis


def _overlay_axis(y_ref: str, x_ref: str) -> dict[str, Any]:
    return {
        "overlaying": y_ref,
        "anchor": x_ref,
        "range": [0, 1],
        "visible": False,
        "fixedrange": True,
    }


def _row_title(chart: Chart, top: float) -> dict[str, Any]:
    hint = style_hint(chart)
    text = f"<b>{chart.title}</b>" + (
        f"  <span style='font-size:11px'>({hint})</span>" if hint else ""
    )
    return {
        "text": text,
        "xref": "paper",
        "x": 0,
        "xanchor": "left",
        "yref": "paper",
        "y": top,
        "yanchor": "bottom",
        "yshift": 4,
        "showarrow": False,
        "font": {"size": 14},
    }


def _drawn(plan: Sequence[TraceKey]) -> bool:
    return any(key[0] not in OVERLAY_KINDS for key in plan)


def _missing(chart: Chart, samples: Sequence[MetricSample]) -> str:
    return NO_SAMPLES if not samples else chart.missing


def _decorations(
    chart: Chart,
    plan: Sequence[TraceKey],
    samples: Sequence[MetricSample],
    names: Sequence[str],
    colors: Mapping[str, str],
    context: ChartContext,
    x_ref: str,
    y_ref: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Delay-target bands and reference lines of one chart (shapes, labels)."""
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    domain = f"{x_ref} domain"
    if chart.bands:
        labelled = 0
        for name in names:
            band = context.bands.get(name)
            if band is None:
                continue
            low_s, target_s, high_s = band
            color = colors.get(name, "#888")
            if high_s > low_s:
                shapes.append(
                    {
                        "type": "rect",
                        "xref": domain,
                        "x0": 0,
                        "x1": 1,
                        "yref": y_ref,
                        "y0": low_s,
                        "y1": high_s,
                        "fillcolor": color,
                        "opacity": 0.12,
                        "line": {"width": 0},
                        "layer": "below",
                    }
                )
            shapes.append(_hline(domain, y_ref, target_s, color, 1.5))
            # Labels side by side from the right, so close targets do not overlap.
            annotations.append(
                _label(
                    f"{name} target {target_s:g} s",
                    domain,
                    1 - 0.2 * labelled,
                    y_ref,
                    target_s,
                    color,
                )
            )
            labelled += 1
    if chart.thresholds and _drawn(plan):
        for tau, value in sorted(context.thresholds.items()):
            shapes.append(_hline(domain, y_ref, value, "#6c757d", 1))
            words = THRESHOLD_WORDS.get(tau, tau)
            annotations.append(_label(f"{words} {value:g}", domain, 1, y_ref, value, "#6c757d"))
    if chart.reference_y is not None and _drawn(plan):
        shapes.append(_hline(domain, y_ref, chart.reference_y, "#dc3545", 1))
        if chart.reference_label:
            annotations.append(
                _label(chart.reference_label, domain, 1, y_ref, chart.reference_y, "#dc3545")
            )
    return shapes, annotations


def _hline(x_ref: str, y_ref: str, y: float, color: str, width: float) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": x_ref,
        "x0": 0,
        "x1": 1,
        "yref": y_ref,
        "y0": y,
        "y1": y,
        "line": {"color": color, "width": width, "dash": "dash"},
    }


def _label(text: str, x_ref: str, x: float, y_ref: str, y: float, color: str) -> dict[str, Any]:
    return {
        "text": text,
        "xref": x_ref,
        "x": x,
        "xanchor": "right",
        "yref": y_ref,
        "y": y,
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 10, "color": color},
    }


def _note(text: str, x: float, y: float) -> dict[str, Any]:
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": x,
        "y": y,
        "showarrow": False,
        "font": {"size": 14, "color": "#888"},
    }


def _series(chart: Chart, key: str) -> Series | None:
    return next((series for series in chart.series if series.key == key), None)


def _trace(
    chart: Chart, key: TraceKey, x: list[Any], y: list[Any], colors: Mapping[str, str]
) -> dict[str, Any]:
    kind, name, series_key = key
    if kind == "redistribution":
        return {
            "type": "scatter",
            "x": x,
            "y": y,
            "name": "redistribution",
            "legendgroup": "redistribution",
            "mode": "lines",
            "line": {"color": REDISTRIBUTION_COLOR, "width": 1, "dash": "dot"},
            "opacity": 0.6,
            "hoverinfo": "skip",
            "yaxis": "y2",
        }
    if kind == "warmup":
        return {
            "type": "scatter",
            "x": x,
            "y": y,
            "name": WARMUP_LABEL,
            "legendgroup": "warmup",
            "mode": "lines",
            "fill": "toself",
            "fillcolor": WARMUP_FILL,
            "line": {"width": 0},
            "hoverinfo": "skip",
            "yaxis": "y2",
        }
    if kind == "state":
        return {
            "type": "scatter",
            "x": x,
            "y": y,
            "name": STATE_LABELS.get(series_key, series_key),
            "legendgroup": f"state {series_key}",
            "mode": "lines",
            "line": {"width": 14, "color": STATE_COLORS.get(series_key, OTHER_STATE_COLOR)},
            "connectgaps": False,
            "hovertemplate": "%{y}: " + series_key + " until %{x}<extra></extra>",
        }
    series = _series(chart, series_key)
    label = (f"{name} {series.label}" if name else series.label) if series else name
    unit = series.unit if series else ""
    hover = f"%{{y:{series.hover_format if series else '.3f'}}}{unit}"
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "name": label,
        "legendgroup": name,
        "mode": "lines",
        "line": {
            "color": JOB_COLOR if name == JOB_TRACE else colors.get(name),
            "width": series.width if series else 2,
            "dash": series.dash if series else "solid",
        },
        "hovertemplate": hover + "<extra>" + label + "</extra>",
    }


def _group(samples: Iterable[MetricSample]) -> dict[str, list[MetricSample]]:
    groups: dict[str, list[MetricSample]] = {}
    for sample in samples:
        groups.setdefault(sample["class_name"], []).append(sample)
    return groups

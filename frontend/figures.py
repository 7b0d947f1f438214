"""Figure builders: pure functions of metric samples and class targets.

No I/O, no clock reads: give them the samples of ``GET /jobs/{id}/metrics`` (ordered by
``t``, epoch seconds) and the job's per-class delay targets (seconds), get a
``go.Figure``. The x axis is wall-clock time in UTC; every class keeps one colour across
both figures so the two charts read together.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import plotly.graph_objects as go
from plotly.colors import qualitative

from frontend.api import MetricSample

PALETTE: tuple[str, ...] = tuple(qualitative.Plotly)
EMPTY_MESSAGE = "No samples yet"


def class_order(samples: Iterable[MetricSample], known: Iterable[str] = ()) -> list[str]:
    """Classes in display order: ``known`` first (the job's own order), then any other
    class that appears in ``samples``, in order of first appearance."""
    order = list(dict.fromkeys(known))
    seen = set(order)
    for sample in samples:
        name = sample["class_name"]
        if name not in seen:
            seen.add(name)
            order.append(name)
    return order


def class_colors(names: Sequence[str]) -> dict[str, str]:
    """A stable colour per class, by position in ``names`` (cycling the palette)."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def epoch_to_utc(t: float) -> datetime:
    """Epoch seconds → naive UTC datetime (Plotly would drop an offset anyway)."""
    return datetime.fromtimestamp(t, tz=UTC).replace(tzinfo=None)


def response_time_figure(
    samples: Sequence[MetricSample],
    delay_targets_s: Mapping[str, float],
    *,
    uirevision: Hashable | None = None,
) -> go.Figure:
    """Per class: mean response time (solid), max (dotted), delay target (dashed line).

    The target of a class spans the time range of all samples, so it is drawn even for a
    class that has produced no sample yet; with no samples at all the figure has no
    traces, only axes and a "No samples yet" note.
    """
    names = class_order(samples, delay_targets_s)
    colors = class_colors(names)
    by_class = _group(samples)
    fig = _base_figure("Response time vs delay target", "response time (s)", uirevision)
    if not samples:
        return _mark_empty(fig)

    for name in names:
        color = colors[name]
        rows = by_class.get(name, [])
        if rows:
            x = [epoch_to_utc(s["t"]) for s in rows]
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[s["response_time_mean_s"] for s in rows],
                    name=f"{name} mean",
                    legendgroup=name,
                    mode="lines",
                    line={"color": color, "width": 2},
                    hovertemplate="%{y:.3f} s<extra>" + name + " mean</extra>",
                )
            )
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[s["response_time_max_s"] for s in rows],
                    name=f"{name} max",
                    legendgroup=name,
                    mode="lines",
                    line={"color": color, "width": 1, "dash": "dot"},
                    hovertemplate="%{y:.3f} s<extra>" + name + " max</extra>",
                )
            )
        target_s = delay_targets_s.get(name)
        if target_s is not None:
            t_first = min(s["t"] for s in samples)
            t_last = max(s["t"] for s in samples)
            fig.add_trace(
                go.Scatter(
                    x=[epoch_to_utc(t_first), epoch_to_utc(t_last)],
                    y=[target_s, target_s],
                    name=f"{name} target {target_s:g} s",
                    legendgroup=name,
                    mode="lines",
                    line={"color": color, "width": 2, "dash": "dash"},
                    hovertemplate="target %{y:.3f} s<extra>" + name + "</extra>",
                )
            )
    return fig


def throughput_figure(
    samples: Sequence[MetricSample],
    known_classes: Sequence[str] = (),
    *,
    uirevision: Hashable | None = None,
) -> go.Figure:
    """Per class: arrival rate (solid) and output rate (dotted), both in rows per second.

    Output rate is ``output_count / period_s``; the gap between the two is what the
    shedder dropped (or what is still queued). Samples with ``period_s <= 0`` give no
    output-rate point.
    """
    names = class_order(samples, known_classes)
    colors = class_colors(names)
    by_class = _group(samples)
    fig = _base_figure("Arrival and output rate", "rows/s", uirevision)
    if not samples:
        return _mark_empty(fig)

    for name in names:
        rows = by_class.get(name, [])
        if not rows:
            continue
        color = colors[name]
        fig.add_trace(
            go.Scatter(
                x=[epoch_to_utc(s["t"]) for s in rows],
                y=[s["arrival_rate"] for s in rows],
                name=f"{name} arrivals",
                legendgroup=name,
                mode="lines",
                line={"color": color, "width": 2},
                hovertemplate="%{y:.1f} rows/s<extra>" + name + " arrivals</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[epoch_to_utc(s["t"]) for s in rows],
                y=[output_rate(s) for s in rows],
                name=f"{name} output",
                legendgroup=name,
                mode="lines",
                line={"color": color, "width": 1, "dash": "dot"},
                hovertemplate="%{y:.1f} rows/s<extra>" + name + " output</extra>",
            )
        )
    return fig


def output_rate(sample: MetricSample) -> float | None:
    """Rows per second that left the query in this sample's period."""
    period_s = sample["period_s"]
    if period_s <= 0:
        return None
    return sample["output_count"] / period_s


def _group(samples: Iterable[MetricSample]) -> dict[str, list[MetricSample]]:
    groups: dict[str, list[MetricSample]] = {}
    for sample in samples:
        groups.setdefault(sample["class_name"], []).append(sample)
    return groups


def _base_figure(title: str, y_title: str, uirevision: Hashable | None) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left"},
        template="plotly_white",
        margin={"l": 60, "r": 20, "t": 60, "b": 40},
        legend={"orientation": "h", "y": -0.2},
        xaxis={"title": {"text": "time (UTC)"}, "type": "date"},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
        # Same value across interval refreshes keeps the user's zoom and legend toggles.
        uirevision=uirevision,
        height=360,
    )
    return fig


def _mark_empty(fig: go.Figure) -> go.Figure:
    fig.add_annotation(
        text=EMPTY_MESSAGE,
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font={"size": 16, "color": "#888"},
    )
    return fig

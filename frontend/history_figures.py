"""The history page's figures: pure functions of run summaries.

Give them the per-class summaries of ``GET /jobs/{id}/summary`` (seconds, fractions in
[0, 1]; any value may be ``None`` when the run did not report what it needs) and get a
``go.Figure``. A ``None`` leaves its bar out; a figure with nothing to show says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from frontend.api import ClassSummary

HEIGHT = 320
NOTHING = "Nothing reported for this range"
RT_BARS: tuple[tuple[str, str, str], ...] = (
    ("mean_response_time_s", "mean", "#9ecae1"),
    ("p95_response_time_s", "p95", "#3182bd"),
    ("max_response_time_s", "max", "#08519c"),
)
QOD_BARS: tuple[tuple[str, str, str], ...] = (
    ("loss_fraction", "loss (shed / arrived)", "#e6550d"),
    ("oracle_loss_fraction", "oracle loss", "#31a354"),
    ("shed_fraction_mean", "manager's mean shed fraction", "#fdae6b"),
)
RUN_COLORS = ("#1f77b4", "#ff7f0e")


def _value(summary: ClassSummary, key: str) -> float | None:
    value = summary.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def qos_figure(
    classes: Sequence[ClassSummary], title: str = "Response time vs delay target"
) -> go.Figure:
    """Per class: mean, p95 and max response time as bars; the delay target as a mark."""
    names = [c["class_name"] for c in classes]
    fig = _base(title, "seconds")
    drawn = _bars(fig, classes, RT_BARS, "%{y:.3f} s")
    targets = [c["delay_target_s"] for c in classes]
    if any(t is not None for t in targets):
        fig.add_trace(
            go.Scatter(
                x=names,
                y=targets,
                name="delay target",
                mode="markers",
                marker={
                    "symbol": "line-ew-open",
                    "size": 46,
                    "color": "#d62728",
                    "line": {"width": 3},
                },
                hovertemplate="%{x}: target %{y:.3f} s<extra></extra>",
            )
        )
    fig.update_layout(barmode="group")
    if not drawn:
        _note(fig, NOTHING)
    return fig


def qod_figure(classes: Sequence[ClassSummary], title: str = "Data lost to shedding") -> go.Figure:
    """Per class: loss, the oracle's loss and the manager's mean shed fraction (fractions)."""
    fig = _base(title, "fraction")
    drawn = _bars(fig, classes, QOD_BARS, "%{y:.1%}")
    fig.update_layout(barmode="group", yaxis={"tickformat": ".0%", "rangemode": "tozero"})
    if not drawn:
        _note(fig, "This run reports no shedding")
    return fig


def target_ratio(summary: ClassSummary) -> float | None:
    """p95 (else mean) response time over the delay target: 1 means on target."""
    target = summary["delay_target_s"]
    rt = _value(summary, "p95_response_time_s")
    if rt is None:
        rt = _value(summary, "mean_response_time_s")
    if rt is None or not target:
        return None
    return rt / target


def compare_figure(
    a: Sequence[ClassSummary], b: Sequence[ClassSummary], a_label: str, b_label: str
) -> go.Figure:
    """Two runs side by side per class: p95 response time over the target (1 = on
    target) and the loss fraction."""
    names = list(dict.fromkeys([c["class_name"] for c in a] + [c["class_name"] for c in b]))
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("p95 response time / delay target", "loss (shed / arrived)"),
        horizontal_spacing=0.08,
    )
    for (label, run), color in zip(((a_label, a), (b_label, b)), RUN_COLORS, strict=True):
        by_name = {c["class_name"]: c for c in run}
        ratios = [target_ratio(by_name[n]) if n in by_name else None for n in names]
        losses = [_value(by_name[n], "loss_fraction") if n in by_name else None for n in names]
        for col, values, value_format in ((1, ratios, "%{y:.2f}× target"), (2, losses, "%{y:.1%}")):
            # The run is named once in the legend, by its left-hand bar (None: the default).
            legend = None if col == 1 else False
            bar = _bar(
                names, values, label, color, value_format, legendgroup=label, showlegend=legend
            )
            fig.add_trace(bar, row=1, col=col)
    fig.add_hline(y=1.0, line={"color": "#d62728", "dash": "dash", "width": 1}, row=1, col=1)
    fig.update_layout(
        title={"text": "Runs compared", "x": 0, "xanchor": "left"},
        template="plotly_white",
        barmode="group",
        height=HEIGHT,
        margin={"l": 50, "r": 20, "t": 70, "b": 40},
        legend={"orientation": "h", "y": -0.15},
    )
    fig.update_yaxes(rangemode="tozero")
    fig.update_yaxes(tickformat=".0%", row=1, col=2)
    return fig


def _bars(
    fig: go.Figure,
    classes: Sequence[ClassSummary],
    bars: Sequence[tuple[str, str, str]],
    value_format: str,
) -> bool:
    """One bar trace per (summary key, label, colour) of ``bars`` that any class reports;
    whether any was drawn."""
    names = [c["class_name"] for c in classes]
    drawn = False
    for key, label, color in bars:
        values = [_value(c, key) for c in classes]
        if any(v is not None for v in values):
            drawn = True
            fig.add_trace(_bar(names, values, label, color, value_format))
    return drawn


def _bar(
    names: Sequence[str],
    values: Sequence[float | None],
    label: str,
    color: str,
    value_format: str,
    **more: object,
) -> go.Bar:
    """One bar per class name, named ``label`` in the legend and in the hover text, which
    shows the class and its value as ``value_format`` (``"%{y:.1%}"``) says."""
    return go.Bar(
        x=names,
        y=values,
        name=label,
        marker_color=color,
        hovertemplate=f"%{{x}}: {value_format}<extra>{label}</extra>",
        **more,
    )


def _base(title: str, y_title: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        template="plotly_white",
        height=HEIGHT,
        margin={"l": 55, "r": 20, "t": 45, "b": 40},
        legend={"orientation": "h", "y": -0.15},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
    )
    return fig


def _note(fig: go.Figure, text: str) -> None:
    fig.add_annotation(
        text=text,
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font={"size": 14, "color": "#888"},
    )

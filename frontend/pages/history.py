"""History page (``/history?job_id=3&compare=4``): a run's QoS and QoD over a time range,
two runs side by side, and the samples as a CSV download.

Callbacks only collect values and hand over to ``frontend.actions.history``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html
from dash.exceptions import PreventUpdate

from frontend.actions import history as actions
from frontend.actions.live import load_job_choices, parse_job_id
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/history", name="History", title="headroom · history"
)


def layout(job_id: str | None = None, compare: str | None = None, **_query: str) -> html.Div:
    """``job_id`` and ``compare`` come from the query string."""
    return html.Div(
        [
            html.H2("History"),
            dbc.Row(
                [
                    dbc.Col(
                        [
                            dbc.Label("Run", html_for="history-run"),
                            dcc.Dropdown(
                                id="history-run",
                                placeholder="Choose a run",
                                clearable=False,
                                options=[],
                            ),
                        ],
                        md=5,
                    ),
                    dbc.Col(
                        [
                            dbc.Label("Compare with", html_for="history-compare"),
                            dcc.Dropdown(
                                id="history-compare",
                                placeholder="(another run, optional)",
                                options=[],
                            ),
                        ],
                        md=5,
                    ),
                    dbc.Col(
                        [
                            dbc.Button(
                                "Download CSV",
                                id="history-download-button",
                                color="outline-primary",
                                class_name="w-100",
                            ),
                            dbc.Button(
                                "Download CSV (compared run)",
                                id="history-download-b-button",
                                color="outline-secondary",
                                size="sm",
                                class_name="w-100 mt-1",
                                style={"display": "none"},
                            ),
                        ],
                        md=2,
                        class_name="d-flex flex-column justify-content-end",
                    ),
                ],
                class_name="mb-3 g-3",
            ),
            dbc.Label("Time range (since the run's first sample)", html_for="history-range"),
            dcc.RangeSlider(
                id="history-range",
                min=0,
                max=1,
                value=[0, 1],
                step=1,
                allowCross=False,
                tooltip={"placement": "bottom", "always_visible": False},
            ),
            html.Div(id="history-range-text", className="small text-muted mb-3"),
            dcc.Store(id="history-requested", data=[parse_job_id(job_id), parse_job_id(compare)]),
            dcc.Store(id="history-spans", data=[None, None]),
            dcc.Download(id="history-download"),
            html.Div(id="history-alert"),
            dcc.Loading(
                [
                    html.Div(id="history-comparison"),
                    dbc.Row(
                        [
                            dbc.Col(id="history-a", lg=12),
                            dbc.Col(id="history-b", lg=6, style={"display": "none"}),
                        ],
                        class_name="g-4",
                        id="history-columns",
                    ),
                ],
                delay_show=300,
            ),
        ]
    )


@callback(
    Output("history-run", "options"),
    Output("history-run", "value"),
    Output("history-compare", "options"),
    Output("history-compare", "value"),
    Output("history-alert", "children", allow_duplicate=True),
    Input("history-requested", "data"),
    prevent_initial_call="initial_duplicate",
)
def _load_runs(requested: list[int | None]) -> tuple[Any, ...]:
    with api_client() as api:
        jobs, alert = load_job_choices(api)
    options = actions.run_options(jobs)
    chosen = actions.pick_run(jobs, requested[0])
    compare = requested[1] if requested[1] in {j["id"] for j in jobs} else None
    return options, chosen, options, compare, alert


@callback(
    Output("history-range", "min"),
    Output("history-range", "max"),
    Output("history-range", "value"),
    Output("history-range", "marks"),
    Output("history-spans", "data"),
    Output("history-alert", "children", allow_duplicate=True),
    Input("history-run", "value"),
    Input("history-compare", "value"),
    prevent_initial_call=True,
)
def _load_spans(run: Any, compare: Any) -> tuple[Any, ...]:
    with api_client() as api:
        span_a, alert_a = actions.run_span(api, parse_job_id(run))
        span_b, alert_b = actions.run_span(api, parse_job_id(compare))
    slider = actions.slider_settings(span_a)
    return (
        slider["min"],
        slider["max"],
        slider["value"],
        slider["marks"],
        [span_a, span_b],
        alert_a or alert_b,
    )


@callback(
    Output("history-range-text", "children"),
    Output("history-comparison", "children"),
    Output("history-a", "children"),
    Output("history-a", "lg"),
    Output("history-b", "children"),
    Output("history-b", "style"),
    Output("history-download-b-button", "style"),
    Input("history-spans", "data"),
    Input("history-range", "value"),
    State("history-run", "value"),
    State("history-compare", "value"),
)
def _show(
    spans: list[Any] | None, offsets: list[float] | None, run: Any, compare: Any
) -> tuple[Any, ...]:
    a, b = parse_job_id(run), parse_job_id(compare)
    if a is None:
        raise PreventUpdate
    span_a, span_b = _spans(spans)
    text = actions.describe_range(span_a, offsets)
    with api_client() as api:
        if b is None or b == a:
            view = actions.load_run(api, a, span_a, offsets)
            hidden = {"display": "none"}
            return text, None, actions.render_run(view, column="a"), 12, None, hidden, hidden
        view_a, view_b = actions.load_comparison(api, a, b, (span_a, span_b), offsets)
    return (
        text,
        actions.render_comparison(view_a, view_b),
        actions.render_run(view_a, column="a", compact=True),
        6,
        actions.render_run(view_b, column="b", compact=True),
        None,
        None,
    )


@callback(
    Output("history-download", "data"),
    Output("history-alert", "children", allow_duplicate=True),
    Input("history-download-button", "n_clicks"),
    Input("history-download-b-button", "n_clicks"),
    State("history-run", "value"),
    State("history-compare", "value"),
    State("history-spans", "data"),
    State("history-range", "value"),
    prevent_initial_call=True,
)
def _download(
    _n_a: int | None,
    _n_b: int | None,
    run: Any,
    compare: Any,
    spans: list[Any] | None,
    offsets: list[float] | None,
) -> tuple[Any, Any]:
    second = dash.ctx.triggered_id == "history-download-b-button"
    job_id = parse_job_id(compare if second else run)
    if job_id is None:
        raise PreventUpdate
    span_a, span_b = _spans(spans)
    with api_client() as api:
        download, alert = actions.export_csv(api, job_id, span_b if second else span_a, offsets)
    return download if download is not None else dash.no_update, alert


def _spans(
    spans: list[Any] | None,
) -> tuple[actions.Span | None, actions.Span | None]:
    def one(value: Any) -> actions.Span | None:
        if isinstance(value, list | tuple) and len(value) == 2:
            return float(value[0]), float(value[1])
        return None

    spans = spans or [None, None]
    return one(spans[0]), one(spans[1] if len(spans) > 1 else None)

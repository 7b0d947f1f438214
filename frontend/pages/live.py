"""Live page (``/live?job_id=3``): per-class response time vs delay target, every second.

Callbacks only collect values and hand over to ``frontend.actions.live``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html

from frontend.actions import live as actions
from frontend.context import api_client
from frontend.figures import response_time_figure, throughput_figure

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/live", name="Live", title="headroom · live"
)

REFRESH_INTERVAL_MS = 1_000
JOBS_INTERVAL_MS = 5_000


def layout(job_id: str | None = None, **_query: str) -> html.Div:
    """``job_id`` comes from the query string; other query parameters are ignored."""
    return html.Div(
        [
            html.H2("Live"),
            dbc.Row(
                dbc.Col(
                    dcc.Dropdown(
                        id="live-job", placeholder="Choose a job", clearable=False, options=[]
                    ),
                    md=6,
                ),
                class_name="mb-3",
            ),
            dcc.Store(id="live-requested-job", data=actions.parse_job_id(job_id)),
            dcc.Store(id="live-cursor", data=None),
            dcc.Interval(id="live-interval", interval=REFRESH_INTERVAL_MS),
            dcc.Interval(id="live-jobs-interval", interval=JOBS_INTERVAL_MS),
            html.Div(id="live-jobs-alert"),
            html.Div(id="live-summary"),
            dcc.Graph(
                id="live-response-time",
                figure=response_time_figure([], {}),
                config={"displaylogo": False},
            ),
            dcc.Graph(
                id="live-throughput", figure=throughput_figure([]), config={"displaylogo": False}
            ),
        ]
    )


@callback(
    Output("live-job", "options"),
    Output("live-job", "value"),
    Output("live-jobs-alert", "children"),
    Input("live-jobs-interval", "n_intervals"),
    State("live-requested-job", "data"),
    State("live-job", "value"),
)
def _load_jobs(_n_intervals: int | None, requested: int | None, current: Any) -> tuple[Any, ...]:
    with api_client() as api:
        jobs, alert = actions.load_job_choices(api)
    if alert is not None:
        # Keep the current choice through a transient API failure.
        return dash.no_update, dash.no_update, alert
    chosen = actions.pick_job(jobs, requested, actions.parse_job_id(current))
    return actions.job_options(jobs), chosen if chosen != current else dash.no_update, None


@callback(
    Output("live-response-time", "figure"),
    Output("live-throughput", "figure"),
    Output("live-summary", "children"),
    Output("live-cursor", "data"),
    Output("live-interval", "disabled"),
    Input("live-interval", "n_intervals"),
    Input("live-job", "value"),
    State("live-cursor", "data"),
)
def _refresh(
    _n_intervals: int | None, job_id: Any, cursor: actions.LiveCursor | None
) -> tuple[Any, ...]:
    with api_client() as api:
        view = actions.refresh_live(api, actions.parse_job_id(job_id), cursor)
    return (
        view.response_time if view.response_time is not None else dash.no_update,
        view.throughput if view.throughput is not None else dash.no_update,
        view.summary,
        view.cursor,
        not view.polling,
    )

"""Jobs page: start a job for chosen classes, watch statuses, stop a job.

Callbacks only collect values and hand over to ``frontend.actions.jobs``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate

from frontend.actions import jobs as actions
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/jobs", name="Jobs", title="headroom · jobs"
)

REFRESH_INTERVAL_MS = 1_500


def _start_form() -> dbc.Form:
    return dbc.Form(
        [
            dbc.Label("Classes", html_for="job-class-ids"),
            dbc.Checklist(id="job-class-ids", options=[], value=[]),
            # A checklist is not an <input>, so its message is always displayed (d-block).
            html.Div(id="job-class-ids-feedback", className="invalid-feedback d-block"),
            dbc.Row(
                dbc.Col(
                    [
                        dbc.Label("Duration (s)", html_for="job-duration_s", class_name="mt-2"),
                        dbc.Input(
                            id="job-duration_s",
                            type="number",
                            step="any",
                            placeholder="until stopped",
                        ),
                        dbc.FormFeedback(id="job-duration_s-feedback", type="invalid"),
                        dbc.FormText("Leave empty to run until you stop it."),
                    ],
                    md=4,
                )
            ),
            html.Div(dbc.Button("Start job", type="submit", color="primary"), className="mt-3"),
        ],
        id="job-start-form",
    )


layout = html.Div(
    [
        html.H2("Jobs"),
        html.Div(id="jobs-alert"),
        html.Div(id="jobs-load-alert"),
        html.Div(id="jobs-table"),
        dcc.Interval(id="jobs-interval", interval=REFRESH_INTERVAL_MS),
        dcc.Store(id="jobs-started", data=0),
        dcc.Store(id="jobs-stopped", data=0),
        dcc.Store(id="job-classes-reload", data=0),
        html.H4("Start a job", className="mt-4"),
        html.Div(id="job-classes-alert"),
        html.Div(id="job-start-alert"),
        _start_form(),
    ]
)


@callback(
    Output("jobs-table", "children"),
    Output("jobs-load-alert", "children"),
    Input("jobs-interval", "n_intervals"),
    Input("jobs-started", "data"),
    Input("jobs-stopped", "data"),
)
def _load_table(
    _n_intervals: int | None, _started: int, _stopped: int
) -> tuple[Component, Component | None]:
    with api_client() as api:
        return actions.load_jobs_table(api)


@callback(
    Output("job-class-ids", "options"),
    Output("job-class-ids", "value"),
    Output("job-classes-alert", "children"),
    Input("job-classes-reload", "data"),  # fires when the page is shown
)
def _load_class_choices(_reload: int) -> tuple[list[dict[str, Any]], list[int], Any]:
    with api_client() as api:
        choices = actions.load_class_choices(api)
    return choices.options, choices.selected, choices.alert


@callback(
    Output("job-class-ids-feedback", "children"),
    Output("job-duration_s", "invalid"),
    Output("job-duration_s-feedback", "children"),
    Output("job-start-alert", "children"),
    Output("jobs-started", "data"),
    Input("job-start-form", "n_submit"),
    State("job-class-ids", "value"),
    State("job-duration_s", "value"),
    State("jobs-started", "data"),
    prevent_initial_call=True,
)
def _start(
    _n_submit: int | None, class_ids: list[int] | None, duration_s: float | None, started: int
) -> tuple[Any, ...]:
    with api_client() as api:
        outcome = actions.start_job(api, class_ids, duration_s)
    feedback = outcome.feedback_by_field
    return (
        feedback.get("class_ids"),
        "duration_s" in feedback,
        feedback.get("duration_s"),
        outcome.alert,
        started + 1 if outcome.job is not None else dash.no_update,
    )


@callback(
    Output("jobs-alert", "children"),
    Output("jobs-stopped", "data"),
    Input({"type": actions.STOP_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("jobs-stopped", "data"),
    prevent_initial_call=True,
)
def _stop(_n_clicks: list[int | None], stopped: int) -> tuple[Component, int]:
    # Every table refresh re-creates the buttons and fires this with n_clicks None.
    if not isinstance(ctx.triggered_id, dict) or not ctx.triggered[0]["value"]:
        raise PreventUpdate
    with api_client() as api:
        alert = actions.stop_job(api, int(ctx.triggered_id["index"]))
    return alert, stopped + 1

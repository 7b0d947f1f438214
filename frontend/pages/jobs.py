"""Jobs page: start a job (chosen classes with generated streams, or a stored scenario;
its streams generated or read from Redis, its output kept or not), watch it start, stop,
restart, read its log.

Everyone signed in sees the jobs and their logs; the start form and the Stop/Restart
buttons are only offered to operators and admins. Callbacks only collect values and
hand over to ``frontend.actions.jobs``.
"""

from __future__ import annotations

import uuid
from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, dcc, html
from dash.development.base_component import Component

from frontend import polling, session
from frontend.actions import jobs as actions
from frontend.api import Role
from frontend.auth import can_change
from frontend.components import (
    change_section,
    clicked_button,
    clicked_index,
    error_alert,
    labelled_field,
    role_layouts,
    table_page_head,
)
from frontend.context import api_client
from frontend.managers import manager_options, read_catalogue

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/jobs", name="Jobs", title="headroom · jobs"
)

REFRESH_INTERVAL_MS = 1_500
JOBS_POLL = "jobs"  # the table refresh: jobs-interval, jobs-tick, jobs-answered
LOG_REFRESH_MS = 2_000


# What the start form looks like before the workload choices arrive.
_GENERATED_FORM = actions.workload_form(actions.GENERATED)


def _number_field(field: str, label: str, placeholder: str, hint: str) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"job-{field}"),
            dbc.Input(id=f"job-{field}", type="number", step="any", placeholder=placeholder),
            dbc.FormFeedback(id=f"job-{field}-feedback", type="invalid"),
            dbc.FormText(hint, id=f"job-{field}-hint"),
        ],
        md=3,
    )


def _select_field(
    field: str, label: str, options: list[dict[str, str]], value: str, md: int = 3
) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"job-{field}"),
            dbc.Select(id=f"job-{field}", options=options, value=value),
            dbc.FormFeedback(id=f"job-{field}-feedback", type="invalid"),
        ],
        md=md,
    )


OWN_MANAGER_CHOICE = {"label": "each class's own manager", "value": actions.OWN_MANAGER}
"""The manager choice the start form offers before the API's managers (and without them)."""


def _start_form() -> dbc.Form:
    form = _GENERATED_FORM
    return dbc.Form(
        [
            dbc.Row(
                _select_field(
                    "workload",
                    "Workload",
                    [actions.GENERATED_CHOICE],
                    actions.GENERATED,
                    md=6,
                ),
                class_name="g-3",
            ),
            dbc.FormText(form.hint, id="job-workload-hint"),
            dcc.Store(id="job-scenarios", data=[]),
            html.Div(
                [
                    dbc.Label("Classes", html_for="job-class-ids", class_name="mt-2"),
                    dbc.Checklist(id="job-class-ids", options=[], value=[]),
                    # A checklist is not an <input>: its message is always displayed (d-block).
                    html.Div(id="job-class-ids-feedback", className="invalid-feedback d-block"),
                ],
                id="job-classes-section",
            ),
            html.P(id="job-classes-note", className="text-muted mt-2 mb-0", hidden=True),
            dbc.Row(
                [
                    _number_field(
                        "duration_s",
                        "Duration (s)",
                        form.duration_placeholder,
                        form.duration_hint,
                    ),
                    _number_field(
                        "rate_per_s",
                        "Arrival rate (rows/s per class)",
                        "200",
                        form.rate_hint,
                    ),
                    dbc.Col(
                        [
                            dbc.Label("Engine (Spark master)", html_for="job-spark_master"),
                            dbc.Input(
                                id="job-spark_master",
                                type="text",
                                placeholder="the API's default, e.g. local[*]",
                            ),
                            dbc.FormFeedback(id="job-spark_master-feedback", type="invalid"),
                            dbc.FormText("local[*], local[N] or a master an admin allowed"),
                        ],
                        md=4,
                    ),
                ],
                class_name="g-3 mt-1",
            ),
            dbc.Row(
                [
                    _select_field(
                        "manager", "Load manager", [OWN_MANAGER_CHOICE], actions.OWN_MANAGER
                    ),
                    _select_field(
                        "policy",
                        "Redistribution policy",
                        form.policy_options,
                        actions.DEFAULT_POLICY_CHOICE,
                    ),
                    _number_field(
                        "redistribution_every",
                        "Redistribute every (periods)",
                        form.redistribution_placeholder,
                        "Control periods between capacity redistributions.",
                    ),
                    labelled_field(
                        "job",
                        "recommend_only",
                        "Mode",
                        dbc.Switch(
                            id="job-recommend_only",
                            label="recommend only (shed nothing)",
                            value=False,
                        ),
                        md=3,
                    ),
                ],
                class_name="g-3 mt-1",
            ),
            dbc.FormText(
                "A manager chosen here replaces the manager of every class in this job.",
                id="job-manager-hint",
            ),
            dbc.Row(
                [
                    _select_field(
                        "source", "Source", actions.SOURCE_CHOICES, actions.DEFAULT_SOURCE
                    ),
                    _select_field("sink", "Output", actions.SINK_CHOICES, actions.DEFAULT_SINK),
                    _select_field(
                        "queries", "Spark queries", actions.QUERIES_CHOICES, actions.DEFAULT_QUERIES
                    ),
                    labelled_field(
                        "job",
                        "standby",
                        "Standby classes",
                        dbc.Input(id="job-standby", type="text", placeholder="e.g. recs, ads"),
                        md=3,
                    ),
                ],
                class_name="g-3 mt-1",
            ),
            dbc.FormText(
                "Redis needs HEADROOM_STREAMS_REDIS_URL on the control plane: each stream is "
                "read from <prefix>:<stream>, the output written to <prefix>:job:<id>:output. "
                "Output files go under the job's directory (output/). A query per priority "
                "tier lets the top tier commit without waiting for the lower tiers' work. "
                "A class in standby runs its queries but computes nothing until a hand-off "
                "(Cluster page) moves it here; it needs Redis streams.",
                id="job-source-hint",
            ),
            # Enabled once the class choices have arrived: a start before them would be
            # refused for want of a class while the page still loads them.
            html.Div(
                dbc.Button(
                    "Start job",
                    id="job-start-submit",
                    type="submit",
                    color="primary",
                    disabled=True,
                ),
                className="mt-3",
            ),
            # One key per filled-in form: a double submit starts one job, not two.
            dcc.Store(id="job-start-key", data=_new_key()),
        ],
        id="job-start-form",
    )


def _log_modal() -> dbc.Modal:
    return dbc.Modal(
        [
            dbc.ModalHeader(dbc.ModalTitle(id="job-log-title")),
            dbc.ModalBody(id="job-log-body"),
            dcc.Store(id="job-log-job", data=None),
            dcc.Interval(id="job-log-interval", interval=LOG_REFRESH_MS, disabled=True),
        ],
        id="job-log-modal",
        size="xl",
        scrollable=True,
        is_open=False,
    )


def _new_key() -> str:
    return uuid.uuid4().hex


def layout_for(role: Role | None) -> html.Div:
    start = change_section(
        role,
        "Start a job",
        [
            html.Div(id="job-classes-alert"),
            html.Div(id="job-workload-alert"),
            html.Div(id="job-managers-alert"),
            html.Div(id="job-start-alert"),
            dcc.Store(id="job-classes-reload", data=0),
            _start_form(),
        ],
        "Starting, stopping and restarting jobs",
        "jobs-role-hint",
    )
    return html.Div(
        [
            *table_page_head("Jobs", "jobs"),
            *polling.components(JOBS_POLL, REFRESH_INTERVAL_MS),
            dcc.Store(id="jobs-fingerprint", data=None),
            dcc.Store(id="jobs-started", data=0),
            dcc.Store(id="jobs-changed", data=0),
            _log_modal(),
            *start,
        ]
    )


layout, validation_layout = role_layouts(layout_for)


@callback(
    Output("jobs-table", "children"),
    Output("jobs-load-alert", "children"),
    Output("jobs-fingerprint", "data"),
    *polling.gate(JOBS_POLL),
    Input("jobs-started", "data"),
    Input("jobs-changed", "data"),
    State("jobs-fingerprint", "data"),
)
def _load_table(tick: int, _started: int, _changed: int, previous: str | None) -> tuple[Any, ...]:
    with api_client() as api:
        view = actions.load_jobs_table(
            api, can_control=can_change(session.current_role()), previous=previous
        )
    # Unchanged jobs: leave the table (and the buttons someone may be clicking) alone.
    table = dash.no_update if view.table is None else view.table
    return table, view.alert, view.fingerprint, tick


polling.register(JOBS_POLL)


@callback(
    Output("job-class-ids", "options"),
    Output("job-class-ids", "value"),
    Output("job-classes-alert", "children"),
    Output("job-start-submit", "disabled"),
    Input("job-classes-reload", "data"),  # fires when the page is shown
)
def _load_class_choices(_reload: int) -> tuple[list[dict[str, Any]], list[int], Any, bool]:
    with api_client() as api:
        choices = actions.load_class_choices(api)
    return choices.options, choices.selected, choices.alert, False


@callback(
    Output("job-manager", "options"),
    Output("job-managers-alert", "children"),
    Input("job-classes-reload", "data"),  # fires when the page is shown
)
def _load_manager_choices(_reload: int) -> tuple[list[dict[str, str]], Component | None]:
    """Each class's own manager, then every manager the API offers (``GET /managers``)."""
    with api_client() as api:
        catalogue = read_catalogue(api)
    alert = error_alert(catalogue.error) if catalogue.error else None
    return [OWN_MANAGER_CHOICE, *manager_options(catalogue.managers)], alert


@callback(
    Output("job-workload", "options"),
    Output("job-workload", "value"),
    Output("job-scenarios", "data"),
    Output("job-workload-alert", "children"),
    Input("job-classes-reload", "data"),  # fires when the page is shown
    State("job-workload", "value"),
)
def _load_workload_choices(_reload: int, current: str | None) -> tuple[Any, ...]:
    with api_client() as api:
        choices = actions.load_workload_choices(api)
    value = actions.keep_workload(current, choices.options)
    return choices.options, value, choices.scenarios, choices.alert


@callback(
    output={
        "hint": Output("job-workload-hint", "children"),
        "classes_hidden": Output("job-classes-section", "hidden"),
        "note": Output("job-classes-note", "children"),
        "note_hidden": Output("job-classes-note", "hidden"),
        "rate_disabled": Output("job-rate_per_s", "disabled"),
        "rate_hint": Output("job-rate_per_s-hint", "children"),
        "duration_placeholder": Output("job-duration_s", "placeholder"),
        "duration_hint": Output("job-duration_s-hint", "children"),
        "every_placeholder": Output("job-redistribution_every", "placeholder"),
        "policy_options": Output("job-policy", "options"),
    },
    inputs={
        "workload": Input("job-workload", "value"),
        "scenarios": Input("job-scenarios", "data"),
    },
)
def _apply_workload(workload: str | None, scenarios: list[Any] | None) -> dict[str, Any]:
    """Hide or disable what does not apply to the chosen workload (as the API ignores it)."""
    form = actions.workload_form(workload, scenarios or [])
    return {
        "hint": form.hint,
        "classes_hidden": form.classes_hidden,
        "note": form.classes_note,
        "note_hidden": form.classes_note is None,
        "rate_disabled": form.rate_disabled,
        "rate_hint": form.rate_hint,
        "duration_placeholder": form.duration_placeholder,
        "duration_hint": form.duration_hint,
        "every_placeholder": form.redistribution_placeholder,
        "policy_options": form.policy_options,
    }


# Fields with an <input> or <select> that can be marked invalid.
_MARKABLE = tuple(f for f in actions.START_FIELDS if f not in ("class_ids", "recommend_only"))


@callback(
    output={
        "class_ids": Output("job-class-ids-feedback", "children"),
        "recommend_only": Output("job-recommend_only-feedback", "children"),
        "invalid": {f: Output(f"job-{f}", "invalid") for f in _MARKABLE},
        "feedback": {f: Output(f"job-{f}-feedback", "children") for f in _MARKABLE},
        "alert": Output("job-start-alert", "children"),
        "started": Output("jobs-started", "data"),
        "key": Output("job-start-key", "data"),
    },
    inputs={
        "n_submit": Input("job-start-form", "n_submit"),
        "workload": State("job-workload", "value"),
        "class_ids": State("job-class-ids", "value"),
        "duration_s": State("job-duration_s", "value"),
        "options": {f: State(f"job-{f}", "value") for f in actions.OPTION_FIELDS},
        "started": State("jobs-started", "data"),
        "key": State("job-start-key", "data"),
    },
    prevent_initial_call=True,
)
def _start(
    n_submit: int | None,
    workload: str | None,
    class_ids: list[int] | None,
    duration_s: float | None,
    options: dict[str, Any],
    started: int,
    key: str | None,
) -> dict[str, Any]:
    with api_client() as api:
        outcome = actions.start_job(
            api, class_ids, duration_s, idempotency_key=key, options=options, workload=workload
        )
    feedback = outcome.feedback_by_field
    done = outcome.job is not None
    return {
        "class_ids": feedback.get("class_ids"),
        "recommend_only": feedback.get("recommend_only"),
        "invalid": {f: f in feedback for f in _MARKABLE},
        "feedback": {f: feedback.get(f) for f in _MARKABLE},
        "alert": outcome.alert,
        "started": started + 1 if done else dash.no_update,
        "key": _new_key() if done else dash.no_update,  # the next job is a new request
    }


@callback(
    Output("jobs-alert", "children"),
    Output("jobs-changed", "data"),
    Input({"type": actions.STOP_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    Input({"type": actions.RESTART_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    State("jobs-changed", "data"),
    prevent_initial_call=True,
)
def _control(
    _stops: list[int | None], _restarts: list[int | None], changed: int
) -> tuple[Component, int]:
    button = clicked_button()
    job_id = int(button["index"])
    restart = button["type"] == actions.RESTART_BUTTON_TYPE
    with api_client() as api:
        alert = actions.restart_job(api, job_id) if restart else actions.stop_job(api, job_id)
    return alert, changed + 1


@callback(
    Output("job-log-job", "data"),
    Output("job-log-modal", "is_open"),
    Input({"type": actions.LOG_BUTTON_TYPE, "index": ALL}, "n_clicks"),
    prevent_initial_call=True,
)
def _open_log(_n_clicks: list[int | None]) -> tuple[int, bool]:
    return clicked_index(), True


@callback(
    Output("job-log-title", "children"),
    Output("job-log-body", "children"),
    Output("job-log-interval", "disabled"),
    Input("job-log-job", "data"),
    Input("job-log-interval", "n_intervals"),
    Input("job-log-modal", "is_open"),
    prevent_initial_call=True,
)
def _show_log(job_id: int | None, _n_intervals: int | None, is_open: bool) -> tuple[Any, ...]:
    if job_id is None or not is_open:
        return dash.no_update, dash.no_update, True  # closed: stop polling
    with api_client() as api:
        view = actions.load_log(api, job_id)
    return view.title, actions.render_log(view), not view.live

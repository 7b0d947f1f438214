"""Live page (``/live?job_id=3``): a job's per-class QoS charts and its live tuning panel.

The first refresh draws the newest window whole, later ones send only new points
(``extendData``). All charts are rows of one figure, so a refresh is one redraw in the
browser. A later refresh is a long poll: the API answers as soon as a sample newer than
those shown is stored (or after ``LIVE_WAIT_S``, so an idle view still refreshes about
once a second). Both the refresh and the tuning panel's configuration read are gated
polls (``frontend.polling``): a tick of their interval becomes a request only when the
previous one has answered, so the next poll starts within one tick of an answer and an
answer slower than the interval is never dropped.

A clientside callback notes when each new sample was put on screen
(``window.headroomRendered``: ``[t, painted epoch ms]`` per sample, and the hidden
``#live-rendered``), which is how freshness is measured.

The tuning panel polls the job's configuration every second, so a change shows as
pending and then applied. Callbacks only collect values and hand over to
``frontend.actions.live`` and ``frontend.actions.tuning``.
"""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, clientside_callback, ctx, dcc, html
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate

from frontend import polling, session
from frontend.actions import action_log, tuning
from frontend.actions import live as actions
from frontend.api import ApiError, JobConfig, Manager, Role
from frontend.auth import can_change
from frontend.components import role_hint_alert
from frontend.context import api_client
from frontend.managers import POLICIES, manager_options, read_catalogue

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/live", name="Live", title="headroom · live"
)

REFRESH_INTERVAL_MS = 100
JOBS_INTERVAL_MS = 5_000
CONFIG_INTERVAL_MS = 1_000
ACTIONS_INTERVAL_MS = 2_000
LIVE_POLL = "live"  # the chart refresh: live-interval, live-tick, live-answered
CONFIG_POLL = "tune"  # the configuration read: tune-interval, tune-tick, tune-answered
ACTIONS_POLL = "acts"  # the control-action log: acts-interval, acts-tick, acts-answered
CHART_ID = "live-chart"  # every chart, one row each, in one figure


def _charts() -> Component:
    graph: Component = dcc.Graph(
        id=CHART_ID, figure=actions.empty_figure(), config={"displaylogo": False}
    )
    return graph


def _action_log() -> Component:
    card: Component = dbc.Card(
        [
            dbc.CardHeader("Control actions", class_name="fw-semibold"),
            dbc.CardBody([html.Div(id="live-actions-alert"), html.Div(id="live-actions")]),
        ],
        id="live-actions-card",
        class_name="mt-3",
    )
    return card


def _number(field: str, label: str, width: int) -> dbc.Col:
    return dbc.Col(
        [
            dbc.Label(label, html_for=f"tune-{field}", class_name="small mb-0"),
            # text, not number: a number field refused and marked invalid lost what the
            # operator typed (shown blank, then the old text came back under new keys)
            dbc.Input(id=f"tune-{field}", type="text", size="sm"),
            dbc.FormFeedback(id=f"tune-{field}-feedback", type="invalid"),
        ],
        width=width,
    )


def _tuning_form() -> Component:
    form: Component = dbc.Form(
        [
            dbc.Row(
                dbc.Col(
                    [
                        dbc.Label("Class", html_for="tune-class", class_name="small mb-0"),
                        dbc.Select(id="tune-class", options=[], size="sm"),
                    ]
                ),
                class_name="mb-2",
            ),
            dbc.Row(
                [
                    _number("delay_target_s", "Delay target (s)", 6),
                    _number("priority", "Priority", 6),
                ],
                class_name="g-2 mb-2",
            ),
            dbc.Row(
                [
                    _number(tau, label, 3)
                    for tau, label in (
                        ("tau0", "τ0"),
                        ("tau1", "τ1"),
                        ("tau2", "τ2"),
                        ("tau3", "τ3"),
                    )
                ],
                class_name="g-2 mb-1",
            ),
            dbc.FormText("0 < τ0 < τ1 < τ2 < τ3 ≤ 1 (capacity usage thresholds)"),
            dbc.Row(
                [
                    dbc.Col(
                        [
                            dbc.Label("Manager", html_for="tune-manager", class_name="small mb-0"),
                            dbc.Select(id="tune-manager", options=[], size="sm"),  # from the API
                            dbc.FormFeedback(id="tune-manager-feedback", type="invalid"),
                        ],
                        width=5,
                    ),
                    dbc.Col(
                        [
                            dbc.Label(
                                "Manager parameters",
                                html_for="tune-manager_params",
                                class_name="small mb-0",
                            ),
                            dbc.Input(
                                id="tune-manager_params",
                                type="text",
                                size="sm",
                                placeholder="defaults",
                            ),
                            dbc.FormFeedback(id="tune-manager_params-feedback", type="invalid"),
                        ],
                        width=7,
                    ),
                ],
                class_name="g-2 mt-1 mb-2",
            ),
            html.Hr(className="my-2"),
            dbc.Switch(
                id="tune-recommend_only",
                label="Recommend only (compute decisions, shed nothing)",
                value=False,
                class_name="small",
            ),
            html.Div(id="tune-recommend_only-feedback", className="invalid-feedback d-block"),
            dbc.Row(
                [
                    _number("hold_out_s", "Scale-out hold (s)", 4),
                    _number("hold_in_s", "Scale-in hold (s)", 4),
                    _number("max_executors", "Max executors", 4),
                ],
                class_name="g-2 mt-1 mb-1",
            ),
            dbc.FormText("Elastic jobs only: how long u stays past τ3 (τ0) before a resize"),
            dbc.Row(
                [
                    dbc.Col(
                        [
                            dbc.Label("Policy", html_for="tune-policy", class_name="small mb-0"),
                            dbc.Select(
                                id="tune-policy",
                                options=[{"label": p, "value": p} for p in POLICIES],
                                size="sm",
                            ),
                            dbc.FormFeedback(id="tune-policy-feedback", type="invalid"),
                        ],
                        width=6,
                    ),
                    _number("redistribution_every", "Redistribute every", 6),
                ],
                class_name="g-2 mb-2",
            ),
            dbc.Button("Review change", id="tune-review", color="primary", size="sm"),
            dbc.Modal(
                [
                    dbc.ModalHeader(dbc.ModalTitle("Apply this change to the running job?")),
                    dbc.ModalBody(id="tune-modal-body"),
                    dbc.ModalFooter(
                        [
                            dbc.Button("Cancel", id="tune-cancel", color="secondary"),
                            dbc.Button("Apply", id="tune-confirm", color="primary"),
                        ]
                    ),
                ],
                id="tune-modal",
                is_open=False,
            ),
            dcc.Store(id="tune-plan", data=None),
            dcc.Store(id="tune-loaded", data=None),
        ],
        id="tune-form",
    )
    return form


def _tuning_panel(role: Role | None) -> Component:
    if can_change(role):
        body: list[Component] = [html.Div(id="tune-alert"), _tuning_form()]
    else:
        body = [role_hint_alert(role, "Tuning a running job", "tune-role-hint", "small py-2")]
    card: Component = dbc.Card(
        [
            dbc.CardHeader("Live tuning", class_name="fw-semibold"),
            dbc.CardBody(
                [
                    html.Div(id="tune-config-alert"),
                    html.Div(id="tune-status"),
                    *body,
                    html.H6("Configuration versions", className="mt-3"),
                    html.Div(id="tune-versions"),
                ]
            ),
        ],
        id="tune-panel",
        class_name="sticky-top",
        # Taller than the window (a long error under a field), a sticky panel would hide
        # its own bottom (the Review button) for as long as it sticks: it scrolls inside.
        style={"top": "1rem", "maxHeight": "calc(100vh - 2rem)", "overflowY": "auto"},
    )
    return card


def layout(job_id: str | None = None, **_query: str) -> html.Div:
    """``job_id`` comes from the query string; other query parameters are ignored."""
    return layout_for(session.current_role(), actions.parse_job_id(job_id))


def validation_layout() -> html.Div:
    """Every component any role sees (``frontend.app`` validates callbacks against it)."""
    return layout_for("admin", None)


def layout_for(role: Role | None, job_id: int | None) -> html.Div:
    return html.Div(
        [
            html.H2("Live"),
            dbc.Row(
                [
                    dbc.Col(
                        dcc.Dropdown(
                            id="live-job", placeholder="Choose a job", clearable=False, options=[]
                        ),
                        md=6,
                    ),
                    dbc.Col(
                        dbc.Select(
                            id="live-window",
                            options=actions.window_options(),
                            value=str(actions.LIVE_WINDOW_S),
                        ),
                        md=2,
                    ),
                ],
                class_name="mb-3",
            ),
            dcc.Store(id="live-requested-job", data=job_id),
            dcc.Store(id="live-cursor", data=None),
            dcc.Store(id="live-config", data=None),
            # The API's load managers (GET /managers): read at the first refresh.
            dcc.Store(id="live-managers", data=None),
            *polling.components(LIVE_POLL, REFRESH_INTERVAL_MS),
            *polling.components(CONFIG_POLL, CONFIG_INTERVAL_MS),
            *polling.components(ACTIONS_POLL, ACTIONS_INTERVAL_MS),
            dcc.Interval(id="live-jobs-interval", interval=JOBS_INTERVAL_MS),
            # When the newest sample was put on screen: "<t> <epoch ms>" (see below).
            html.Div(id="live-rendered", style={"display": "none"}),
            html.Div(id="live-jobs-alert"),
            html.Div(id="live-alert"),
            html.Div(id="live-summary", className="mb-3"),
            dbc.Row(
                [
                    dbc.Col([_charts(), _action_log()], lg=8),
                    dbc.Col(_tuning_panel(role), lg=4),
                ],
                class_name="g-3",
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
    output={
        "figure": Output(CHART_ID, "figure"),
        "extend": Output(CHART_ID, "extendData"),
        "summary": Output("live-summary", "children"),
        "cursor": Output("live-cursor", "data"),
        "disabled": Output(polling.interval_id(LIVE_POLL), "disabled"),
        "answered": Output(polling.answered_id(LIVE_POLL), "data"),
        "alert": Output("live-alert", "children"),
        "managers": Output("live-managers", "data"),
    },
    inputs={
        "tick": Input(polling.tick_id(LIVE_POLL), "data"),
        "job_id": Input("live-job", "value"),
        "window": Input("live-window", "value"),
        "cursor": State("live-cursor", "data"),
        "config": State("live-config", "data"),
        "managers": State("live-managers", "data"),
    },
)
def _refresh(
    tick: int | None,
    job_id: Any,
    window: Any,
    cursor: actions.LiveCursor | None,
    config: JobConfig | None,
    managers: list[Manager] | None,
) -> dict[str, Any]:
    """One tick of the charts; the first also reads the managers, whose defaults draw the
    delay-target bands (read again at the next tick while the API cannot say)."""
    loaded = managers
    with api_client() as api:
        if loaded is None:
            loaded = read_catalogue(api).managers or None
        view = actions.refresh_live(
            api,
            actions.parse_job_id(job_id),
            cursor,
            config,
            actions.parse_window(window),
            managers=loaded or (),
        )
    return {
        "managers": loaded if loaded is not managers else dash.no_update,
        "figure": view.figure if view.figure is not None else dash.no_update,
        "extend": view.extend if view.extend is not None else dash.no_update,
        "summary": view.summary if view.summary is not None else dash.no_update,
        "cursor": view.cursor,
        "disabled": not view.polling,
        "alert": view.alert,
        "answered": tick,
    }


polling.register(LIVE_POLL)
polling.register(CONFIG_POLL)
polling.register(ACTIONS_POLL)


@callback(
    Output("live-actions", "children"),
    Output("live-actions-alert", "children"),
    *polling.gate(ACTIONS_POLL),
    State("live-job", "value"),
)
def _poll_actions(tick: int | None, job_id: Any) -> tuple[Any, Any, Any]:
    with api_client() as api:
        log, alert = action_log.load_actions(api, actions.parse_job_id(job_id))
    if alert is not None:
        return dash.no_update, alert, tick  # transient: keep what is on screen
    return action_log.render_actions(log), None, tick


# A refresh answered: record when the samples it added were put on screen, after the
# next frame is painted (two animation frames later).
clientside_callback(
    """
    function(cursor) {
        const shown = cursor && cursor.shown ? cursor.shown.slice() : [];
        if (!shown.length) { return window.dash_clientside.no_update; }
        const newest = cursor.newest_t;
        window.requestAnimationFrame(() => window.requestAnimationFrame(() => {
            const at = Date.now();
            const log = (window.headroomRendered = window.headroomRendered || []);
            shown.forEach(t => log.push([t, at]));
            if (log.length > 5000) { log.splice(0, log.length - 5000); }
            window.dash_clientside.set_props("live-rendered", {children: newest + " " + at});
        }));
        return window.dash_clientside.no_update;
    }
    """,
    Output("live-rendered", "children"),
    Input("live-cursor", "data"),
)


# -- live tuning -------------------------------------------------------------------------


@callback(
    Output("live-config", "data"),
    Output("tune-config-alert", "children"),
    *polling.gate(CONFIG_POLL),
    # A State, not an Input: Dash holds back (and drops) the answers of a callback whose
    # input another callback is still computing, and the job list is re-read every 5 s.
    # A new choice is read at the next tick.
    State("live-job", "value"),
    State("live-config", "data"),
)
def _poll_config(tick: int | None, job_id: Any, current: JobConfig | None) -> tuple[Any, Any, Any]:
    with api_client() as api:
        loaded = tuning.load_config(api, actions.parse_job_id(job_id))
    if loaded.alert is not None:
        return dash.no_update, loaded.alert, tick  # keep what is on screen, say why
    if tuning.config_fingerprint(loaded.config) == tuning.config_fingerprint(current):
        return dash.no_update, None, tick
    return loaded.config, None, tick


@callback(Output("tune-manager", "options"), Input("live-managers", "data"))
def _manager_choices(managers: list[Manager] | None) -> list[dict[str, str]]:
    return manager_options(managers or [])


@callback(
    Output("tune-status", "children"),
    Output("tune-versions", "children"),
    Input("live-config", "data"),
)
def _show_config(config: JobConfig | None) -> tuple[Component, Component]:
    return tuning.render_status(config), tuning.render_versions(config)


_FORM_FIELDS = tuning.TUNE_FIELDS
_MARKABLE = tuple(f for f in _FORM_FIELDS if f != "recommend_only")


@callback(
    output={
        "class_options": Output("tune-class", "options"),
        "class_value": Output("tune-class", "value"),
        "values": {f: Output(f"tune-{f}", "value") for f in _FORM_FIELDS},
        "loaded": Output("tune-loaded", "data"),
    },
    inputs={
        "config": Input("live-config", "data"),
        "class_name": Input("tune-class", "value"),
        "loaded": State("tune-loaded", "data"),
    },
)
def _prefill(
    config: JobConfig | None, class_name: str | None, loaded: list[Any] | None
) -> dict[str, Any]:
    chosen = tuning.pick_class(config, class_name)
    key = tuning.prefill_key(config, chosen)
    if config is None or key == loaded:
        raise PreventUpdate
    values = tuning.form_values(config, chosen)
    return {
        "class_options": [{"label": name, "value": name} for name in tuning.class_names(config)],
        "class_value": chosen,
        "values": {f: values.get(f) for f in _FORM_FIELDS},
        "loaded": key,
    }


@callback(
    output={
        "invalid": {f: Output(f"tune-{f}", "invalid") for f in _MARKABLE},
        "feedback": {f: Output(f"tune-{f}-feedback", "children") for f in _FORM_FIELDS},
        "alert": Output("tune-alert", "children"),
        "modal": Output("tune-modal", "is_open"),
        "modal_body": Output("tune-modal-body", "children"),
        "plan": Output("tune-plan", "data"),
        "config": Output("live-config", "data", allow_duplicate=True),
    },
    inputs={
        "review": Input("tune-review", "n_clicks"),
        "confirm": Input("tune-confirm", "n_clicks"),
        "cancel": Input("tune-cancel", "n_clicks"),
        "values": {f: State(f"tune-{f}", "value") for f in _FORM_FIELDS},
        "class_name": State("tune-class", "value"),
        "config": State("live-config", "data"),
        "plan": State("tune-plan", "data"),
        "job_id": State("live-job", "value"),
    },
    prevent_initial_call=True,
)
def _tune(
    review: int | None,
    confirm: int | None,
    cancel: int | None,
    values: dict[str, Any],
    class_name: str | None,
    config: JobConfig | None,
    plan: dict[str, Any] | None,
    job_id: Any,
) -> dict[str, Any]:
    clean: dict[str, Any] = {
        "invalid": {f: False for f in _MARKABLE},
        "feedback": {f: None for f in _FORM_FIELDS},
        "alert": None,
        "modal": False,
        "modal_body": dash.no_update,
        "plan": None,
        "config": dash.no_update,
    }
    trigger = ctx.triggered_id
    if trigger == "tune-cancel":
        return {**clean, "alert": dash.no_update}
    if trigger == "tune-review":
        if config is None:
            raise PreventUpdate
        change = tuning.plan_change(config, class_name, values)
        if change.feedback_by_field:
            return _marked(clean, change.feedback_by_field)
        if not change.body:
            return {
                **clean,
                "alert": dbc.Alert(
                    "Nothing to change: the form shows the values in force.",
                    color="secondary",
                    class_name="small py-2",
                ),
            }
        return {
            **clean,
            "modal": True,
            "modal_body": [
                tuning.render_changes(change.changes),
                *_before_confirming(change.body, job_id),
            ],
            "plan": change.body,
        }
    parsed_job = actions.parse_job_id(job_id)
    if trigger != "tune-confirm" or not plan or parsed_job is None:
        raise PreventUpdate
    with api_client() as api:
        outcome = tuning.apply_change(api, parsed_job, plan)
    result = _marked(clean, outcome.feedback_by_field)
    result["alert"] = outcome.alert
    if outcome.config is not None:
        result["config"] = outcome.config
    return result


def _before_confirming(body: dict[str, Any], job_id: Any) -> list[Component | None]:
    """What the review shows under the change: a warning for a delay target below the
    class's last measured floor, and the what-if prediction."""
    parsed_job = actions.parse_job_id(job_id)
    if parsed_job is None:
        return []
    targets = [n for n, c in (body.get("classes") or {}).items() if "delay_target_s" in c]
    with api_client() as api:
        try:
            floors = {n: tuning.last_floor(api, parsed_job, n) for n in targets}
            warning = tuning.floor_warning(body, floors)
        except ApiError:
            warning = None  # the review still shows the change; the API judges it on confirm
        return [warning, tuning.prediction(api, parsed_job, body)]


def _marked(result: dict[str, Any], feedback: dict[str, str]) -> dict[str, Any]:
    return {
        **result,
        "invalid": {f: f in feedback for f in _MARKABLE},
        "feedback": {f: feedback.get(f) for f in _FORM_FIELDS},
    }

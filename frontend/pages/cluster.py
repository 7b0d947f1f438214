"""Cluster page (``/cluster``): the cluster coordinator's allocation of each coordinated
master, over time, and its log; the hand-offs of classes between jobs, and a form to move
a class; refreshed every few seconds."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, html
from dash.development.base_component import Component

from frontend import polling
from frontend.actions import cluster as actions
from frontend.components import labelled_field
from frontend.context import api_client

dash.register_page(  # type: ignore[no-untyped-call]  # unannotated in dash
    __name__, path="/cluster", name="Cluster", title="headroom · cluster"
)

POLL = "cluster-poll"
REFRESH_MS = 5_000


def layout(**_query: str) -> Component:
    return html.Div(
        [
            html.H2("Cluster"),
            html.P(
                "The cluster coordinator divides each coordinated master's executors among "
                "its running elastic jobs so that a higher-priority class anywhere is served "
                "before a lower one anywhere; each job keeps its own DILoS inside what it "
                "may hold.",
                className="text-muted",
            ),
            *polling.components(POLL, REFRESH_MS),
            html.Div(id="cluster-sections"),
            html.H3("Hand-offs", className="h4 mt-4"),
            html.P(
                "Move a class from the job computing it to a running job that holds it in "
                "standby (start that job with the class in Standby classes, on Redis "
                "streams). The class's event time is split at the next boundary of its "
                "windows both jobs can make: the origin computes the tuples before it, the "
                "target those from it on, and no state moves.",
                className="text-muted",
            ),
            _move_form(),
            html.Div(id="handoff-alert", className="mt-2"),
            html.Div(id="handoff-list", className="mt-3"),
        ]
    )


def _move_form() -> dbc.Form:
    fields = [
        ("class_name", "Class", dbc.Input(id="handoff-class_name", type="text")),
        ("origin_job_id", "From job", dbc.Input(id="handoff-origin_job_id", type="number")),
        ("target_job_id", "To job", dbc.Input(id="handoff-target_job_id", type="number")),
    ]
    return dbc.Form(
        dbc.Row(
            [
                *[labelled_field("handoff", f, label, c, md=3) for f, label, c in fields],
                dbc.Col(
                    dbc.Button("Move", id="handoff-submit", type="submit", color="primary"),
                    md=3,
                    class_name="d-flex align-items-end",
                ),
            ],
            class_name="g-3",
        ),
        id="handoff-form",
    )


@callback(
    dash.Output("cluster-sections", "children"),
    dash.Output("handoff-list", "children"),
    *polling.gate(POLL),
)
def _load(tick: int) -> tuple[list[Component], Component, Any]:
    with api_client() as api:
        return actions.load_clusters(api), actions.load_handoffs(api), tick


@callback(
    Output("handoff-alert", "children"),
    {f: Output(f"handoff-{f}-feedback", "children") for f in actions.HANDOFF_FIELDS},
    {f: Output(f"handoff-{f}", "invalid") for f in actions.HANDOFF_FIELDS},
    Input("handoff-form", "n_submit"),
    {f: State(f"handoff-{f}", "value") for f in actions.HANDOFF_FIELDS},
    prevent_initial_call=True,
)
def _move(
    _n: int | None, values: dict[str, Any]
) -> tuple[Component | None, dict[str, str | None], dict[str, bool]]:
    with api_client() as api:
        alert, by_field = actions.move_class(api, values)
    return (
        alert,
        {f: by_field.get(f) for f in actions.HANDOFF_FIELDS},
        {f: f in by_field for f in actions.HANDOFF_FIELDS},
    )

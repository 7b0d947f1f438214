"""Cluster page (``/cluster``): the cluster coordinator's allocation of each coordinated
master, over time, and its log; refreshed every few seconds."""

from __future__ import annotations

from typing import Any

import dash
from dash import callback, html
from dash.development.base_component import Component

from frontend import polling
from frontend.actions import cluster as actions
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
        ]
    )


@callback(
    dash.Output("cluster-sections", "children"),
    *polling.gate(POLL),
)
def _load(tick: int) -> tuple[list[Component], Any]:
    with api_client() as api:
        return actions.load_clusters(api), tick

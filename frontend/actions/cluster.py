"""Cluster page: each coordinated master's allocation in force, the allocation over time
(one step line per job, from the coordinator's log) and the log itself (when, why, each
job's executors before and after); the hand-offs of classes between jobs and the form
that asks for one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dash_bootstrap_components as dbc
import plotly.graph_objects as go
from dash import dcc, html
from dash.development.base_component import Component

from frontend.api import ApiClient, ApiError, error_text
from frontend.api_types import ClusterRead, HandoffCreate, HandoffRead, ReallocationRead
from frontend.components import error_alert, success_alert
from frontend.figures import epoch_to_utc

SHOWN = 200
"""The newest changes of allocation the page reads per master."""


def load_clusters(api: ApiClient) -> list[Component]:
    """A section per coordinated master, or an alert."""
    try:
        clusters = api.clusters()["clusters"]
        logs = [api.reallocations(c["master"], SHOWN)["reallocations"] for c in clusters]
    except ApiError as err:
        return [error_alert(f"Could not read the cluster coordinator: {err.message}")]
    if not clusters:
        return [
            html.P(
                "No coordinated master: list a standalone master with its executors in "
                "HEADROOM_CLUSTER_EXECUTORS (e.g. spark://spark-master:7077=8) and its "
                "elastic jobs share it by priority.",
                className="text-muted",
                id="cluster-none",
            )
        ]
    return [_section(c, log) for c, log in zip(clusters, logs, strict=True)]


def _section(cluster: ClusterRead, log: Sequence[ReallocationRead]) -> Component:
    ran = cluster["round_at_s"]
    given = ", ".join(f"job {j}: {n}" for j, n in cluster["allocation"].items()) or "none yet"
    return html.Div(
        [
            html.H4(cluster["master"], className="h5"),
            html.P(
                f"{cluster['executors']} executors; allocation in force: {given}; last round "
                + ("never" if ran is None else epoch_to_utc(ran).strftime("%H:%M:%S UTC")),
                className="cluster-allocation",
            ),
            error_alert(cluster["problem"]) if cluster["problem"] else None,
            dcc.Graph(figure=allocation_figure(cluster, log), config={"displayModeBar": False}),
            _log_table(log),
        ],
        className="mb-4 cluster-section",
    )


def allocation_figure(cluster: ClusterRead, log: Sequence[ReallocationRead]) -> go.Figure:
    """Each job's allocation over time: a step line from each change to the last round."""
    fig = go.Figure()
    end = cluster["round_at_s"]
    jobs = sorted({j for change in log for j in change["after"]}, key=int)
    for job in jobs:
        points = [(c["at_s"], c["after"].get(job, 0)) for c in log]
        if end is not None:
            points.append((end, points[-1][1]))
        fig.add_trace(
            go.Scatter(
                x=[epoch_to_utc(t) for t, _ in points],
                y=[n for _, n in points],
                mode="lines+markers",
                line={"shape": "hv"},
                name=f"job {job}",
            )
        )
    fig.update_layout(
        title="Executors each job may hold",
        yaxis={"title": "executors", "rangemode": "tozero", "dtick": 1},
        height=280,
        margin={"l": 50, "r": 20, "t": 40, "b": 30},
    )
    return fig


def _log_table(log: Sequence[ReallocationRead]) -> Component:
    if not log:
        return html.P("No change of allocation yet.", className="text-muted small")
    rows = [
        html.Tr(
            [
                html.Td(epoch_to_utc(c["at_s"]).strftime("%H:%M:%S")),
                html.Td(c["why"]),
                html.Td(_moves(c)),
            ]
        )
        for c in reversed(log)
    ]
    table: Component = dbc.Table(
        [html.Thead(html.Tr([html.Th(h) for h in ("time", "why", "executors")])), html.Tbody(rows)],
        size="sm",
        striped=True,
        class_name="small cluster-log",
    )
    return table


def _moves(change: ReallocationRead) -> str:
    jobs = sorted(set(change["before"]) | set(change["after"]), key=int)
    return ", ".join(
        f"job {j} {change['before'].get(j, '-')} -> {change['after'].get(j, '-')}" for j in jobs
    )


HANDOFFS_SHOWN = 20
"""The newest hand-offs the page lists."""
HANDOFF_FIELDS = ("class_name", "origin_job_id", "target_job_id")
"""The move form's fields, as the API names them (ids ``handoff-<field>``)."""


def load_handoffs(api: ApiClient) -> Component:
    """The newest hand-offs, with each one's progress against the server's clock."""
    try:
        read = api.handoffs(HANDOFFS_SHOWN)
    except ApiError as err:
        return error_alert(f"Could not read the hand-offs: {err.message}")
    if not read["handoffs"]:
        return html.P("No class has moved between jobs yet.", className="text-muted small")
    rows = [
        html.Tr(
            [
                html.Td(h["id"]),
                html.Td(h["class_name"]),
                html.Td(f"job {h['origin_job_id']} -> job {h['target_job_id']}"),
                html.Td(h["state"], className=f"handoff-{h['state']}"),
                html.Td(_progress(h, read["now_s"])),
                html.Td(h["reason"] or ""),
            ]
        )
        for h in read["handoffs"]
    ]
    headers = ("#", "class", "move", "state", "progress", "why it failed")
    table: Component = dbc.Table(
        [html.Thead(html.Tr([html.Th(h) for h in headers])), html.Tbody(rows)],
        size="sm",
        striped=True,
        class_name="small handoff-log",
    )
    return table


def _progress(handoff: HandoffRead, now_s: float) -> str:
    """Where the hand-off stands, in words, against ``now_s``."""
    switch = epoch_to_utc(handoff["switch_s"]).strftime("%H:%M:%S")
    if handoff["state"] == "planned":
        return (
            f"switch at {switch} (in {handoff['switch_s'] - now_s:.0f} s); both jobs apply "
            f"their ranges within {max(0.0, handoff['deadline_s'] - now_s):.0f} s"
        )
    if handoff["state"] == "switching":
        return (
            f"switched at {switch}; the origin finishes its late tuples "
            f"({max(0.0, handoff['done_after_s'] - now_s):.0f} s left)"
        )
    ended = handoff["ended_at_s"]
    when = "" if ended is None else epoch_to_utc(ended).strftime(" %H:%M:%S")
    return f"switch {switch}; ended{when}"


def move_class(
    api: ApiClient, values: Mapping[str, Any]
) -> tuple[Component | None, dict[str, str]]:
    """Ask for a hand-off from the move form's ``values``: an alert, and the API's
    message for each form field it names."""
    missing = {f: "Required." for f in HANDOFF_FIELDS if values.get(f) in (None, "")}
    if missing:
        return None, missing
    body: HandoffCreate = {
        "class_name": str(values["class_name"]).strip(),
        "origin_job_id": int(values["origin_job_id"] or 0),
        "target_job_id": int(values["target_job_id"] or 0),
    }
    try:
        made = api.create_handoff(body)
    except ApiError as err:
        by_field = {k: v for k, v in err.field_errors.items() if k in HANDOFF_FIELDS}
        return (
            None if by_field else error_alert(f"Could not move it: {error_text(err)}")
        ), by_field
    switch = epoch_to_utc(made["switch_s"]).strftime("%H:%M:%S UTC")
    return success_alert(
        f"Hand-off {made['id']}: {made['class_name']} moves from job {made['origin_job_id']} "
        f"to job {made['target_job_id']} at {switch}."
    ), {}

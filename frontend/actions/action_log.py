"""The live page's control-action log: what the job changed (resizes, shedding changes
worth noting), why, the capacity and shed fraction before and after, and the verdict once
the periods after it are measured. The words come from the contract's own helpers, so the
dashboard, the CLI and the results file say the same thing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import dash_bootstrap_components as dbc
import httpx
from dash import html
from dash.development.base_component import Component

from frontend.api import ActionLog, ApiClient, ApiError
from frontend.components import error_alert
from spark_runner.contract import actions as contract

SHOWN = 50
"""The newest actions the table shows (the API has them all)."""
OUTCOME_COLORS = {"improved": "success", "unchanged": "secondary", "worse": "danger"}
KIND_LABELS = {
    "scale_out": "scale out",
    "scale_in": "scale in",
    "shed_more": "shed more",
    "shed_less": "shed less",
    "allocate": "allocation (cluster)",
    "move": "class moved (hand-off)",
}


def load_actions(api: ApiClient, job_id: int | None) -> tuple[ActionLog | None, Component | None]:
    """The job's newest actions, or an alert (none for a job that does not exist)."""
    if job_id is None:
        return None, None
    try:
        return api.job_actions(job_id, SHOWN), None
    except ApiError as err:
        if err.status_code == httpx.codes.NOT_FOUND:
            return None, None
        return None, error_alert(f"Could not read the control actions: {err.message}")


def render_actions(log: ActionLog | None) -> Component:
    """The log as a table, newest first."""
    if log is None or not log["actions"]:
        empty: Component = html.P(
            "No control action yet: the job has not resized its executors or changed a "
            "class's shedding by a step worth noting.",
            className="text-muted small mb-0",
        )
        return empty
    actions = [contract.ControlAction.model_validate(a) for a in log["actions"]]
    table: Component = dbc.Table(
        [
            html.Thead(
                html.Tr([html.Th(h) for h in ("time", "action", "trigger", "effect", "verdict")])
            ),
            html.Tbody([_row(a) for a in reversed(actions)]),
        ],
        id="live-actions-table",
        size="sm",
        striped=True,
        class_name="small mb-0",
    )
    return table


def _row(action: contract.ControlAction) -> Component:
    who = f" {action.class_name}" if action.class_name else ""
    row: Component = html.Tr(
        [
            html.Td(datetime.fromtimestamp(action.at_s, UTC).strftime("%H:%M:%S")),
            html.Td(f"{KIND_LABELS[action.kind]}{who}"),
            html.Td(contract.trigger_text(action)),
            html.Td(contract.effect_text(action)),
            html.Td(_verdict(action)),
        ],
        className=f"live-action {action.kind}",
    )
    return row


def _verdict(action: contract.ControlAction) -> Sequence[Component | str]:
    verdict = action.verdict
    if verdict is None:
        return [dbc.Badge("pending", color="light", text_color="dark")]
    words = contract.verdict_text(verdict).split(": ", 1)[1]
    return [dbc.Badge(verdict.outcome, color=OUTCOME_COLORS[verdict.outcome]), " ", words]

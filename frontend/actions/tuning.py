"""Live tuning panel: change a running job's QoS settings, confirm, watch it apply.

An operator picks a class, edits its delay target, priority, thresholds τ0..τ3, manager
and manager parameters (and the job-wide recommend-only switch, policy and
redistribution period), reviews the difference, and confirms. The dashboard sends only
what differs from the job's newest configuration, as ``PATCH /jobs/{id}/config``; the
API stores it as a new version (validated with the controller's own rules) and the job
acknowledges it once applied, so the panel shows each version as pending, then applied.

As everywhere, the API is the judge: a rejected value comes back as a 422 whose
location (``classes.ads.tau2``) names the field the message is shown under.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dash_bootstrap_components as dbc
import httpx
from dash import html
from dash.development.base_component import Component

from frontend.api import (
    ApiClient,
    ApiError,
    ClassPrediction,
    ConfigVersion,
    JobConfig,
    LiveConfig,
    MetricsQuery,
    ParamValue,
    TrackRecord,
    detail_text,
    error_text,
    form_field,
)
from frontend.components import (
    error_alert,
    form_number,
    format_number,
    format_timestamp,
    is_blank,
    success_alert,
)
from frontend.managers import format_params, parse_params
from spark_runner.core.class_settings import CLASS_SETTINGS, MANAGER_SETTINGS, ClassSetting
from spark_runner.core.thresholds import TAUS


def setting_label(setting: ClassSetting) -> str:
    """A class setting's label as the declaration gives it, with its unit: "Delay target
    (s)"."""
    return f"{setting.label} ({setting.unit})" if setting.unit else setting.label


NUMBER_FIELDS: tuple[str, ...] = ("delay_target_s", "priority", *TAUS)
"""The class settings the panel tunes as numbers (the sharing limits are the classes
page's)."""
CLASS_FIELDS: tuple[str, ...] = (*NUMBER_FIELDS, *MANAGER_SETTINGS)
FLAG_FIELDS: tuple[str, ...] = tuple(s.name for s in CLASS_SETTINGS if s.type is bool)
"""A class's yes/no settings (check boxes: they take no invalid mark or feedback)."""
JOB_FIELDS: tuple[str, ...] = ("recommend_only", "policy", "redistribution_every")
ELASTIC_FIELDS: tuple[str, ...] = ("hold_out_s", "hold_in_s", "max_executors")
"""The elastic settings the panel changes (an elastic job's; the API takes a few more)."""
TUNE_FIELDS: tuple[str, ...] = (*CLASS_FIELDS, *JOB_FIELDS, *ELASTIC_FIELDS)
LABELS: dict[str, str] = {
    **{s.name: setting_label(s).lower() for s in CLASS_SETTINGS},
    "recommend_only": "recommend only",
    "policy": "policy",
    "redistribution_every": "redistribute every (periods)",
    "hold_out_s": "scale-out hold (s)",
    "hold_in_s": "scale-in hold (s)",
    "max_executors": "max executors",
}
VERSIONS_SHOWN = 8


@dataclass(frozen=True)
class ConfigLoad:
    """``config`` is ``None`` when it could not be read (``alert`` says why)."""

    config: JobConfig | None
    alert: Component | None = None


@dataclass(frozen=True)
class ChangePlan:
    """What the form would change: the ``PATCH`` body, one ``(what, old, new)`` line per
    changed value, and a message per field the dashboard itself cannot send."""

    body: dict[str, Any] = field(default_factory=dict)
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    feedback_by_field: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ApplyOutcome:
    """``config`` (the API's answer) on success; else ``feedback_by_field`` and/or
    ``alert``."""

    config: JobConfig | None = None
    alert: Component | None = None
    feedback_by_field: dict[str, str] = field(default_factory=dict)


def load_config(api: ApiClient, job_id: int | None) -> ConfigLoad:
    if job_id is None:
        return ConfigLoad(None)
    try:
        return ConfigLoad(api.job_config(job_id))
    except ApiError as err:
        if err.status_code == httpx.codes.NOT_FOUND:
            return ConfigLoad(None)  # no such job, or one started before live tuning
        return ConfigLoad(
            None, error_alert(f"Could not read the live configuration: {err.message}")
        )


def config_fingerprint(config: JobConfig | None) -> str | None:
    """Changes exactly when anything the panel shows changes."""
    if config is None:
        return None
    data = json.dumps(config, sort_keys=True, default=str)
    return hashlib.sha256(data.encode()).hexdigest()


def class_names(config: JobConfig | None) -> list[str]:
    return list(config["config"]["classes"]) if config is not None else []


def pick_class(config: JobConfig | None, current: str | None) -> str | None:
    """The class on screen if the job still has it, else the job's first class."""
    names = class_names(config)
    if current in names:
        return current
    return names[0] if names else None


def form_values(config: JobConfig, class_name: str | None) -> dict[str, Any]:
    """The form prefilled with the newest configuration (``class_name``'s fields and the
    job-wide ones)."""
    live = config["config"]
    values: dict[str, Any] = {
        "recommend_only": live["recommend_only"],
        "policy": live["policy"],
        "redistribution_every": live["redistribution_every"],
    }
    elastic = live.get("elastic")
    for key in ELASTIC_FIELDS:
        values[key] = elastic.get(key) if elastic is not None else None
    cls = live["classes"].get(class_name or "")
    for key in CLASS_FIELDS:
        values[key] = None
    if cls is not None:
        for key in NUMBER_FIELDS:
            values[key] = cls[key]  # type: ignore[literal-required]
        values["manager"] = cls["manager"]
        values["manager_params"] = format_params(cls["manager_params"])
    return values


def prefill_key(config: JobConfig | None, class_name: str | None) -> list[Any] | None:
    """The form is prefilled again when this changes: another job or class, or a new
    version (so the form shows what is now in force, not a stale edit)."""
    if config is None:
        return None
    return [config["job_id"], class_name, config["latest_version"]]


def plan_change(config: JobConfig, class_name: str | None, values: Mapping[str, Any]) -> ChangePlan:
    """Compare the form with the newest configuration; the body holds only differences.

    A changed manager always takes the parameters written for it: left as they were
    (the old manager's), it starts from its own defaults instead, since another kind
    does not know the old one's parameters.
    """
    live = config["config"]
    body: dict[str, Any] = {}
    changes: list[tuple[str, str, str]] = []
    feedback: dict[str, str] = {}
    cls = live["classes"].get(class_name or "")
    if cls is not None and class_name is not None:
        class_body, changed = class_changes(class_name, cls, values, feedback)
        if class_body:
            body["classes"] = {class_name: class_body}
            changes.extend(changed)
    recommend_only = bool(values.get("recommend_only"))
    if recommend_only != live["recommend_only"]:
        body["recommend_only"] = recommend_only
        changes.append(("recommend only", _on_off(live["recommend_only"]), _on_off(recommend_only)))
    policy = values.get("policy")
    if isinstance(policy, str) and policy and policy != live["policy"]:
        body["policy"] = policy
        changes.append(("policy", live["policy"], policy))
    every = form_number(values.get("redistribution_every"))
    if every is None and not is_blank(values.get("redistribution_every")):
        feedback["redistribution_every"] = "Enter a whole number of control periods."
    elif every is not None and every != live["redistribution_every"]:
        body["redistribution_every"] = int(every) if every.is_integer() else every
        changes.append(
            (
                LABELS["redistribution_every"],
                format_number(live["redistribution_every"]),
                format_number(every),
            )
        )
    elastic_body = elastic_changes(live.get("elastic"), values, feedback, changes)
    if elastic_body:
        body["elastic"] = elastic_body
    if feedback:
        return ChangePlan(feedback_by_field=feedback)
    return ChangePlan(body=body, changes=changes)


def elastic_changes(
    elastic: Mapping[str, Any] | None,
    values: Mapping[str, Any],
    feedback: dict[str, str],
    changes: list[tuple[str, str, str]],
) -> dict[str, Any]:
    """The elastic settings the form changes (``elastic`` the job's, None: it does not
    scale), adding their ``(what, old, new)`` lines and a message per bad value."""
    body: dict[str, Any] = {}
    for key in ELASTIC_FIELDS:
        raw = values.get(key)
        if is_blank(raw):
            continue
        number = form_number(raw)
        if elastic is None:
            feedback[key] = "This job does not scale its executors (no control.elastic)."
        elif number is None:
            feedback[key] = f"Enter a number for {LABELS[key]}, or leave it as it was."
        elif number != float(elastic[key]):
            body[key] = int(number) if number.is_integer() else number
            changes.append((LABELS[key], format_number(float(elastic[key])), format_number(number)))
    return body


def class_changes(
    name: str,
    cls: Mapping[str, Any],
    values: Mapping[str, Any],
    feedback: dict[str, str],
    number_fields: Sequence[str] = NUMBER_FIELDS,
) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The fields of class ``name`` that the form ``values`` change, as a partial body
    and ``(what, old, new)`` lines; a message in ``feedback`` for each value that is not
    a number or parameters that are not ``name=value``. An empty number field keeps its
    value. ``cls`` is the class as it is (a live configuration's or a stored class)."""
    body: dict[str, Any] = {}
    changes: list[tuple[str, str, str]] = []
    for key in number_fields:
        raw = values.get(key)
        if is_blank(raw):
            continue  # left empty: keep the value in force
        number = form_number(raw)
        old = float(cls[key])
        if number is None:
            feedback[key] = f"Enter a number for {LABELS[key]}, or leave it as it was ({old:g})."
        elif number != old:
            body[key] = number
            changes.append((f"{name} · {LABELS[key]}", format_number(old), format_number(number)))
    for key in FLAG_FIELDS:
        flag = values.get(key)
        if isinstance(flag, bool) and key in cls and flag != cls[key]:
            body[key] = flag
            changes.append((f"{name} · {LABELS[key]}", _yes_no(cls[key]), _yes_no(flag)))
    params, params_error = parse_params(values.get("manager_params"))
    if params_error:
        feedback["manager_params"] = params_error
    manager = values.get("manager")
    new_manager = manager if isinstance(manager, str) and manager else cls["manager"]
    if new_manager != cls["manager"]:
        body["manager"] = new_manager
        changes.append((f"{name} · manager", cls["manager"], new_manager))
        if params == cls["manager_params"]:
            params = {}
        body["manager_params"] = params
        changes.append(
            (
                f"{name} · manager parameters",
                _params_text(cls["manager_params"]),
                _params_text(params),
            )
        )
    elif not params_error and params != cls["manager_params"]:
        body["manager_params"] = params
        changes.append(
            (
                f"{name} · manager parameters",
                _params_text(cls["manager_params"]),
                _params_text(params),
            )
        )
    return body, changes


def _yes_no(flag: object) -> str:
    return "yes" if flag else "no"


FLOOR_WINDOW_S = 60.0
"""How far back the review looks for the class's last measured floor."""


def last_floor(api: ApiClient, job_id: int, class_name: str) -> float | None:
    """The floor the job measured for ``class_name`` most recently (None: none within
    ``FLOOR_WINDOW_S``, or the engine does not measure it)."""
    query: MetricsQuery = {"class_name": class_name, "last_s": FLOOR_WINDOW_S}
    samples = api.job_metrics(job_id, query=query)["samples"]
    floors = [s["floor_s"] for s in samples if s.get("floor_s") is not None]
    return floors[-1] if floors else None


def floor_warning(body: Mapping[str, Any], floors: Mapping[str, float | None]) -> Component | None:
    """A warning for every class whose new delay target is below its last measured floor:
    the floor, the target and the violation to expect (at least their difference for the
    slowest tuples); the class will be flagged infeasible and shed only its excess."""
    lines = []
    for name, change in (body.get("classes") or {}).items():
        target = change.get("delay_target_s")
        floor = floors.get(name)
        if target is None or floor is None or float(target) >= floor:
            continue
        lines.append(
            html.Li(
                f"{name}: the new delay target {format_number(float(target))} s is below the "
                f"floor last measured, {format_number(floor)} s. Expect a violation of at "
                f"least {format_number(floor - float(target))} s for the slowest tuples; "
                "the class will be flagged infeasible and shed only what its capacity "
                "cannot take."
            )
        )
    if not lines:
        return None
    alert: Component = dbc.Alert(
        [html.Strong("Target below the floor"), html.Ul(lines, className="mb-0")],
        color="warning",
        class_name="small py-2 mt-2",
        id="tune-floor-warning",
    )
    return alert


def prediction(api: ApiClient, job_id: int, body: Mapping[str, Any]) -> Component:
    """The review's what-if table: per class, the mean violation and loss the job
    measured over its last minutes, and those the simulator predicts replaying them under
    the configuration in force and under the change (or why it cannot)."""
    try:
        preview = api.preview_job_config(job_id, body)
    except ApiError as err:
        return html.P(
            f"No prediction: {error_text(err)}",
            className="small text-muted mt-2",
            id="tune-prediction",
        )

    def cell(p: ClassPrediction) -> str:
        violation = p["mean_violation_s"]
        loss = p["loss_fraction"]
        return (
            f"{'—' if violation is None else format_number(violation)} s · "
            f"{'—' if loss is None else f'{loss:.1%}'}"
        )

    rows = [
        html.Tr(
            [
                html.Td(name),
                html.Td(cell(c["measured"])),
                html.Td(cell(c["current"])),
                html.Td(cell(c["proposed"])),
            ]
        )
        for name, c in preview["classes"].items()
    ]
    heads = ("Class", "Measured", "Predicted now", "Predicted with the change")
    table: Component = html.Div(
        [
            html.P(
                f"What if: the job's last {format_number(preview['window_s'])} s replayed "
                "through the simulator (mean violation · loss per class).",
                className="small text-muted mt-2 mb-1",
            ),
            dbc.Table(
                [html.Thead(html.Tr([html.Th(h) for h in heads])), html.Tbody(rows)],
                size="sm",
                class_name="w-auto mb-0 small",
            ),
            html.P(
                track_record_text(preview["kind"], preview["track_record"]),
                className="small text-muted mb-0",
                id="tune-track-record",
            ),
        ],
        id="tune-prediction",
    )
    return table


def track_record_text(kind: str, record: TrackRecord | None) -> str:
    """How far off the predictions of this kind of change were, once checked against what
    the changes applied as previewed then did."""
    what = kind.replace(",", ", ")
    if not what:
        return "The change changes nothing in force."
    if record is None:
        return f"No prediction of a change to {what} has been checked against what followed yet."
    parts = []
    if record["violation_error_s"] is not None:
        parts.append(f"{format_number(record['violation_error_s'])} s of mean violation")
    if record["loss_error"] is not None:
        parts.append(f"{100 * record['loss_error']:.1f} points of loss")
    changes = record["changes"]
    return (
        f"Predictions of changes to {what} were off by {' and '.join(parts) or 'nothing measured'} "
        f"per class on average, over {changes} applied change{'s' if changes != 1 else ''}."
    )


def apply_change(api: ApiClient, job_id: int, body: Mapping[str, Any]) -> ApplyOutcome:
    """Store the change as a new version; every refusal mapped to a field or an alert."""
    try:
        config = api.change_job_config(job_id, body)
    except ApiError as err:
        if err.status_code == httpx.codes.CONFLICT:
            # Nothing changed, or the job has stopped: the API's sentence says which.
            return ApplyOutcome(alert=error_alert(f"Not applied: {detail_text(err.detail)}"))
        by_field = err.field_errors
        on_form: dict[str, str] = {}
        elsewhere: list[str] = []
        for key, message in by_field.items():
            target = form_field(key, TUNE_FIELDS)
            if target is None:
                elsewhere.append(message if key == "body" else f"{key}: {message}")
            else:
                on_form[target] = f"{on_form[target]}; {message}" if target in on_form else message
        if by_field and not elsewhere:
            return ApplyOutcome(
                feedback_by_field=on_form,
                alert=error_alert("The API refused the change; see the marked fields."),
            )
        text = "; ".join(elsewhere) if elsewhere else error_text(err)
        return ApplyOutcome(feedback_by_field=on_form, alert=error_alert(f"Not applied: {text}"))
    version = config["latest_version"]
    pending = version in pending_versions(config)
    state = "pending until the job applies it" if pending else "applied"
    return ApplyOutcome(
        config=config,
        alert=success_alert(f"Stored configuration version {version}: {state}."),
    )


# -- what the panel shows ------------------------------------------------------------------


def render_changes(changes: Sequence[tuple[str, str, str]]) -> Component:
    """The confirmation list: one "what: old → new" line per change."""
    return html.Ul(
        [
            html.Li([html.Span(what, className="fw-semibold"), f": {old} → {new}"])
            for what, old, new in changes
        ],
        id="tune-changes",
        className="mb-0",
    )


def in_force(config: JobConfig) -> LiveConfig:
    """The configuration the job runs with (the API's ``in_force``: the newest version it
    acknowledged, or its launch configuration until it acknowledges one)."""
    return copy.deepcopy(config["in_force"]["config"])


def pending_versions(config: JobConfig) -> list[int]:
    """Versions the job has still to apply. Version 0 is the launch configuration, which
    the job starts with (it is in its snapshot), so it is never waited for."""
    return [v for v in config["pending_versions"] if v > 0]


def render_status(config: JobConfig | None) -> Component:
    """One line: the version in force and what is still pending."""
    if config is None:
        text: Component = html.Span(
            "This job has no live configuration (it may have been started before live "
            "tuning existed).",
            className="text-muted",
        )
        return html.Div(text, id="tune-status-line")
    applied = config["applied_version"]
    parts: list[Component | str] = []
    if applied is None:
        parts.append("In force: version 0 (the launch configuration)")
    else:
        at = _applied_at(config["versions"], applied)
        parts.append(f"In force: version {applied}" + (f" (applied {at} UTC)" if at else ""))
    pending = pending_versions(config)
    parts.append(". ")
    if pending:
        parts.append(
            dbc.Badge(
                f"pending: version{'s' if len(pending) > 1 else ''} "
                + ", ".join(str(v) for v in pending),
                color="warning",
                text_color="dark",
                id="tune-pending",
            )
        )
    else:
        parts.append(dbc.Badge("up to date", color="success", id="tune-up-to-date"))
    return html.Div(parts, id="tune-status-line", className="small mb-2")


def render_versions(config: JobConfig | None) -> Component:
    """The newest versions: what changed, who changed it, when, pending or applied."""
    if config is None:
        return html.Div(id="tune-versions-table")
    rows = []
    for version in sorted(config["versions"], key=lambda v: v["version"], reverse=True)[
        :VERSIONS_SHOWN
    ]:
        applied_at = version["applied_at"]
        rows.append(
            html.Tr(
                [
                    html.Td(str(version["version"])),
                    html.Td(
                        [html.Div(line) for line in _change_lines(version)],
                        className="small",
                        style={"overflowWrap": "anywhere"},
                    ),
                    html.Td(version["created_by"] or "—", className="small"),
                    html.Td(
                        [
                            _version_badge(version),
                            html.Div(
                                format_timestamp(applied_at or version["created_at"])[-8:],
                                className="small text-muted",
                            ),
                        ]
                    ),
                ],
                id=f"tune-version-{version['version']}",
            )
        )
    table: Component = dbc.Table(
        [
            html.Thead(
                html.Tr(
                    [
                        html.Th("#", style={"width": "2.5rem"}),
                        html.Th("Changes"),
                        html.Th("By", style={"width": "4rem"}),
                        html.Th("Status", style={"width": "5.5rem"}),
                    ]
                )
            ),
            html.Tbody(rows),
        ],
        size="sm",
        class_name="mb-0",
        id="tune-versions-table",
        style={"tableLayout": "fixed", "width": "100%"},
    )
    return table


def _version_badge(version: ConfigVersion) -> Component:
    badge: Component
    if version["applied_at"]:
        badge = dbc.Badge("applied", color="success")
    elif version["version"] == 0:
        badge = dbc.Badge("at launch", color="secondary")
    else:
        badge = dbc.Badge("pending", color="warning", text_color="dark")
    return badge


def _change_lines(version: ConfigVersion) -> list[str]:
    """One line per change, ``fraud.tau2: 0.8 → 0.7`` (the ``classes.`` prefix left out)."""
    if not version["changes"]:
        return ["launch configuration"]
    return [
        f"{change['path'].removeprefix('classes.')}: "
        f"{_value_text(change['old'])} → {_value_text(change['new'])}"
        for change in version["changes"]
    ]


def _applied_at(versions: Sequence[ConfigVersion], number: int) -> str | None:
    for version in versions:
        if version["version"] == number and version["applied_at"]:
            return format_timestamp(version["applied_at"])[-8:]
    return None


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return _on_off(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return _params_text(value)
    return str(value)


def _params_text(params: Mapping[str, ParamValue]) -> str:
    return format_params(params) if params else "defaults"


def _on_off(value: bool) -> str:
    return "on" if value else "off"

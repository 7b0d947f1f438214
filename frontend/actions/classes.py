"""Classes page: list, create and delete query classes.

The API is the one judge of what a valid class is (threshold ordering, ranges, unique
names, a manager's parameters); this module only checks that the required fields were
filled in and that the manager parameters are written ``name=value``, then places each
message the API returns next to the field it names (``manager_params.headroom`` goes to
the manager parameters).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
from dash import html
from dash.development.base_component import Component

from frontend.actions.tuning import FLAG_FIELDS, class_changes, floor_warning, last_floor
from frontend.api import (
    ApiClient,
    ApiError,
    QueryClass,
    QueryClassCreate,
    detail_text,
    error_text,
    form_field,
)
from frontend.components import (
    data_table,
    deleted,
    edit_delete_buttons,
    error_alert,
    format_number,
    format_timestamp,
    loaded_table,
    no_rows_yet,
    success_alert,
)
from frontend.managers import format_params, parse_params
from spark_runner.core.class_settings import CLASS_SETTINGS, SETTINGS, ClassSetting
from spark_runner.core.thresholds import TAUS

EDIT_FIELDS: tuple[str, ...] = tuple(s.name for s in CLASS_SETTINGS if s.type is not bool)
"""The edit dialog's fields that take an invalid mark and a message."""
CLASS_FIELDS: tuple[str, ...] = ("name", *EDIT_FIELDS)
"""The create form's fields that take an invalid mark and a message."""
FORM_FIELDS: tuple[str, ...] = (*CLASS_FIELDS, *FLAG_FIELDS)
"""Every field of the create form (its check boxes too)."""
MISSING_MESSAGES: dict[str, str] = {
    "name": "Enter a name for the class, e.g. fraud.",
    "priority": "Enter a priority (a number).",
    "delay_target_s": "Enter a delay target in seconds (a number).",
}
DELETE_BUTTON_TYPE = "class-delete"
EDIT_BUTTON_TYPE = "class-edit"
TABLE_SETTINGS: tuple[ClassSetting, ...] = tuple(
    s for s in CLASS_SETTINGS if s.name != "manager_params"
)
"""The settings the classes table shows, a column each (the manager's parameters show
beside its name)."""
CLASS_TABLE_HEADS = (
    "ID",
    "Name",
    *(f"{s.label} ({s.unit})" if s.unit else s.label for s in TABLE_SETTINGS),
    "Updated (UTC)",
    "",
)
EDIT_FORM_FIELDS: tuple[str, ...] = (*EDIT_FIELDS, *FLAG_FIELDS)
"""Every field of the edit dialog (its check boxes too)."""
EDIT_NUMBER_FIELDS: tuple[str, ...] = tuple(s.name for s in CLASS_SETTINGS if s.type is float)
SHARING_FIELDS: tuple[str, ...] = tuple(
    name for name in EDIT_NUMBER_FIELDS if not SETTINGS[name].required and name not in TAUS
)
"""The optional numbers besides the thresholds (the sharing limits): the forms show them
after the manager."""


@dataclass(frozen=True)
class EditOutcome:
    """Result of saving the edit dialog: ``updated`` on success, else messages per field
    of ``EDIT_FIELDS`` and/or an alert; ``unchanged`` when nothing was changed."""

    feedback_by_field: dict[str, str] = field(default_factory=dict)
    alert: Component | None = None
    updated: QueryClass | None = None
    unchanged: bool = False
    confirm: dict[str, Any] | None = None  # {"class_id", "body"}: saved again, it goes through


@dataclass(frozen=True)
class SubmitOutcome:
    """Result of submitting the create form.

    ``feedback_by_field`` has a message for each field of ``CLASS_FIELDS`` that is
    wrong (absent means fine); ``alert`` is shown above the form; ``created`` is the new
    class on success.
    """

    feedback_by_field: dict[str, str] = field(default_factory=dict)
    alert: Component | None = None
    created: QueryClass | None = None


def build_create_body(values: Mapping[str, Any]) -> tuple[QueryClassCreate, dict[str, str]]:
    """Form values → request body, plus a message for each required field left empty
    (and for manager parameters that are not ``name=value``).

    Empty optional fields (and unticked boxes) are left out so the API applies its
    defaults.
    """
    name = values.get("name")
    name = name.strip() if isinstance(name, str) else None
    body: dict[str, Any] = {
        "name": name or None,
        "priority": _number(values.get("priority")),
        "delay_target_s": _number(values.get("delay_target_s")),
    }
    for key in (n for n in EDIT_NUMBER_FIELDS if not SETTINGS[n].required):
        value = _number(values.get(key))
        if value is not None:
            body[key] = value
    manager = values.get("manager")
    if isinstance(manager, str) and manager.strip():
        body["manager"] = manager.strip()
    body.update({key: True for key in FLAG_FIELDS if values.get(key) is True})
    params, params_error = parse_params(values.get("manager_params"))
    if params:
        body["manager_params"] = params
    missing = {key: message for key, message in MISSING_MESSAGES.items() if body[key] is None}
    if params_error:
        missing["manager_params"] = params_error
    return cast(QueryClassCreate, body), missing


def submit_class(api: ApiClient, values: Mapping[str, Any]) -> SubmitOutcome:
    """Create a class from the form values; map every failure to a field or an alert."""
    body, missing = build_create_body(values)
    if missing:
        return SubmitOutcome(feedback_by_field=missing)
    try:
        created = api.create_class(body)
    except ApiError as err:
        return _rejected(err)
    return SubmitOutcome(
        alert=success_alert(
            f"Created class {created['name']} (priority {format_number(created['priority'])}, "
            f"delay target {format_number(created['delay_target_s'])} s)."
        ),
        created=created,
    )


def _rejected(err: ApiError) -> SubmitOutcome:
    if err.status_code == httpx.codes.CONFLICT:
        return SubmitOutcome(feedback_by_field={"name": detail_text(err.detail)})
    by_field = err.field_errors
    if not by_field:
        return SubmitOutcome(alert=error_alert(f"Could not create the class: {error_text(err)}"))
    on_form: dict[str, str] = {}
    elsewhere: dict[str, str] = {}
    for key, msg in by_field.items():
        target = form_field(key, CLASS_FIELDS)
        if target is None:
            elsewhere[key] = msg
        else:
            on_form[target] = f"{on_form[target]}; {msg}" if target in on_form else msg
    alert = None
    if elsewhere:
        text = "; ".join(
            msg if key == "body" else f"{key}: {msg}" for key, msg in elsewhere.items()
        )
        alert = error_alert(f"The API rejected the class: {text}")
    return SubmitOutcome(feedback_by_field=on_form, alert=alert)


def load_edit_values(api: ApiClient, class_id: int) -> tuple[dict[str, Any], Component | None]:
    """The edit dialog's fields for class ``class_id`` (its stored values), or an alert."""
    try:
        cls = api.get_class(class_id)
    except ApiError as err:
        return {}, error_alert(f"Could not read class #{class_id}: {error_text(err)}")
    values: dict[str, Any] = {key: cls.get(key) for key in EDIT_FORM_FIELDS}
    values["manager_params"] = format_params(cls["manager_params"])
    return values, None


def save_edit(
    api: ApiClient,
    class_id: int,
    values: Mapping[str, Any],
    confirmed: Mapping[str, Any] | None = None,
) -> EditOutcome:
    """``PATCH`` the fields the dialog changed. The API validates the merged class with
    the core's rules and passes live fields on to every running job of the class.

    A new delay target below the floor a running job of the class last measured is
    shown first (``confirm``: the same change saved again, passed as ``confirmed``, goes
    through)."""
    try:
        cls = api.get_class(class_id)
    except ApiError as err:
        return EditOutcome(
            alert=error_alert(f"Could not read class #{class_id}: {error_text(err)}")
        )
    feedback: dict[str, str] = {}
    body, _changes = class_changes(cls["name"], cls, values, feedback, EDIT_NUMBER_FIELDS)
    if feedback:
        return EditOutcome(feedback_by_field=feedback)
    if not body:
        return EditOutcome(unchanged=True)
    shown = {"class_id": class_id, "body": body}
    if "delay_target_s" in body and shown != confirmed:
        floor = class_floor(api, cls["name"])
        warning = floor_warning({"classes": {cls["name"]: body}}, {cls["name"]: floor})
        if warning is not None:
            again = html.P("Save again to apply it anyway.", className="small mb-0")
            return EditOutcome(alert=html.Div([warning, again]), confirm=shown)
    try:
        updated = api.update_class(class_id, body)
    except ApiError as err:
        on_form: dict[str, str] = {}
        elsewhere: list[str] = []
        for key, message in err.field_errors.items():
            target = form_field(key, EDIT_FIELDS)
            if target is None:
                elsewhere.append(message)
            else:
                on_form[target] = f"{on_form[target]}; {message}" if target in on_form else message
        if on_form and not elsewhere:
            return EditOutcome(feedback_by_field=on_form)
        text = "; ".join(elsewhere) if elsewhere else error_text(err)
        return EditOutcome(
            feedback_by_field=on_form, alert=error_alert(f"Could not update the class: {text}")
        )
    return EditOutcome(
        updated=updated,
        alert=success_alert(
            f"Updated class {updated['name']}; running jobs of the class get the change as a "
            "new configuration version."
        ),
    )


def class_floor(api: ApiClient, name: str) -> float | None:
    """The floor last measured for class ``name`` by its newest running job that measured
    one (None: no such job, or the API could not say)."""
    try:
        jobs = [
            j
            for j in api.list_jobs()
            if j["status"] == "running" and any(c["name"] == name for c in j["classes"])
        ]
        for job in sorted(jobs, key=lambda j: -j["id"]):
            floor = last_floor(api, job["id"], name)
            if floor is not None:
                return floor
    except ApiError:
        return None
    return None


def delete_class(api: ApiClient, class_id: int) -> Component:
    """Delete one class; returns the alert to show."""
    return deleted(f"class #{class_id}", lambda: api.delete_class(class_id))


def load_classes_table(
    api: ApiClient, *, can_delete: bool = True
) -> tuple[Component, Component | None]:
    """``(table, alert)``: the classes table, or a placeholder and an error alert.

    ``can_delete`` (the user's role may change classes) adds a Delete button per row.
    """
    return loaded_table(
        api.list_classes, lambda c: render_classes_table(c, can_delete=can_delete), "Classes"
    )


def render_classes_table(classes: Sequence[QueryClass], *, can_delete: bool = True) -> Component:
    if not classes:
        return no_rows_yet(
            "No classes yet.", can_delete, "Create one below.", "An operator can create them."
        )
    rows = [
        html.Tr(
            [
                html.Td(str(cls["id"])),
                html.Td(cls["name"]),
                *(html.Td(_setting_cell(cls, setting)) for setting in TABLE_SETTINGS),
                html.Td(format_timestamp(cls["updated_at"])),
                html.Td(
                    edit_delete_buttons(EDIT_BUTTON_TYPE, DELETE_BUTTON_TYPE, cls["id"])
                    if can_delete
                    else None,
                    className="text-nowrap",
                ),
            ],
            id=f"class-row-{cls['id']}",
        )
        for cls in classes
    ]
    return data_table(CLASS_TABLE_HEADS, rows, "classes-table-grid")


def _setting_cell(cls: QueryClass, setting: ClassSetting) -> Component | str | list[Any]:
    """One class's value of a table setting: the manager with its parameters, yes/no for
    a flag, a number otherwise."""
    if setting.name == "manager":
        return manager_cell(cls)
    value = cast(Mapping[str, Any], cls)[setting.name]
    if setting.type is bool:
        return "yes" if value else "no"
    return format_number(value)


def manager_cell(cls: QueryClass) -> list[Component | str]:
    """The manager's name, and under it the parameters set (or "defaults")."""
    params = cls["manager_params"]
    return [
        html.Span(cls["manager"], className="fw-semibold"),
        html.Div(
            format_params(params) if params else "defaults",
            className="small text-muted",
            id=f"class-params-{cls['id']}",
        ),
    ]


def _number(value: Any) -> float | None:
    """A form number: ``None``/empty/non-numeric → ``None``; bools are not numbers."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            return float(value)
        except ValueError:
            return None
    return None

"""frontend.actions.classes against the real API (what the Classes page callbacks do)."""

from __future__ import annotations

import pytest

from frontend.actions.classes import (
    CLASS_FIELDS,
    CLASS_TABLE_HEADS,
    DELETE_BUTTON_TYPE,
    EDIT_BUTTON_TYPE,
    build_create_body,
    class_floor,
    delete_class,
    load_classes_table,
    load_edit_values,
    save_edit,
    submit_class,
)
from frontend.api import ApiClient
from tests.frontend.frontend_real_api import CREATED
from tests.frontend.frontend_tree import find, ids, of_type, prop, text

FORM = {
    "name": "fraud",
    "priority": 6,
    "delay_target_s": 1.5,
    "tau0": None,
    "tau1": None,
    "tau2": None,
    "tau3": None,
    "manager": "aloma",
    "manager_params": "",
    "reserve_fraction": None,
    "max_lend_fraction": None,
    "catch_up": False,
}


def test_build_body_drops_empty_thresholds_and_flags_missing_fields():
    body, missing = build_create_body({**FORM, "tau1": 0.5, "tau3": ""})
    assert body == {
        "name": "fraud",
        "priority": 6.0,
        "delay_target_s": 1.5,
        "tau1": 0.5,
        "manager": "aloma",
    }
    assert missing == {}

    body, missing = build_create_body({"name": "  ", "priority": None, "delay_target_s": "x"})
    assert set(missing) == {"name", "priority", "delay_target_s"}


def test_submit_creates_the_class(api, real_api):
    outcome = submit_class(api, {**FORM, "tau0": 0.1})
    assert outcome.feedback_by_field == {}
    assert outcome.created is not None and outcome.created["tau0"] == 0.1
    assert "Created class fraud" in text(outcome.alert)
    assert [c["name"] for c in real_api.classes.values()] == ["fraud"]


def test_missing_required_fields_are_reported_without_a_request(api, real_api):
    outcome = submit_class(api, {**FORM, "name": "", "delay_target_s": None})
    assert set(outcome.feedback_by_field) == {"name", "delay_target_s"}
    assert outcome.created is None
    assert real_api.requests_to("POST", "/classes") == []


def test_api_validation_message_lands_next_to_its_field(api):
    outcome = submit_class(api, {**FORM, "tau2": 0.3})
    assert set(outcome.feedback_by_field) == {"tau2"}
    assert outcome.feedback_by_field["tau2"].startswith("tau2=0.3 is invalid: must be > tau1=0.4")
    assert outcome.alert is None
    assert set(outcome.feedback_by_field) <= set(CLASS_FIELDS)


def test_several_fields_can_be_wrong_at_once(api):
    outcome = submit_class(api, {**FORM, "delay_target_s": -1, "priority": 0})
    assert set(outcome.feedback_by_field) == {"delay_target_s", "priority"}


def test_duplicate_name_is_shown_on_the_name_field(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    outcome = submit_class(api, FORM)
    assert outcome.feedback_by_field == {
        "name": "name='fraud' is taken: class names must be unique"
    }


def test_an_error_not_about_a_form_field_goes_to_the_alert(real_api):
    # A session whose token the API no longer knows: a 401, about no field.
    with ApiClient(real_api.url, token="revoked-long-ago") as stale:
        outcome = submit_class(stale, FORM)
    assert outcome.feedback_by_field == {} and outcome.created is None
    assert "Could not create the class:" in text(outcome.alert)
    assert "HTTP 401" in text(outcome.alert)


def test_unreachable_api_gives_an_alert(dead_url):
    with ApiClient(dead_url, timeout_s=0.5) as api:
        outcome = submit_class(api, FORM)
    assert outcome.created is None
    assert "Cannot reach the API" in text(outcome.alert)


def test_table_lists_classes_with_a_delete_button_each(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    clicks = real_api.add_class("clicks", 1.0, 3.0, tau0=0.1)
    table, alert = load_classes_table(api)
    assert alert is None
    assert f"class-row-{fraud['id']}" in ids(table)
    row_text = text(find(table, f"class-row-{clicks['id']}"))
    assert "clicks" in row_text and "0.1" in row_text and "3" in row_text
    buttons = [prop(b, "id") for b in of_type(table, "Button")]
    assert buttons == [
        {"type": EDIT_BUTTON_TYPE, "index": fraud["id"]},
        {"type": DELETE_BUTTON_TYPE, "index": fraud["id"]},
        {"type": EDIT_BUTTON_TYPE, "index": clicks["id"]},
        {"type": DELETE_BUTTON_TYPE, "index": clicks["id"]},
    ]


def test_the_table_has_a_column_per_declared_setting(api, real_api):
    """The columns come from the settings declaration: a setting added there shows, with
    its value, without a line here (max_shed_fraction, the newest)."""
    audit = real_api.add_class("audit", 2.0, 4.0, max_shed_fraction=0.25, catch_up=True)
    table, _alert = load_classes_table(api)
    heads = [text(h) for h in of_type(table, "Th")]
    assert heads == list(CLASS_TABLE_HEADS)
    assert "Max shed fraction" in heads and "Catch up at start" in heads
    cells = [text(c) for c in of_type(find(table, f"class-row-{audit['id']}"), "Td")]
    assert len(cells) == len(heads)
    assert cells[heads.index("Max shed fraction")] == "0.25"
    assert cells[heads.index("Catch up at start")] == "yes"


def test_empty_table_and_unreachable_api(api, dead_url):
    table, alert = load_classes_table(api)
    assert "No classes yet" in text(table) and alert is None
    with ApiClient(dead_url, timeout_s=0.5) as down:
        table, alert = load_classes_table(down)
    assert "could not be loaded" in text(table)
    assert "Cannot reach the API" in text(alert)


def test_delete(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    assert "Deleted class" in text(delete_class(api, fraud["id"]))
    assert real_api.classes == {}
    assert "404" in text(delete_class(api, fraud["id"]))


def test_timestamps_are_shown_in_utc():
    from frontend.components import format_timestamp

    assert format_timestamp("2025-11-21T06:46:44.211398Z") == "2025-11-21 06:46:44"
    assert format_timestamp("2025-11-21T08:46:44+02:00") == "2025-11-21 06:46:44"
    assert format_timestamp("2025-11-21T06:46:44.2") == "2025-11-21 06:46:44"  # naive = UTC
    assert format_timestamp(None) == "—"
    assert format_timestamp("yesterday") == "yesterday"


def test_a_viewer_table_has_no_delete_buttons(viewer_api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    table, alert = load_classes_table(viewer_api, can_delete=False)
    assert alert is None and "fraud" in text(table)
    assert of_type(table, "Button") == []
    for class_id in real_api.classes:
        real_api.delete_class(class_id)
    empty, _ = load_classes_table(viewer_api, can_delete=False)
    assert "An operator can create them" in text(empty)


def test_a_403_shows_the_apis_sentence_and_creates_nothing(viewer_api, real_api):
    outcome = submit_class(viewer_api, FORM)
    assert outcome.created is None and outcome.feedback_by_field == {}
    assert text(outcome.alert) == (
        "Could not create the class: role='viewer' may not do this: it needs operator or higher"
    )
    assert real_api.classes == {}
    assert "needs operator or higher" in text(delete_class(viewer_api, 1))


def test_manager_and_parameters_are_sent_and_shown(api, real_api):
    outcome = submit_class(
        api,
        {
            **FORM,
            "manager": "ctrl",
            "manager_params": "headroom=0.7, pole1=0.4",
            "reserve_fraction": "0.1",
            "max_lend_fraction": 0.5,
            "catch_up": True,
        },
    )
    assert outcome.created is not None, outcome.feedback_by_field
    assert real_api.requests_to("POST", "/classes")[-1].body == {
        "name": "fraud",
        "priority": 6.0,
        "delay_target_s": 1.5,
        "manager": "ctrl",
        "manager_params": {"headroom": 0.7, "pole1": 0.4},
        "reserve_fraction": 0.1,
        "max_lend_fraction": 0.5,
        "catch_up": True,
    }
    table, _ = load_classes_table(api)
    row = text(find(table, f"class-row-{outcome.created['id']}"))
    assert "ctrl" in row and "headroom=0.7, pole1=0.4" in row and "0.5" in row
    assert "yes" in row  # catches up at start


def test_defaults_are_shown_as_defaults(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    table, _ = load_classes_table(api)
    assert text(find(table, f"class-params-{fraud['id']}")) == "defaults"


def test_parameters_not_written_name_value_are_marked_without_a_request(api, real_api):
    outcome = submit_class(api, {**FORM, "manager_params": "headroom 0.7"})
    assert set(outcome.feedback_by_field) == {"manager_params"}
    assert "'headroom 0.7' is not name=value" in outcome.feedback_by_field["manager_params"]
    assert real_api.requests_to("POST", "/classes") == []


def test_the_cores_message_about_a_parameter_lands_on_the_parameters(api):
    outcome = submit_class(api, {**FORM, "manager": "ctrl", "manager_params": "headroom=-1"})
    assert set(outcome.feedback_by_field) == {"manager_params"}
    assert outcome.feedback_by_field["manager_params"].startswith("manager_params.headroom=-1")
    outcome = submit_class(api, {**FORM, "manager_params": "colour=blue"})
    assert "unknown parameter" in outcome.feedback_by_field["manager_params"]


def test_the_edit_dialog_shows_the_stored_values(api, real_api):
    clicks = real_api.add_class(
        "clicks", 1.0, 5.0, manager="ctrl", manager_params={"headroom": 0.6}
    )
    values, alert = load_edit_values(api, clicks["id"])
    assert alert is None
    assert values["manager"] == "ctrl" and values["manager_params"] == "headroom=0.6"
    assert values["delay_target_s"] == 5.0 and values["max_lend_fraction"] == 1.0
    assert values["catch_up"] is False
    _, alert = load_edit_values(api, 999)
    assert "Could not read class #999" in text(alert)


def test_editing_sends_only_what_changed(api, real_api):
    clicks = real_api.add_class("clicks", 1.0, 5.0)
    values, _ = load_edit_values(api, clicks["id"])
    assert save_edit(api, clicks["id"], values).unchanged
    assert real_api.requests_to("PATCH", f"/classes/{clicks['id']}") == []

    outcome = save_edit(
        api,
        clicks["id"],
        {**values, "tau2": 0.7, "manager": "ctrl", "max_lend_fraction": 0.5, "catch_up": True},
    )
    assert outcome.updated is not None
    assert real_api.requests_to("PATCH", f"/classes/{clicks['id']}")[-1].body == {
        "tau2": 0.7,
        "max_lend_fraction": 0.5,
        "catch_up": True,
        "manager": "ctrl",
        "manager_params": {},
    }
    assert "running jobs of the class get the change" in text(outcome.alert)
    assert real_api.classes[clicks["id"]]["manager"] == "ctrl"


def test_a_target_below_a_running_jobs_floor_is_shown_before_it_is_saved(api, real_api):
    """A running job of the class measured its floor at 2.4 s: a new target of 2 s is
    shown first with the floor and the violation to expect; saved again, it goes through.
    A target above the floor is saved at once."""
    clicks = real_api.add_class("clicks", 1.0, 5.0)
    job = real_api.add_job(["clicks"], status="running")
    real_api.add_sample(job["id"], "clicks", CREATED.timestamp() + 10.0, floor_s=2.4)
    assert class_floor(api, "clicks") == pytest.approx(2.4)
    values, _ = load_edit_values(api, clicks["id"])
    first = save_edit(api, clicks["id"], {**values, "delay_target_s": 2.0})
    assert first.updated is None and first.confirm is not None
    assert "below the floor last measured, 2.4 s" in text(first.alert)
    assert "Save again" in text(first.alert)
    assert real_api.requests_to("PATCH", f"/classes/{clicks['id']}") == []
    again = save_edit(api, clicks["id"], {**values, "delay_target_s": 2.0}, first.confirm)
    assert again.updated is not None and again.updated["delay_target_s"] == 2.0
    above = save_edit(api, clicks["id"], {**values, "delay_target_s": 3.0})
    assert above.updated is not None and above.confirm is None


def test_an_edit_the_core_refuses_is_marked_on_its_field(api, viewer_api, real_api):
    clicks = real_api.add_class("clicks", 1.0, 5.0, manager="ctrl")
    values, _ = load_edit_values(api, clicks["id"])
    outcome = save_edit(api, clicks["id"], {**values, "manager_params": "headroom=-1"})
    assert outcome.updated is None
    assert outcome.feedback_by_field["manager_params"].startswith("manager_params.headroom=-1")
    outcome = save_edit(api, clicks["id"], {**values, "tau1": 0.9})
    assert set(outcome.feedback_by_field) == {"tau2"}  # the ordering rule names tau2
    outcome = save_edit(api, clicks["id"], {**values, "priority": "high"})
    assert set(outcome.feedback_by_field) == {"priority"}
    denied = save_edit(viewer_api, clicks["id"], {**values, "priority": 2})
    assert "needs operator or higher" in text(denied.alert)

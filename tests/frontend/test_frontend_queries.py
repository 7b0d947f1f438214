"""frontend.actions.queries and the editor's rows against the real API (what the Classes
page's query callbacks do): list, save a spec, show the API's refusal where it belongs,
edit, delete, and what a viewer gets."""

from __future__ import annotations

import yaml

from frontend.actions.queries import (
    DELETE_BUTTON_TYPE,
    EDIT_BUTTON_TYPE,
    EditorView,
    apply_spec,
    as_class_id,
    as_editing,
    chosen_class,
    class_choices,
    delete_query,
    load_for_edit,
    load_queries_table,
    new_query,
    operators_summary,
    save_query,
)
from frontend.api import ApiClient
from frontend.query_editor import (
    FIELD_TYPE,
    dom_id,
    feedback_id,
    field_id,
    group_id,
    group_styles,
    operator_rows,
)
from frontend.query_spec import blank_form, query_form
from tests.frontend.frontend_tree import find, of_type, prop, text

GOOD = """\
name: big-trades
source: trades
operators:
  - kind: filter
    predicate: value > 0.9
  - kind: window_aggregate
    window: {type: tumbling, size_s: 5}
"""
BAD_JOIN = """\
name: joined
source: trades
operators:
  - kind: project
    columns: [value]
  - kind: window_join
    right: clicks
    window: {size_s: 2}
    on_column: key
    sim: {selectivity: 1}
"""


def test_class_choices_keep_the_chosen_class_while_it_exists(api, real_api, dead_url):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    ads = real_api.add_class("ads", 1.0, 4.0)
    options, alert = class_choices(api)
    assert alert is None
    assert options == [
        {"label": "fraud", "value": str(fraud["id"])},
        {"label": "ads", "value": str(ads["id"])},
    ]
    assert chosen_class(options, str(ads["id"])) == str(ads["id"])
    assert chosen_class(options, "999") == str(fraud["id"])
    assert chosen_class([], "1") is None
    assert as_class_id("12") == 12 and as_class_id(None) is None and as_class_id("x") is None
    with ApiClient(dead_url, timeout_s=0.5) as down:
        options, alert = class_choices(down)
    assert options == [] and "Cannot reach the API" in text(alert)


def test_saving_a_good_spec_creates_the_query_and_edits_it_next(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    view = save_query(api, fraud["id"], None, GOOD)
    assert view.saved is not None and view.feedback.empty
    assert "Created query big-trades" in text(view.alert)
    assert real_api.requests_to("POST", f"/classes/{fraud['id']}/queries")[-1].body == (
        yaml.safe_load(GOOD)
    )
    assert view.editing == {
        "class_id": fraud["id"],
        "query_id": view.saved["id"],
        "name": "big-trades",
    }
    assert view.title == f"Editing query big-trades (#{view.saved['id']})"
    assert [row.kind for row in view.form.operators] == ["filter", "window_aggregate"]

    again = save_query(api, fraud["id"], view.editing, GOOD.replace("0.9", "0.8"))
    assert "Saved query big-trades" in text(again.alert)
    assert real_api.requests_to("PUT", f"/classes/{fraud['id']}/queries/{view.saved['id']}")
    assert len(real_api.queries) == 1

    table, alert = load_queries_table(api, fraud["id"], can_change=True)
    assert alert is None
    row = text(find(table, f"query-row-{view.saved['id']}"))
    assert "big-trades" in row and "trades" in row and "filter → window_aggregate" in row
    assert "value > 0.8" in text(find(table, f"query-spec-{view.saved['id']}"))
    assert [prop(b, "id") for b in of_type(table, "Button")] == [
        {"type": EDIT_BUTTON_TYPE, "index": view.saved["id"]},
        {"type": DELETE_BUTTON_TYPE, "index": view.saved["id"]},
    ]


def test_editing_a_query_of_another_class_saves_a_new_one_in_the_chosen_class(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    ads = real_api.add_class("ads", 1.0, 4.0)
    saved = save_query(api, fraud["id"], None, GOOD)
    copy = save_query(api, ads["id"], saved.editing, GOOD)
    assert copy.saved is not None and copy.saved["class_id"] == ads["id"]
    assert "Created query" in text(copy.alert) and len(real_api.queries) == 2


def test_the_apis_refusal_is_shown_under_the_spec_and_next_to_the_control(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    view = save_query(api, fraud["id"], None, BAD_JOIN)
    assert view.saved is None and view.alert is None and not view.keep_form
    assert any("operators[1].on_column: join column 'key'" in m for m in view.feedback.spec)
    assert set(view.feedback.operators) == {(1, "on_column")}
    assert real_api.queries == {}
    # The form shows the submitted spec, so row 1 is the join the message is about.
    rows = operator_rows(view.form.operators, view.feedback)
    control = find(rows, field_id(1, "on_column"))
    assert prop(control, "invalid") is True
    assert "join column 'key'" in text(find(rows, feedback_id(1, "on_column")))
    assert prop(find(rows, field_id(0, "columns")), "invalid") is False

    unknown = save_query(api, fraud["id"], None, "name: q\nsource: s\noperators: [{kind: explode}]")
    assert unknown.feedback.operators == {
        (0, "kind"): "operators[0].kind: 'explode' is not one of 'filter', 'project', 'map', "
        "'window_aggregate', 'window_join', 'sql'"
    }


def test_a_name_taken_in_the_class_is_marked_on_the_name(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    save_query(api, fraud["id"], None, GOOD)
    view = save_query(api, fraud["id"], None, GOOD)
    assert view.feedback.top == {"name": "name='big-trades' is taken in class 'fraud'"}
    assert view.feedback.spec == ("name='big-trades' is taken in class 'fraud'",)


def test_text_that_is_not_a_spec_is_refused_without_a_request(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    for bad in ("", "name: [", "- just\n- a list\n"):
        view = save_query(api, fraud["id"], None, bad)
        assert view.keep_form and view.saved is None and len(view.feedback.spec) == 1
    assert real_api.requests_to("POST", f"/classes/{fraud['id']}/queries") == []
    view = save_query(api, None, None, GOOD)
    assert "Choose the class" in text(view.alert)


def test_errors_that_are_not_about_the_spec_go_to_the_alert(viewer_api, api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    denied = save_query(viewer_api, fraud["id"], None, GOOD)
    assert "needs operator or higher" in text(denied.alert) and denied.feedback.empty
    gone = save_query(api, 999, None, GOOD)
    assert "does not exist" in text(gone.alert)


def test_spec_to_form_fills_the_form_or_says_why_not():
    current = blank_form()
    view = apply_spec(BAD_JOIN, current, None)
    assert [row.kind for row in view.form.operators] == ["project", "window_join"]
    assert view.feedback.empty and not view.keep_form
    assert yaml.safe_load(view.spec_text)["operators"][1]["on_column"] == "key"
    broken = apply_spec("name: [", current, None)
    assert broken.keep_form and broken.form is current and broken.spec_text == "name: ["
    assert "not valid YAML" in broken.feedback.spec[0]


def test_edit_loads_the_stored_query_and_delete_removes_it(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    stored = real_api.add_query(
        fraud["id"], "hot", "trades", [{"kind": "filter", "predicate": "key < 5"}], shared=True
    )
    view = load_for_edit(api, fraud["id"], stored["id"])
    assert isinstance(view, EditorView)
    assert view.form.name == "hot" and view.form.shared
    assert view.editing == {"class_id": fraud["id"], "query_id": stored["id"], "name": "hot"}
    assert "Could not read query #999" in text(load_for_edit(api, fraud["id"], 999))

    assert "Deleted query" in text(delete_query(api, fraud["id"], stored["id"]))
    assert real_api.queries == {}
    assert "404" in text(delete_query(api, fraud["id"], stored["id"]))


def test_a_viewer_sees_queries_and_their_specs_without_buttons(viewer_api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    stored = real_api.add_query(
        fraud["id"], "hot", "trades", [{"kind": "filter", "predicate": "key < 5"}]
    )
    table, alert = load_queries_table(viewer_api, fraud["id"], can_change=False)
    assert alert is None and "hot" in text(table)
    assert "predicate: key < 5" in text(find(table, f"query-spec-{stored['id']}"))
    assert of_type(table, "Button") == []
    assert "needs operator or higher" in text(delete_query(viewer_api, fraud["id"], stored["id"]))


def test_empty_and_unreadable_tables(api, real_api, dead_url):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    table, _ = load_queries_table(api, fraud["id"], can_change=True)
    assert "No continuous queries in this class yet" in text(table)
    table, _ = load_queries_table(api, None, can_change=True)
    assert "No class yet" in text(table)
    with ApiClient(dead_url, timeout_s=0.5) as down:
        table, alert = load_queries_table(down, fraud["id"], can_change=True)
    assert "could not be loaded" in text(table) and "Cannot reach the API" in text(alert)


def test_rows_show_only_their_kinds_controls():
    form = query_form(yaml.safe_load(BAD_JOIN))
    rows = operator_rows(form.operators)
    assert prop(find(rows, group_id(0, "columns")), "style") is None
    assert prop(find(rows, group_id(0, "predicate")), "style") == {"display": "none"}
    assert prop(find(rows, group_id(1, "window.size_s")), "style") is None
    assert prop(find(rows, field_id(1, "window.size_s")), "value") == 2
    assert prop(find(rows, field_id(1, "right")), "value") == "clicks"
    styles = group_styles("filter")
    assert styles.count(None) == 4  # predicate, selectivity, cost, name
    assert dom_id(field_id(1, "on_column")) == (
        '{"field":"on_column","index":1,"type":"%s"}' % FIELD_TYPE  # noqa: UP031
    )


def test_helpers():
    assert operators_summary([{"kind": "filter"}, {"kind": "map"}, "x"]) == "filter → map → ?"
    assert operators_summary([]) == "—"
    assert as_editing({"class_id": 1, "query_id": 2, "name": "q"}) == {
        "class_id": 1,
        "query_id": 2,
        "name": "q",
    }
    assert as_editing(None) is None and as_editing({"class_id": "1"}) is None
    assert new_query().title == "New query"

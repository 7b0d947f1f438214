"""frontend.actions.streams against the real API (what the Streams page callbacks do)."""

from __future__ import annotations

import json

import pytest

from frontend.actions.streams import (
    DELETE_BUTTON_TYPE,
    declare_stream,
    delete_stream,
    load_streams_table,
    place_errors,
    render_streams_table,
)
from frontend.api import ApiClient
from tests.frontend.frontend_tree import find, of_type, prop, text

COLUMNS = [
    {"name": "account", "type": "long", "generator": {"kind": "zipf", "n": 20}},
    {"name": "amount", "type": "double"},
    {"name": "ts", "type": "timestamp", "generator": {"kind": "arrival", "lag_max_s": 1}},
]
FORM = {"name": "trades", "event_time": "ts", "columns": json.dumps(COLUMNS, indent=2)}
MEANS = (
    "SELECT window(event_time, '5 seconds') AS w, account, avg(amount) AS mean "
    "FROM trades GROUP BY 1, account"
)


def stored(api):
    return {s["name"]: s for s in api.list_streams()}


def test_a_declared_stream_is_stored_and_listed(api, real_api):
    outcome = declare_stream(api, {**FORM, "name": " trades ", "event_time": " ts "})
    assert outcome.created is not None and outcome.feedback_by_field == {}
    assert "Declared stream trades (3 columns)" in text(outcome.alert)
    assert real_api.requests_to("POST", "/streams")[-1].body == {
        "name": "trades",
        "columns": COLUMNS,
        "event_time": "ts",
    }
    assert stored(api)["trades"]["event_time"] == "ts"

    table, alert = load_streams_table(api)
    assert alert is None
    row = find(table, f"stream-row-{outcome.created['id']}")
    assert "account:long, amount:double, ts:timestamp" in text(row)
    assert [prop(b, "id") for b in of_type(row, "Button")] == [
        {"type": DELETE_BUTTON_TYPE, "index": outcome.created["id"]}
    ]


def test_without_an_event_time_the_stream_uses_the_arrival_time(api, real_api):
    outcome = declare_stream(api, {**FORM, "event_time": "", "columns": '[{"name": "x"}]'})
    assert outcome.created is not None
    assert "event_time" not in real_api.requests_to("POST", "/streams")[-1].body
    table, _ = load_streams_table(api)
    assert "x:double" in text(table) and "arrival" in text(table)


def test_invalid_json_and_empty_fields_are_reported_without_calling_the_api(api, real_api):
    broken = declare_stream(api, {**FORM, "columns": '[{"name": "x", type: "long"}]'})
    assert set(broken.feedback_by_field) == {"columns"}
    assert broken.feedback_by_field["columns"].startswith("The columns are not valid JSON:")
    assert "line 1, column 16" in broken.feedback_by_field["columns"]

    empty = declare_stream(api, {"name": "  ", "event_time": None, "columns": None})
    assert set(empty.feedback_by_field) == {"name", "columns"}
    assert real_api.requests_to("POST", "/streams") == []


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        # A rule across fields names the field it is about in its loc too.
        (
            {"event_time": "amount"},
            "event_time",
            "event_time='amount' is invalid: must name a timestamp column of stream 'trades'",
        ),
        (
            {"columns": json.dumps([{"name": "x"}, {"name": "x"}]), "event_time": ""},
            "columns",
            "column 'x' is declared twice in stream 'trades'",
        ),
        ({"name": "stream.mine"}, "name", "names starting with 'stream.' are the control"),
        # A rule about one field.
        ({"name": "a b"}, "name", "name='a b' is invalid: String should match pattern"),
        ({"event_time": "a-b"}, "event_time", "event_time='a-b' is invalid"),
        (
            {"columns": json.dumps([{"name": "x", "type": "lon"}]), "event_time": ""},
            "columns",
            "columns[0].type: type='lon' is invalid: Input should be 'long', 'double'",
        ),
        ({"columns": "[]", "event_time": ""}, "columns", "at least 1 item"),
    ],
)
def test_the_apis_422_is_shown_under_its_field_in_the_apis_words(
    api, real_api, change, field, words
):
    outcome = declare_stream(api, {**FORM, **change})
    assert outcome.created is None and outcome.alert is None
    assert set(outcome.feedback_by_field) == {field}
    assert words in outcome.feedback_by_field[field]
    assert "body=" not in outcome.feedback_by_field[field]  # not the echo of the whole body
    assert stored(api) == {}


def test_a_taken_name_is_an_alert(api, real_api):
    assert declare_stream(api, FORM).created is not None
    again = declare_stream(api, FORM)
    assert again.created is None and again.feedback_by_field == {}
    assert "name='trades' is taken: stream names must be unique (HTTP 409" in text(again.alert)


def test_a_message_about_no_field_of_the_form_goes_to_the_alert():
    detail = [
        {"loc": ["body", "description"], "msg": "description='…' is invalid: too long"},
        {"loc": ["body", "event_time"], "msg": "event_time='1' is invalid: pattern"},
    ]
    on_form, elsewhere = place_errors(detail)
    assert on_form == {"event_time": "event_time='1' is invalid: pattern"}
    assert elsewhere == ["description='…' is invalid: too long"]


def test_delete_and_a_stream_a_query_reads_is_kept(api, real_api):
    kept = declare_stream(api, FORM).created
    gone = declare_stream(api, {**FORM, "name": "quotes", "event_time": ""}).created
    assert kept is not None and gone is not None
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_query(fraud["id"], "means", "trades", [{"kind": "sql", "statement": MEANS}])

    assert f"Deleted stream #{gone['id']}" in text(delete_stream(api, gone["id"]))
    refused = text(delete_stream(api, kept["id"]))
    assert f"Could not delete stream #{kept['id']}" in refused
    assert "stream 'trades' is read by queries 'means'; delete them first" in refused
    assert set(stored(api)) == {"trades"}
    assert "404" in text(delete_stream(api, 999))


def test_a_viewer_sees_the_streams_but_may_not_declare_or_delete(api, viewer_api, real_api):
    declared = declare_stream(api, FORM).created
    assert declared is not None
    table, alert = load_streams_table(viewer_api, can_delete=False)
    assert alert is None and "trades" in text(table) and not of_type(table, "Button")
    message = "role='viewer' may not do this: it needs operator or higher"
    refused = declare_stream(viewer_api, {**FORM, "name": "quotes"})
    assert refused.feedback_by_field == {} and message in text(refused.alert)
    assert message in text(delete_stream(viewer_api, declared["id"]))
    assert set(stored(api)) == {"trades"}
    assert "An operator can declare them" in text(render_streams_table([], can_delete=False))


def test_an_api_error_gives_a_placeholder_and_an_alert(dead_url):
    with ApiClient(dead_url, timeout_s=0.5) as down:
        table, alert = load_streams_table(down)
    assert "could not be loaded" in text(table) and "Cannot reach" in text(alert)

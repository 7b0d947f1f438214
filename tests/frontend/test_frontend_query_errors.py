"""Where the API's messages about a query spec are shown (frontend.query_errors): all under
the spec, and each also next to the control of the field its path names."""

from __future__ import annotations

import pytest

from frontend.query_errors import error_items, operator_target, place, spec_path

KINDS = ["filter", "window_aggregate", "window_join"]


@pytest.mark.parametrize(
    ("loc", "path"),
    [
        (["body", "operators[1].window.size_s"], "operators[1].window.size_s"),
        (["body", "name"], "name"),
        (["body", "operators", "0"], "operators[0]"),
        (["body", "operators", 2, "kind"], "operators[2].kind"),
        (["body"], ""),
        (None, ""),
        ("body", ""),
    ],
)
def test_spec_path(loc, path):
    assert spec_path(loc) == path


def test_error_items_keep_the_apis_sentence_and_name_the_path():
    detail = [
        {"loc": ["body", "operators[1].on_column"], "msg": "operators[1].on_column: join column"},
        {"loc": ["body", "name"], "msg": "name='a b' is invalid: should match pattern"},
        {"loc": ["body", "operators", "0"], "msg": "0='x' is invalid: a valid dictionary"},
        "not a mapping",
    ]
    assert error_items(detail) == [
        ("operators[1].on_column", "operators[1].on_column: join column"),
        ("name", "name='a b' is invalid: should match pattern"),
        ("operators[0]", "operators[0]: 0='x' is invalid: a valid dictionary"),
    ]
    assert error_items("query 4 of class 1 does not exist") == [
        ("", "query 4 of class 1 does not exist")
    ]
    assert error_items(None) == []


@pytest.mark.parametrize(
    ("path", "message", "target"),
    [
        ("operators[1].window.size_s", "must be > 0, got -5", (1, "window.size_s")),
        ("operators[2].on_column", "join column 'nope'", (2, "on_column")),
        ("operators[2].sim.selectivity", "is required for window_join", (2, "sim.selectivity")),
        ("operators[0].kind", "'explode' is not one of", (0, "kind")),
        ("operators[0]", "a valid dictionary", (0, "kind")),
        # a key no control of the row's kind shows: next to the kind
        ("operators[0].window", "is not a field here", (0, "kind")),
        ("operators[0].bogus", "is not a field here", (0, "kind")),
        # a model rule on the window: the control the message names first
        ("operators[1].window", "slide_s (9.0) must be <= size_s (5.0)", (1, "window.slide_s")),
        ("operators[1].window", "a sliding window needs slide_s", (1, "window.slide_s")),
        ("operators[1].window", "must be a mapping", (1, "window.type")),
        # deeper than a control: the control
        ("operators[1].group_by[0]", "must be a name", (1, "group_by")),
        ("operators[1].window.size_s.x", "odd", (1, "window.size_s")),
        # not a row the form has, or not an operator at all
        ("operators[7].kind", "is required", None),
        ("source", "names no shared query", None),
    ],
)
def test_operator_target(path, message, target):
    assert operator_target(path, message, KINDS) == target


def test_place_puts_every_message_under_the_spec_and_next_to_its_field():
    items = [
        ("name", "name='' is invalid: at least 1 character"),
        ("source", "source: 'query:x' names no shared query"),
        ("operators[2].on_column", "operators[2].on_column: join column 'nope' is not a column"),
        ("operators[2].on_column", "operators[2].on_column: join column (in 'clicks') 'nope'"),
        ("operators[2].sim.selectivity", "operators[2].sim.selectivity: is required"),
        ("shared", "shared='maybe' is invalid: a valid boolean"),
        ("", "the document as a whole"),
    ]
    feedback = place(items, KINDS)
    assert feedback.spec == tuple(message for _, message in items)
    assert feedback.top == {
        "name": "name='' is invalid: at least 1 character",
        "source": "source: 'query:x' names no shared query",
    }
    assert feedback.operators == {
        (2, "on_column"): "operators[2].on_column: join column 'nope' is not a column; "
        "operators[2].on_column: join column (in 'clicks') 'nope'",
        (2, "sim.selectivity"): "operators[2].sim.selectivity: is required",
    }
    assert not feedback.empty
    assert place([], KINDS).empty

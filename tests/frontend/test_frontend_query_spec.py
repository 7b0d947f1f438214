"""A continuous query as form and as YAML spec (frontend.operators, frontend.query_spec):
the form covers the scenario format's operator vocabulary, and spec → form → spec loses
nothing, not even what the API will refuse."""

from __future__ import annotations

import pytest
import yaml
from pydantic import BaseModel

from frontend.operators import (
    OPERATOR_FIELDS,
    OPERATOR_KINDS,
    choice_options,
    fields_for,
    kind_options,
)
from frontend.query_spec import (
    OperatorRow,
    QueryForm,
    SpecError,
    blank_form,
    form_yaml,
    from_control,
    operator_spec,
    parse_spec,
    query_form,
    query_spec,
    rows_from_controls,
    spec_yaml,
)
from spark_runner.scenario.models import (
    FilterOp,
    JoinWindow,
    MapOp,
    ProjectOp,
    SimHints,
    SqlOp,
    Window,
    WindowAggregateOp,
    WindowJoinOp,
)

MODELS: dict[str, type[BaseModel]] = {
    "filter": FilterOp,
    "project": ProjectOp,
    "map": MapOp,
    "window_aggregate": WindowAggregateOp,
    "window_join": WindowJoinOp,
    "sql": SqlOp,
}
NESTED: dict[tuple[str, str], type[BaseModel]] = {
    ("window_aggregate", "window"): Window,
    ("window_join", "window"): JoinWindow,
}
SPEC = {
    "name": "big-trades",
    "source": "trades",
    "shared": False,
    "operators": [
        {"kind": "filter", "predicate": "value > 0.9"},
        {"kind": "project", "columns": ["key", "value"], "name": "keep"},
        {"kind": "map", "expression": "value * 2", "output": "v2", "cpu_cost_per_tuple_s": 0.0},
        {
            "kind": "window_aggregate",
            "window": {"type": "sliding", "size_s": 5, "slide_s": 1.5},
            "function": "avg",
            "column": "v2",
            "group_by": ["key"],
        },
        {
            "kind": "window_join",
            "right": "query:clicks",
            "window": {"size_s": 2},
            "on_column": "key",
            "sim": {"selectivity": 0.5, "cost_per_tuple_s": 1e-4},
        },
        {"kind": "sql", "statement": "SELECT key, count(*) AS n FROM trades GROUP BY key"},
    ],
}


def test_the_form_offers_every_kind_and_every_field_of_the_format():
    assert set(OPERATOR_KINDS) == set(MODELS)
    for kind, model in MODELS.items():
        keys = {f.key for f in fields_for(kind)}
        top = {key.split(".")[0] for key in keys}
        assert top == set(model.model_fields) - {"kind"}, kind
        assert {k.split(".")[1] for k in keys if k.startswith("sim.")} == set(SimHints.model_fields)
        nested = NESTED.get((kind, "window"))
        if nested is not None:
            window = {k.split(".")[1] for k in keys if k.startswith("window.")}
            assert window == set(nested.model_fields), kind


def test_choices_come_from_the_format():
    function = next(f for f in OPERATOR_FIELDS if f.key == "function")
    assert function.choices == ("count", "sum", "avg", "min", "max")
    assert choice_options(function)[0] == {"label": "count (default)", "value": ""}
    window_type = next(f for f in OPERATOR_FIELDS if f.key == "window.type")
    assert window_type.choices == ("tumbling", "sliding")


def test_an_unknown_kind_is_offered_so_the_form_can_show_it():
    assert [o["value"] for o in kind_options("filter")] == list(OPERATOR_KINDS)
    assert kind_options("explode")[-1] == {"label": "explode (unknown kind)", "value": "explode"}
    assert fields_for("explode") == ()


def test_spec_to_form_and_back_is_the_same_spec():
    form = query_form(SPEC)
    assert form.name == "big-trades" and form.source == "trades" and not form.shared
    assert [row.kind for row in form.operators] == list(MODELS)
    aggregate = form.operators[3]
    assert aggregate.values == {
        "window.type": "sliding",
        "window.size_s": 5,
        "window.slide_s": 1.5,
        "function": "avg",
        "column": "v2",
        "group_by": "key",
    }
    assert aggregate.extra == {}
    assert form.operators[1].values["columns"] == "key, value"
    assert query_spec(form) == SPEC
    assert yaml.safe_load(form_yaml(form)) == SPEC


def test_what_no_control_can_hold_is_kept_for_the_api_to_judge():
    spec = {
        "name": 7,
        "source": "trades",
        "operator": "typo",
        "operators": [
            {"kind": "explode", "times": 3},
            {"kind": "map", "cpu_cost_per_tuple_s": 0, "predicate": "x", "sim": {"colour": 1}},
            {"kind": "window_aggregate", "window": {"size_s": "big"}, "function": "median"},
            {"predicate": "value > 1"},
        ],
    }
    form = query_form(spec)
    assert form.name == "" and form.extra == {"name": 7, "operator": "typo"}
    explode, mapped, aggregate, kindless = form.operators
    assert explode == OperatorRow("explode", {}, {"times": 3})
    assert mapped.values == {"cpu_cost_per_tuple_s": 0}
    assert mapped.extra == {"predicate": "x", "sim": {"colour": 1}}
    assert aggregate.values == {}
    assert aggregate.extra == {"window": {"size_s": "big"}, "function": "median"}
    assert kindless.kind == "" and kindless.extra == {"predicate": "value > 1"}
    assert query_spec(form) == {**spec, "shared": False}


def test_form_values_become_spec_values():
    row = OperatorRow(
        "window_aggregate",
        {
            "window.size_s": "5",
            "window.slide_s": " ",
            "function": "",
            "group_by": "key, , value",
            "column": "  value ",
            "predicate": "hidden: another kind's field",
        },
    )
    assert operator_spec(row) == {
        "kind": "window_aggregate",
        "window": {"size_s": 5},
        "group_by": ["key", "value"],
        "column": "value",
    }
    join = OperatorRow("window_join", {"window.size_s": 0.5, "sim.selectivity": "lots"})
    assert operator_spec(join) == {
        "kind": "window_join",
        "window": {"size_s": 0.5},
        "sim": {"selectivity": "lots"},  # not a number: the API names it
    }
    number = next(f for f in OPERATOR_FIELDS if f.key == "window.size_s")
    assert from_control(number, None) is None and from_control(number, True) is None
    assert from_control(number, "2.5") == 2.5 and from_control(number, 3) == 3


def test_the_forms_values_win_over_kept_keys_but_an_empty_control_does_not():
    form = QueryForm(
        name="",
        source="s",
        operators=(OperatorRow("filter", {"predicate": "value > 0.1"}, {"predicate": "old"}),),
        extra={"name": 7},
    )
    spec = query_spec(form)
    assert spec["name"] == 7
    assert spec["operators"] == [{"kind": "filter", "predicate": "value > 0.1"}]


def test_a_blank_form_shows_what_to_write():
    assert yaml.safe_load(form_yaml(blank_form())) == {
        "name": "",
        "source": "",
        "shared": False,
        "operators": [{"kind": "filter"}],
    }


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "the spec is empty"),
        ("name: [unclosed", "not valid YAML (line 1)"),
        ("name: a\n  source: b", "not valid YAML (line 2)"),
    ],
)
def test_text_that_is_not_yaml_is_refused_with_its_line(text, words):
    with pytest.raises(SpecError) as raised:
        parse_spec(text)
    assert words in str(raised.value)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (["a", "list"], "must be a mapping"),
        ({"name": "q", "operators": "filter"}, "operators must be a list"),
        ({"name": "q", "operators": [{"kind": "filter"}, "map"]}, "operators[1] must be a mapping"),
    ],
)
def test_a_shape_the_form_cannot_show_is_refused(spec, words):
    with pytest.raises(SpecError) as raised:
        query_form(spec)
    assert words in str(raised.value)


def test_yaml_lists_of_names_are_inline_and_keys_keep_their_order():
    text = spec_yaml(SPEC)
    assert "columns: [key, value]" in text
    assert text.index("name:") < text.index("source:") < text.index("operators:")
    assert parse_spec(text) == SPEC


def test_rows_from_controls_reads_each_rows_kind_values_and_kept_keys():
    rows = rows_from_controls(
        ["filter", "window_join", None],
        [(0, "predicate", "value > 0.5"), (1, "window.size_s", 2), (9, "predicate", "x")],
        [{}, {"sim": {"selectivity": 1}}],
    )
    assert rows[0] == OperatorRow("filter", {"predicate": "value > 0.5"})
    assert operator_spec(rows[1]) == {
        "kind": "window_join",
        "window": {"size_s": 2},
        "sim": {"selectivity": 1},
    }
    assert rows[2] == OperatorRow("")

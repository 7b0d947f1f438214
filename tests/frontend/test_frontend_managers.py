"""frontend.managers: the API's manager catalogue as form fields, manager parameters as
form text, and the delay-target band."""

from __future__ import annotations

import pytest

from frontend.api import ApiClient, Manager
from frontend.managers import (
    POLICIES,
    default_manager,
    default_params,
    delay_band,
    find_manager,
    format_params,
    manager_options,
    param_fields,
    params_hint,
    parse_params,
    parse_value,
    read_catalogue,
)


@pytest.fixture
def managers(api: ApiClient) -> list[Manager]:
    """The API's answer to ``GET /managers``."""
    return api.list_managers()


def test_the_forms_offer_the_apis_managers_and_the_cores_policies(managers):
    kinds = ["aloma", "seamless", "ctrl", "aurora", "none", "linear"]
    assert [m["kind"] for m in managers] == kinds
    assert POLICIES == ("relative", "absolute", "strict")
    assert [o["value"] for o in manager_options(managers)] == kinds
    assert default_manager(managers) == "aloma"
    assert manager_options([]) == [] and default_manager([]) is None


def test_defaults_leave_the_delay_target_to_the_class(managers):
    defaults = default_params("ctrl", managers)
    assert "delay_target_s" not in defaults
    assert defaults["headroom"] == 0.8
    assert default_params("nope", managers) == {}
    assert params_hint("aloma", managers).startswith("aloma parameters (defaults): max_shed=0.95")
    assert params_hint("nope", managers) == "nope has no parameters."


@pytest.mark.parametrize(
    ("raw", "value"),
    [("true", True), ("False", False), ("3", 3), ("0.7", 0.7), ("1e-3", 0.001), ("max", "max")],
)
def test_values_are_typed(raw, value):
    assert parse_value(raw) == value
    assert type(parse_value(raw)) is type(value)


def test_parameters_round_trip_through_text():
    params, error = parse_params("headroom=0.7, pole1 = 0.4\nresponse_statistic=p95; flag=true")
    assert error is None
    assert params == {"headroom": 0.7, "pole1": 0.4, "response_statistic": "p95", "flag": True}
    assert format_params(params) == "headroom=0.7, pole1=0.4, response_statistic=p95, flag=true"
    assert parse_params(format_params(params))[0] == params
    assert parse_params("  ") == ({}, None)
    assert parse_params(None) == ({}, None)


@pytest.mark.parametrize("text", ["headroom", "=0.7", "headroom=", "a=1, b"])
def test_text_that_is_not_name_value_is_refused(text):
    params, error = parse_params(text)
    assert params == {} and error is not None and "is not name=value" in error


def test_the_band_is_alomas_margins_around_the_target(managers):
    assert delay_band(2.0, "aloma", {}, managers) == pytest.approx((1.8, 2.0, 2.2))
    assert delay_band(
        2.0, "aloma", {"above_margin": 0.5, "below_margin": 0}, managers
    ) == pytest.approx((2.0, 2.0, 3.0))
    assert delay_band(2.0, "ctrl", {}, managers) == (2.0, 2.0, 2.0)  # no margins: a line
    assert delay_band(2.0, None, {}, managers) == (2.0, 2.0, 2.0)
    assert delay_band(2.0, "aloma", {"above_margin": "wide"}, managers) == pytest.approx(
        (1.8, 2.0, 2.0)
    )
    assert delay_band(2.0, "aloma", {}, []) == (2.0, 2.0, 2.0)  # no catalogue: no defaults


# -- from the API's answer (GET /managers) ---------------------------------------------

PROBE: Manager = {
    "kind": "probe",
    "label": "Probe (from a newer API)",
    "summary": "A manager this dashboard was not built with.",
    "default": True,
    "parameters": [
        {
            "name": "headroom",
            "type": "float",
            "default": 0.8,
            "description": "the fixed headroom H, s/s (> 0) [0.8].",
            "unit": "s/s",
            "rules": ["must be > 0 s/s"],
            "minimum": None,
            "exclusive_minimum": 0.0,
            "maximum": None,
            "exclusive_maximum": None,
            "choices": None,
        },
        {
            "name": "window_periods",
            "type": "int",
            "default": 10,
            "description": "",
            "unit": None,
            "rules": ["must be an integer >= 1"],
            "minimum": 1,
            "exclusive_minimum": None,
            "maximum": 50,
            "exclusive_maximum": None,
            "choices": None,
        },
        {
            "name": "statistic",
            "type": "str",
            "default": "max",
            "description": "which response time counts.",
            "unit": None,
            "rules": ["must be one of max, mean"],
            "minimum": None,
            "exclusive_minimum": None,
            "maximum": None,
            "exclusive_maximum": None,
            "choices": ["max", "mean"],
        },
        {
            "name": "verbose",
            "type": "bool",
            "default": False,
            "description": "log every decision.",
            "unit": None,
            "rules": [],
            "minimum": None,
            "exclusive_minimum": None,
            "maximum": None,
            "exclusive_maximum": None,
            "choices": None,
        },
    ],
}


def test_the_api_answer_becomes_form_fields():
    headroom, window, statistic, verbose = param_fields(PROBE)
    assert headroom == {
        "name": "headroom",
        "label": "headroom",
        "input": "number",
        "value": 0.8,
        "min": 0.0,
        "max": None,
        "step": "any",
        "options": None,
        "unit": "s/s",
        "help": "the fixed headroom H, s/s (> 0) [0.8]. Rules: must be > 0 s/s.",
    }
    assert (window["input"], window["min"], window["max"], window["step"]) == ("number", 1, 50, 1)
    assert window["label"] == "window periods" and window["help"] == (
        "Rules: must be an integer >= 1."
    )
    assert statistic["input"] == "select" and statistic["value"] == "max"
    assert statistic["options"] == [
        {"label": "max", "value": "max"},
        {"label": "mean", "value": "mean"},
    ]
    assert (statistic["min"], statistic["max"]) == (None, None)
    assert verbose["input"] == "switch" and verbose["help"] == "log every decision."
    assert param_fields({**PROBE, "parameters": []}) == []


def test_the_forms_follow_the_api_answer(managers):
    offered = [PROBE, *managers]
    assert manager_options(offered)[0] == {"label": "Probe (from a newer API)", "value": "probe"}
    assert default_manager(offered) == "probe" and default_manager(managers) == "aloma"
    assert default_params("probe", offered) == {
        "headroom": 0.8,
        "window_periods": 10,
        "statistic": "max",
        "verbose": False,
    }
    assert params_hint("probe", managers).startswith("probe has no parameters")  # not offered
    assert params_hint("probe", offered).startswith("probe parameters (defaults): headroom=0.8")
    assert find_manager("aloma", offered) == managers[0]
    assert find_manager("nope", offered) is None


def test_the_catalogue_is_the_apis_answer(api, dead_url):
    """What the pages read is the backend's own catalogue; an API that cannot be reached
    gives no managers and says why."""
    from backend.managers.service import list_managers

    catalogue = read_catalogue(api)
    assert catalogue.managers == [m.model_dump(mode="json") for m in list_managers()]
    assert catalogue.error is None
    for manager in catalogue.managers:
        fields = [f["name"] for f in param_fields(manager)]
        assert fields == list(default_params(manager["kind"], catalogue.managers))
    with ApiClient(dead_url, timeout_s=1.0) as unreachable:
        missing = read_catalogue(unreachable)
    assert missing.managers == []
    assert missing.error is not None and missing.error.startswith(
        "The load managers could not be read: Cannot reach the API"
    )

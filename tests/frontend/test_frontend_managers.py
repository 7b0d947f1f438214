"""frontend.managers: manager parameters as form text, and the delay-target band."""

from __future__ import annotations

import pytest

from frontend.managers import (
    MANAGER_KINDS,
    POLICIES,
    default_params,
    delay_band,
    format_params,
    manager_options,
    params_hint,
    parse_params,
    parse_value,
)


def test_the_forms_offer_the_cores_managers_and_policies():
    assert MANAGER_KINDS == ("aloma", "seamless", "ctrl", "aurora", "none", "linear")
    assert POLICIES == ("relative", "absolute", "strict")
    assert [o["value"] for o in manager_options()] == list(MANAGER_KINDS)


def test_defaults_leave_the_delay_target_to_the_class():
    defaults = default_params("ctrl")
    assert "delay_target_s" not in defaults
    assert defaults["headroom"] == 0.8
    assert default_params("nope") == {}
    assert params_hint("aloma").startswith("aloma parameters (defaults): max_shed=0.95")
    assert params_hint("nope") == "nope has no parameters."


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
    assert params == {} and "is not name=value" in error


def test_the_band_is_alomas_margins_around_the_target():
    assert delay_band(2.0, "aloma", {}) == pytest.approx((1.8, 2.0, 2.2))
    assert delay_band(2.0, "aloma", {"above_margin": 0.5, "below_margin": 0}) == pytest.approx(
        (2.0, 2.0, 3.0)
    )
    assert delay_band(2.0, "ctrl", {}) == (2.0, 2.0, 2.0)  # no margins: a line
    assert delay_band(2.0, None, {}) == (2.0, 2.0, 2.0)
    assert delay_band(2.0, "aloma", {"above_margin": "wide"}) == pytest.approx((1.8, 2.0, 2.0))

"""frontend.api: the 422 mapping, and the client against the real API."""

from __future__ import annotations

import time

import pytest

from frontend.api import ApiClient, ApiError, detail_text, field_errors
from tests.frontend.recording_proxy import BAD_GATEWAY_TEXT, RecordingProxy

CONTRACT_422 = [
    {
        "loc": ["body", "tau2"],
        "msg": "tau2=0.3 is invalid: must be > tau1=0.4 "
        "(thresholds must satisfy 0 < tau0 < tau1 < tau2 < tau3 <= 1)",
        "type": "value_error",
        "input": 0.3,
    }
]


def test_field_errors_keys_each_message_by_last_loc_element():
    assert field_errors(CONTRACT_422) == {"tau2": CONTRACT_422[0]["msg"]}


def test_field_errors_joins_messages_for_one_field_and_keeps_body_errors():
    detail = [
        {"loc": ["body", "name"], "msg": "Field required"},
        {"loc": ["body", "name"], "msg": "too short"},
        {"loc": ["body"], "msg": "JSON decode error"},
        {"loc": ["body", "class_ids", 0], "msg": "Input should be a valid integer"},
    ]
    assert field_errors(detail) == {
        "name": "Field required; too short",
        "body": "JSON decode error",
        "0": "Input should be a valid integer",
    }


@pytest.mark.parametrize("detail", ["A class named 'fraud' already exists.", None, {"x": 1}])
def test_field_errors_of_a_non_list_detail_is_empty(detail):
    assert field_errors(detail) == {}


def test_detail_text_reads_strings_and_validation_lists():
    assert detail_text("nope") == "nope"
    assert detail_text(CONTRACT_422).startswith("tau2=0.3 is invalid")  # names its field once
    assert detail_text(None) == ""


def test_create_list_and_delete_a_class(api, real_api):
    created = api.create_class({"name": "fraud", "priority": 6.0, "delay_target_s": 1.5})
    assert created["name"] == "fraud"
    assert created["tau3"] == 0.95  # server default applied
    assert [c["name"] for c in api.list_classes()] == ["fraud"]

    assert api.delete_class(created["id"]) is None  # 204, no body
    assert api.list_classes() == []
    assert real_api.requests_to("DELETE", f"/classes/{created['id']}")


def test_a_422_raises_api_error_with_fields(api):
    with pytest.raises(ApiError) as caught:
        api.create_class({"name": "fraud", "priority": 6.0, "delay_target_s": 1.5, "tau2": 0.3})
    err = caught.value
    assert err.status_code == 422
    assert set(err.field_errors) == {"tau2"}
    assert "must be > tau1=0.4" in err.field_errors["tau2"]
    assert "422" in err.message


def test_a_409_keeps_the_string_detail(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    with pytest.raises(ApiError) as caught:
        api.create_class({"name": "fraud", "priority": 1.0, "delay_target_s": 2.0})
    assert caught.value.status_code == 409
    assert caught.value.detail == "name='fraud' is taken: class names must be unique"
    assert caught.value.field_errors == {}


def test_a_non_json_error_body_is_kept_as_text(dead_url):
    # A reverse proxy in front of an API that is down answers 502 in plain text.
    with (
        RecordingProxy(dead_url) as proxy,
        ApiClient(proxy.url) as client,
        pytest.raises(ApiError) as caught,
    ):
        client.list_jobs()
    assert caught.value.status_code == 502
    assert caught.value.detail == BAD_GATEWAY_TEXT
    assert caught.value.message.startswith(BAD_GATEWAY_TEXT)


def test_jobs_start_stop_and_metrics_since(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    job = api.start_job([fraud["id"]], duration_s=None)
    assert job["status"] == "pending"
    assert real_api.requests_to("POST", "/jobs")[-1].body == {
        "class_ids": [fraud["id"]],
        "duration_s": None,
    }
    assert api.get_job(job["id"])["classes"][0]["name"] == "fraud"
    assert api.stop_job(job["id"])["status"] == "stopping"

    t0 = time.time()
    real_api.add_sample(job["id"], "fraud", t=t0)
    real_api.add_sample(job["id"], "fraud", t=t0 + 1.5)
    assert len(api.job_metrics(job["id"])["samples"]) == 2
    assert [s["t"] for s in api.job_metrics(job["id"], since=t0)["samples"]] == [t0 + 1.5]
    assert real_api.requests_to("GET", f"/jobs/{job['id']}/metrics")[-1].query == {
        "since": [repr(t0)]
    }


def test_unreachable_api_raises_api_error_without_status(dead_url):
    with ApiClient(dead_url) as client, pytest.raises(ApiError) as caught:
        client.health()
    assert caught.value.status_code is None
    assert f"Cannot reach the API at {dead_url}" in caught.value.message


def test_a_slow_api_times_out(real_api):
    # A long poll for a sample that never comes: the API holds the answer for wait_s.
    real_api.add_class("fraud", 6.0, 1.5)
    job = real_api.add_job(["fraud"])
    token = real_api.token_for("viewer")
    with (
        ApiClient(real_api.url, token=token, timeout_s=0.3) as client,
        pytest.raises(ApiError) as caught,
    ):
        client.job_metrics(job["id"], query={"wait_s": 5.0, "newer_than": time.time()})
    assert caught.value.status_code is None
    assert "did not answer in time" in caught.value.message

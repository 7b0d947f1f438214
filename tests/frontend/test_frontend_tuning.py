"""frontend.actions.tuning against the real API, which validates with the QoS core's own
rules (what the live tuning panel does)."""

from __future__ import annotations

from typing import cast

import pytest

from frontend.actions.tuning import (
    TUNE_FIELDS,
    apply_change,
    class_names,
    config_fingerprint,
    floor_warning,
    form_values,
    in_force,
    last_floor,
    load_config,
    pick_class,
    plan_change,
    prediction,
    prefill_key,
    render_changes,
    render_status,
    render_versions,
    track_record_text,
)
from frontend.api import ApiClient, JobConfig, TrackRecord
from frontend.components import format_timestamp
from spark_runner.core.redistribution import DEFAULT_POLICY
from tests.frontend.frontend_real_api import CREATED
from tests.frontend.frontend_tree import find, of_type, text


@pytest.fixture
def job(real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("ads", 1.0, 3.0)
    return real_api.add_job(["fraud", "ads"], status="running")


@pytest.fixture
def config(api, job):
    loaded = load_config(api, job["id"])
    assert loaded.alert is None
    return loaded.config


def stored(api: ApiClient, job_id: int) -> JobConfig:
    """The job's configuration as the API has it now (it must be readable)."""
    loaded = load_config(api, job_id)
    assert loaded.config is not None, loaded.alert
    return loaded.config


def form(config, class_name="ads", **changes):
    values = form_values(config, class_name)
    values.update(changes)
    return values


def test_the_form_is_prefilled_with_the_values_in_force(config, job):
    assert class_names(config) == ["fraud", "ads"]
    assert pick_class(config, None) == "fraud"
    assert pick_class(config, "ads") == "ads"
    assert pick_class(config, "gone") == "fraud"
    values = form_values(config, "ads")
    assert values == {
        "delay_target_s": 3.0,
        "priority": 1.0,
        "tau0": 0.2,
        "tau1": 0.4,
        "tau2": 0.8,
        "tau3": 0.95,
        "manager": "aloma",
        "manager_params": "",
        "recommend_only": False,
        "policy": DEFAULT_POLICY,
        "redistribution_every": 10,
        "hold_out_s": None,  # the job does not scale its executors
        "hold_in_s": None,
        "max_executors": None,
    }
    assert set(values) == set(TUNE_FIELDS)
    assert prefill_key(config, "ads") == [job["id"], "ads", 0]
    assert prefill_key(None, "ads") is None


def test_an_elastic_setting_goes_under_elastic_and_a_job_that_does_not_scale_is_told(config):
    settings: dict[str, float | int | str] = {
        "hold_out_s": 10.0,
        "hold_in_s": 30.0,
        "max_executors": 3,
    }
    elastic = cast(JobConfig, {**config, "config": {**config["config"], "elastic": settings}})
    values = form(elastic)
    assert (values["hold_out_s"], values["max_executors"]) == (10.0, 3)
    change = plan_change(elastic, "ads", form(elastic, hold_out_s="5", max_executors="2"))
    assert change.body == {"elastic": {"hold_out_s": 5, "max_executors": 2}}
    assert ("scale-out hold (s)", "10", "5") in change.changes
    refused = plan_change(config, "ads", form(config, hold_in_s="40"))
    assert "does not scale" in refused.feedback_by_field["hold_in_s"]


def test_only_what_differs_is_sent(config):
    assert plan_change(config, "ads", form(config)).body == {}
    change = plan_change(config, "ads", form(config, tau2=0.7, recommend_only=True))
    assert change.body == {"classes": {"ads": {"tau2": 0.7}}, "recommend_only": True}
    assert change.changes == [("ads · τ2", "0.8", "0.7"), ("recommend only", "off", "on")]
    shown = text(render_changes(change.changes))
    assert "ads · τ2" in shown and "0.8 → 0.7" in shown

    change = plan_change(config, "ads", form(config, policy="strict", redistribution_every="5"))
    assert change.body == {"policy": "strict", "redistribution_every": 5}


def test_manager_and_its_parameters(config):
    change = plan_change(config, "ads", form(config, manager_params="initial_headroom=0.6"))
    assert change.body == {"classes": {"ads": {"manager_params": {"initial_headroom": 0.6}}}}

    # Another manager starts from its own defaults unless parameters are written for it.
    change = plan_change(config, "ads", form(config, manager="ctrl"))
    assert change.body == {"classes": {"ads": {"manager": "ctrl", "manager_params": {}}}}
    change = plan_change(config, "ads", form(config, manager="ctrl", manager_params="pole1=0.3"))
    assert change.body["classes"]["ads"]["manager_params"] == {"pole1": 0.3}


def test_what_the_dashboard_cannot_send_is_marked_without_a_request(config, real_api, job):
    change = plan_change(config, "ads", form(config, tau2="abc", manager_params="oops"))
    assert change.body == {}
    assert set(change.feedback_by_field) == {"tau2", "manager_params"}
    assert "is not name=value" in change.feedback_by_field["manager_params"]
    assert real_api.requests_to("PATCH", f"/jobs/{job['id']}/config") == []


def test_a_change_goes_from_pending_to_applied(api, real_api, job, config):
    body = plan_change(config, "ads", form(config, tau2=0.7)).body
    outcome = apply_change(api, job["id"], body)
    assert real_api.requests_to("PATCH", f"/jobs/{job['id']}/config")[-1].body == body
    assert "Stored configuration version 1: pending until the job applies it" in text(outcome.alert)
    pending = render_status(outcome.config)
    assert "pending: version 1" in text(find(pending, "tune-pending"))
    versions = render_versions(outcome.config)
    assert "ads.tau2: 0.8 → 0.7" in text(find(versions, "tune-version-1"))
    assert "pending" in text(find(versions, "tune-version-1"))

    real_api.ack(job["id"], 1)
    applied = stored(api, job["id"])
    status = render_status(applied)
    applied_at = format_timestamp(applied["versions"][1]["applied_at"])[-8:]
    assert f"In force: version 1 (applied {applied_at} UTC)" in text(status)
    assert "up to date" in text(find(status, "tune-up-to-date"))
    assert "applied" in text(find(render_versions(applied), "tune-version-1"))
    assert config_fingerprint(applied) != config_fingerprint(outcome.config)
    key = prefill_key(applied, "ads")
    assert key is not None and key[2] == 1


def test_a_target_below_the_last_measured_floor_is_shown_before_it_is_confirmed(
    api, real_api, job, config
):
    """The job measured the ads class's floor at 2.0 s, then 3.5 s: a new target of 2.5 s
    is below the newest floor, so the review names the floor and the violation to expect;
    4 s is not, and a class without a measured floor gets no warning."""
    for t, floor in ((10.0, 2.0), (11.0, 3.5)):
        real_api.add_sample(job["id"], "ads", CREATED.timestamp() + t, floor_s=floor)
    assert last_floor(api, job["id"], "ads") == pytest.approx(3.5)
    assert last_floor(api, job["id"], "fraud") is None
    below = plan_change(config, "ads", form(config, delay_target_s=2.5)).body
    warning = floor_warning(below, {"ads": 3.5})
    assert warning is not None
    assert "below the floor last measured, 3.5 s" in text(warning)
    assert "violation of at least 1 s" in text(warning)
    above = plan_change(config, "ads", form(config, delay_target_s=4.0)).body
    assert floor_warning(above, {"ads": 3.5}) is None
    fraud = plan_change(config, "fraud", form(config, "fraud", delay_target_s=0.5)).body
    assert floor_warning(fraud, {"fraud": None}) is None


def test_the_review_predicts_the_change_from_the_jobs_last_minutes(api, real_api, job, config):
    """Without samples the review says why there is no prediction; with them it shows,
    per class, what the job measured and what the replay predicts now and with the
    change (mean violation · loss)."""
    body = plan_change(config, "ads", form(config, priority=9.0)).body
    refused = text(find(prediction(api, job["id"], body), "tune-prediction"))
    assert "No prediction: " in refused and "no samples in its last 120 s" in refused
    for i in range(20):
        for name, load in (("fraud", 0.3), ("ads", 1.5)):
            real_api.add_sample(job["id"], name, CREATED.timestamp() + 10.0 + i, load=load)
    table = prediction(api, job["id"], body)
    shown = text(find(table, "tune-prediction"))
    assert "last 20 s replayed" in shown
    assert "Predicted with the change" in shown and "fraud" in shown and "ads" in shown
    record = text(find(table, "tune-track-record"))
    assert record == (
        "No prediction of a change to priority has been checked against what followed yet."
    )


def test_the_review_says_how_far_off_this_kinds_predictions_were() -> None:
    record: TrackRecord = {
        "kind": "delay_target_s,priority",
        "changes": 3,
        "violation_error_s": 0.25,
        "loss_error": 0.031,
        "figures": 12,
    }
    assert track_record_text("delay_target_s,priority", record) == (
        "Predictions of changes to delay_target_s, priority were off by 0.25 s of mean "
        "violation and 3.1 points of loss per class on average, over 3 applied changes."
    )
    assert track_record_text("", None) == "The change changes nothing in force."


def test_the_prediction_waits_longer_than_other_reads(real_api, job, config):
    """The replay takes seconds beside a running job: the review's request outlives the
    client's own timeout, which still bounds every other request."""
    body = plan_change(config, "ads", form(config, priority=9.0)).body
    real_api.add_sample(job["id"], "ads", CREATED.timestamp() + 10.0, load=1.5)
    token = real_api.token_for("ops")
    real_api.proxy.delays[f"/jobs/{job['id']}/config/preview"] = 0.6
    real_api.proxy.delays[f"/jobs/{job['id']}/config"] = 0.6
    try:
        with ApiClient(real_api.url, token=token, timeout_s=0.3) as hasty:
            shown = text(find(prediction(hasty, job["id"], body), "tune-prediction"))
            assert "replayed through the simulator" in shown, shown
            assert "did not answer in time" in text(load_config(hasty, job["id"]).alert)
    finally:
        real_api.proxy.delays.clear()


def test_the_cores_message_lands_on_the_field_it_names(api, job, config):
    outcome = apply_change(api, job["id"], {"classes": {"ads": {"tau2": 0.3}}})
    assert outcome.config is None
    assert set(outcome.feedback_by_field) == {"tau2"}
    assert outcome.feedback_by_field["tau2"].startswith("classes.ads.tau2=0.3 is invalid")
    assert "see the marked fields" in text(outcome.alert)

    outcome = apply_change(
        api, job["id"], {"classes": {"ads": {"manager_params": {"initial_headroom": -1}}}}
    )
    assert set(outcome.feedback_by_field) == {"manager_params"}
    assert "initial_headroom=-1" in outcome.feedback_by_field["manager_params"]

    outcome = apply_change(api, job["id"], {"classes": {"ads": {"manager": "nope"}}})
    assert "must be one of" in outcome.feedback_by_field["manager"]


def test_refusals_that_are_not_about_a_field(api, viewer_api, real_api, job, config):
    noop = apply_change(api, job["id"], {"classes": {"ads": {"tau2": 0.8}}})
    assert "leaves the configuration as it is" in text(noop.alert)
    denied = apply_change(viewer_api, job["id"], {"recommend_only": True})
    assert "needs operator or higher" in text(denied.alert)
    real_api.set_status(job["id"], "stopped")
    stopped = apply_change(api, job["id"], {"recommend_only": True})
    assert "a stopped or failed job takes no new configuration" in text(stopped.alert)


def test_a_job_without_configuration_and_an_unreachable_api(api, dead_url):
    from frontend.api import ApiClient

    assert load_config(api, 999).config is None
    assert load_config(api, None).config is None
    with ApiClient(dead_url, timeout_s=0.5) as down:
        loaded = load_config(down, 1)
    assert loaded.config is None and "Cannot reach" in text(loaded.alert)
    assert "no live configuration" in text(render_status(None))


def test_the_launch_version_is_in_force_without_an_acknowledgement(config):
    status = text(render_status(config))
    assert "In force: version 0 (the launch configuration)" in status
    assert "up to date" in status


def test_versions_list_newest_first_and_the_launch_version(api, job, config):
    apply_change(api, job["id"], {"recommend_only": True})
    apply_change(api, job["id"], {"classes": {"fraud": {"priority": 8}}})
    table = render_versions(load_config(api, job["id"]).config)
    rows = [getattr(row, "id", None) for row in of_type(table, "Tr")][1:]
    assert rows == ["tune-version-2", "tune-version-1", "tune-version-0"]
    assert "launch configuration" in text(find(table, "tune-version-0"))
    assert "at launch" in text(find(table, "tune-version-0"))
    assert "recommend_only: off → on" in text(find(table, "tune-version-1"))


def test_in_force_takes_back_what_the_job_has_not_applied(api, real_api, job, config):
    apply_change(api, job["id"], {"classes": {"ads": {"tau2": 0.7}}})
    apply_change(
        api,
        job["id"],
        {"classes": {"ads": {"manager_params": {"initial_headroom": 0.6}}}, "policy": "strict"},
    )
    real_api.ack(job["id"], 1)
    latest = stored(api, job["id"])
    assert latest["config"]["policy"] == "strict"
    force = in_force(latest)
    assert force["classes"]["ads"]["tau2"] == 0.7  # version 1: applied
    assert force["classes"]["ads"]["manager_params"] == {}  # version 2: not yet
    assert force["policy"] == DEFAULT_POLICY
    assert latest["config"]["classes"]["ads"]["manager_params"] == {"initial_headroom": 0.6}
    real_api.ack(job["id"], 2)
    final = stored(api, job["id"])
    assert in_force(final) == final["config"]

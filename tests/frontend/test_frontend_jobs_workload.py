"""The Jobs page's workload choice: generated streams for the chosen classes, or a stored
scenario (``JobCreate.scenario_id``), and which workload each job in the table runs."""

from __future__ import annotations

import pytest

from backend.jobs.schemas import JobCreate
from frontend.actions.jobs import (
    DEFAULT_POLICY_CHOICE,
    GENERATED,
    GENERATED_ONLY,
    START_FIELDS,
    build_start_request,
    keep_workload,
    launch_details,
    load_jobs_table,
    load_workload_choices,
    restart_job,
    scenario_of,
    scenario_value,
    start_field,
    start_job,
    workload_feedback,
    workload_form,
    workload_label,
)
from frontend.api import ApiClient, ScenarioSummary
from frontend.managers import POLICIES
from spark_runner.core.redistribution import DEFAULT_POLICY
from tests.frontend.frontend_tree import find, text

FORM = {
    "rate_per_s": 50,
    "spark_master": "local[2]",
    "manager": "ctrl",
    "recommend_only": True,
    "policy": "strict",
    "redistribution_every": "5",
}


# -- the choices ---------------------------------------------------------------------------


def test_the_choices_are_generated_then_every_stored_scenario(api, real_api):
    first = real_api.add_scenario("nightly")
    second = real_api.add_scenario("burst")
    choices = load_workload_choices(api)
    assert choices.options == [
        {"label": "generated: constant rate per class", "value": GENERATED},
        {"label": f"scenario: nightly (#{first['id']})", "value": f"scenario:{first['id']}"},
        {"label": f"scenario: burst (#{second['id']})", "value": f"scenario:{second['id']}"},
    ]
    assert [s["name"] for s in choices.scenarios] == ["nightly", "burst"]
    assert choices.alert is None
    assert len(real_api.requests_to("GET", "/scenarios")) == 1


def test_without_the_scenarios_the_generated_workload_stays(dead_url):
    with ApiClient(dead_url, timeout_s=0.5) as down:
        choices = load_workload_choices(down)
    assert [o["value"] for o in choices.options] == [GENERATED]
    assert "Stored scenarios could not be loaded: Cannot reach the API" in text(choices.alert)


def test_a_viewer_may_list_the_scenarios(viewer_api, real_api):
    real_api.add_scenario("nightly")
    assert len(load_workload_choices(viewer_api).options) == 2


def test_the_chosen_workload_is_kept_while_it_is_offered():
    options = [{"label": "g", "value": GENERATED}, {"label": "s", "value": "scenario:4"}]
    assert keep_workload("scenario:4", options) == "scenario:4"
    assert keep_workload("scenario:5", options) == GENERATED  # deleted meanwhile
    assert keep_workload(None, options) == GENERATED


@pytest.mark.parametrize(
    ("workload", "scenario_id", "wrong"),
    [
        (GENERATED, None, False),
        (None, None, False),  # a caller without the choice: today's generated workload
        ("scenario:7", 7, False),
        ("scenario:0", None, True),
        ("scenario:x", None, True),
        ("scenario:²", None, True),
        ("replay", None, True),
    ],
)
def test_workload_values(workload, scenario_id, wrong):
    assert scenario_of(workload) == scenario_id
    assert (workload_feedback(workload) is not None) is wrong
    if scenario_id is not None:
        assert scenario_value(scenario_id) == workload


# -- what applies ---------------------------------------------------------------------------


def test_the_generated_workload_uses_every_field():
    form = workload_form(GENERATED)
    assert form.scenario_id is None
    assert form.applies == frozenset(START_FIELDS)
    assert not form.classes_hidden and form.classes_note is None and not form.rate_disabled
    assert form.duration_placeholder == "until stopped"
    default = {"label": f"default ({DEFAULT_POLICY})", "value": DEFAULT_POLICY_CHOICE}
    assert form.policy_options[0] == default
    assert [o["value"] for o in form.policy_options[1:]] == list(POLICIES)


def test_a_scenario_brings_its_classes_and_arrivals():
    scenarios: list[ScenarioSummary] = [
        {"id": 3, "name": "nightly", "description": "Two classes. ", "updated_at": "x"},
    ]
    form = workload_form("scenario:3", scenarios)
    assert form.scenario_id == 3
    # JobCreate ignores class_ids and rate_per_s with a scenario_id: hidden, disabled.
    assert form.applies == frozenset(START_FIELDS) - {"class_ids", "rate_per_s"}
    ignored = JobCreate.model_fields["scenario_id"].description or ""
    assert all(f in ignored for f in GENERATED_ONLY) and "are then ignored" in ignored
    assert form.classes_hidden and form.rate_disabled
    assert (
        form.classes_note
        == "The classes of scenario 'nightly' run (the class choice does not apply)."
    )
    assert form.hint == "Runs scenario 'nightly': its classes, queries and arrivals. Two classes."
    assert "Does not apply" in form.rate_hint
    # Left empty, the scenario's own duration, policy and redistribution period apply.
    assert form.duration_placeholder == "the scenario's"
    assert form.redistribution_placeholder == "the scenario's"
    assert form.policy_options[0] == {"label": "the scenario's own", "value": DEFAULT_POLICY_CHOICE}
    # Not (yet) in the listed scenarios: named by its id.
    assert "scenario #9" in workload_form("scenario:9", scenarios).hint


# -- the request ----------------------------------------------------------------------------


def test_the_generated_request_sends_the_classes_and_the_rate():
    body, feedback = build_start_request(GENERATED, [1, 2], 60.0, FORM)
    assert feedback == {}
    assert body == {
        "class_ids": [1, 2],
        "duration_s": 60.0,
        "rate_per_s": 50.0,
        "spark_master": "local[2]",
        "manager": "ctrl",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": 5,
    }
    assert "scenario_id" not in JobCreate.model_validate(body).model_fields_set


def test_the_scenario_request_leaves_out_what_the_scenario_brings():
    body, feedback = build_start_request("scenario:4", [1, 2], None, FORM)
    assert feedback == {}
    assert body == {
        "scenario_id": 4,
        "duration_s": None,
        "spark_master": "local[2]",
        "manager": "ctrl",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": 5,
    }
    # The backend's own schema accepts it, with nothing it would ignore.
    chosen = JobCreate.model_validate(body).model_fields_set
    assert chosen.isdisjoint({"class_ids", "rate_per_s"})


def test_defaults_are_left_to_the_api_or_the_scenario():
    values = {"policy": DEFAULT_POLICY_CHOICE, "manager": "own", "redistribution_every": ""}
    body, feedback = build_start_request("scenario:4", [], None, values)
    assert body == {"scenario_id": 4, "duration_s": None} and feedback == {}
    body, _ = build_start_request(GENERATED, [1], None, values)
    assert body == {"class_ids": [1], "duration_s": None}


def test_a_scenario_needs_no_class_and_ignores_a_bad_rate():
    body, feedback = build_start_request("scenario:4", None, None, {"rate_per_s": "fast"})
    assert feedback == {} and body == {"scenario_id": 4, "duration_s": None}
    _, feedback = build_start_request(GENERATED, None, None, {"rate_per_s": "fast"})
    assert set(feedback) == {"class_ids", "rate_per_s"}


def test_an_unknown_workload_is_marked_on_the_workload():
    body, feedback = build_start_request("replay", [1], None, {})
    assert set(feedback) == {"workload"} and "class_ids" not in body


def test_api_error_keys_land_on_form_fields():
    assert start_field("scenario_id") == "workload"
    assert start_field("classes.gold.manager") == "manager"
    assert start_field("rate_per_s") == "rate_per_s"
    assert start_field("yaml") is None


# -- against the API ------------------------------------------------------------------------


def test_starting_a_scenario_runs_its_classes(api, real_api):
    real_api.add_class("clicks", 1.0, 3.0)  # registered, but not in the scenario
    scenario = real_api.add_scenario("nightly")
    outcome = start_job(
        api,
        [],
        None,
        idempotency_key="form-1",
        options={**FORM, "manager": "own", "policy": DEFAULT_POLICY_CHOICE},
        workload=scenario_value(scenario["id"]),
    )
    assert outcome.job is not None and "Started job" in text(outcome.alert)
    request = real_api.requests_to("POST", "/jobs")[-1]
    assert request.body == {
        "scenario_id": scenario["id"],
        "duration_s": None,
        "spark_master": "local[2]",
        "recommend_only": True,
        "redistribution_every": 5,
    }
    assert request.headers["idempotency-key"] == "form-1"
    assert [c["name"] for c in outcome.job["classes"]] == ["fraud"]  # the scenario's class
    launch = outcome.job["launch"]
    assert (launch["scenario_id"], launch["scenario_name"]) == (scenario["id"], "nightly")
    assert launch["rate_per_s"] is None and launch["duration_s"] == 120.0  # the scenario's


def test_the_apis_422_on_the_scenario_lands_on_the_workload(api, real_api):
    outcome = start_job(api, [], None, workload="scenario:3000000000")
    assert outcome.alert is None and set(outcome.feedback_by_field) == {"workload"}
    assert outcome.feedback_by_field["workload"].startswith("scenario_id=3000000000 is invalid")


def test_the_cores_message_on_a_scenario_class_manager_lands_on_the_manager(api, real_api):
    scenario = real_api.add_scenario("nightly")
    outcome = start_job(
        api, [], None, options={"manager": "nope"}, workload=scenario_value(scenario["id"])
    )
    assert outcome.alert is None
    assert outcome.feedback_by_field["manager"].startswith("classes.fraud.manager='nope'")


def test_a_scenario_deleted_meanwhile_is_reported(api, real_api):
    outcome = start_job(api, [], None, workload="scenario:99")
    assert outcome.job is None and outcome.feedback_by_field == {}
    assert "Could not start the job: scenario 99 does not exist" in text(outcome.alert)


# -- the table ------------------------------------------------------------------------------


def test_the_table_shows_which_workload_each_job_runs(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    generated = start_job(api, [fraud["id"]], None, options=FORM).job
    scenario = real_api.add_scenario("nightly")
    from_scenario = start_job(api, [], None, workload=scenario_value(scenario["id"])).job
    assert generated is not None and from_scenario is not None

    assert workload_label(generated) == "generated, 50 rows/s per class"
    assert launch_details(generated) == [
        "manager ctrl",
        "DILoS strict, every 5",
        "recommend only",
        "until stopped",
        "local[2]",
    ]
    assert workload_label(from_scenario) == f"scenario nightly (#{scenario['id']})"
    assert launch_details(from_scenario) == [
        "each class's manager",
        f"DILoS {DEFAULT_POLICY}, every 10",
        "120 s",
        "local[*]",
    ]

    table = load_jobs_table(api).table
    assert "generated, 50 rows/s per class" in text(find(table, f"job-workload-{generated['id']}"))
    cell = text(find(table, f"job-workload-{from_scenario['id']}"))
    assert f"scenario nightly (#{scenario['id']})" in cell and "120 s" in cell


def test_launch_details_name_mode_and_a_redis_source(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    job = real_api.add_job(["fraud"])
    job["launch"] = {
        "scenario_id": None,
        "scenario_name": None,
        "rate_per_s": None,
        "duration_s": 30.0,
        "manager": None,
        "mode": "per_class",
        "recommend_only": False,
        "policy": "relative",
        "redistribution_every": 10,
        "engine": {"source": "redis"},
    }
    assert workload_label(job) == "generated"
    assert launch_details(job) == [
        "each class's manager",
        "per-class quotas",
        "30 s",
        "local[*]",
        "redis source",
    ]


def test_a_restarted_scenario_job_runs_the_same_scenario(api, real_api):
    scenario = real_api.add_scenario("nightly")
    job = start_job(api, [], None, workload=scenario_value(scenario["id"])).job
    assert job is not None
    real_api.set_status(job["id"], "stopped")
    assert "Restarted job" in text(restart_job(api, job["id"]))
    new = real_api.jobs[max(real_api.jobs)]
    assert workload_label(new) == f"scenario nightly (#{scenario['id']})"
    assert [c["name"] for c in new["classes"]] == ["fraud"]

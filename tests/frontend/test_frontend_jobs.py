"""frontend.actions.jobs against the fake API (what the Jobs page callbacks do)."""

from __future__ import annotations

from frontend_tree import find, ids, of_type, text

from frontend.actions.jobs import (
    STOP_BUTTON_TYPE,
    live_href,
    load_class_choices,
    load_jobs_table,
    start_job,
    stop_job,
)


def test_class_choices_preselect_every_class(api, fake_api):
    fraud = fake_api.add_class("fraud", 6.0, 1.5)
    clicks = fake_api.add_class("clicks", 1.0, 3.0)
    choices = load_class_choices(api)
    assert choices.selected == [fraud["id"], clicks["id"]]
    assert choices.options[0] == {
        "label": "fraud (priority 6, target 1.5 s)",
        "value": fraud["id"],
    }
    assert choices.alert is None


def test_start_sends_the_chosen_classes_and_duration(api, fake_api):
    fraud = fake_api.add_class("fraud", 6.0, 1.5)
    fake_api.add_class("clicks", 1.0, 3.0)
    outcome = start_job(api, [fraud["id"]], 60.0)
    assert outcome.job is not None
    assert [c["name"] for c in outcome.job["classes"]] == ["fraud"]
    assert fake_api.requests_to("POST", "/jobs")[-1].body == {
        "class_ids": [fraud["id"]],
        "duration_s": 60.0,
    }
    assert "Started job" in text(outcome.alert)
    assert live_href(outcome.job["id"]) in [c.href for c in of_type(outcome.alert, "Link")]


def test_start_without_classes_is_refused_locally(api, fake_api):
    outcome = start_job(api, [], None)
    assert set(outcome.feedback_by_field) == {"class_ids"}
    assert fake_api.requests_to("POST", "/jobs") == []


def test_start_validation_errors_land_on_their_fields(api, fake_api):
    fraud = fake_api.add_class("fraud", 6.0, 1.5)
    outcome = start_job(api, [fraud["id"]], -5)
    assert set(outcome.feedback_by_field) == {"duration_s"}
    assert "must be > 0" in outcome.feedback_by_field["duration_s"]
    assert outcome.alert is None

    outcome = start_job(api, [fraud["id"], 999], None)
    assert "Unknown class ids" in outcome.feedback_by_field["class_ids"]


def test_table_shows_status_failure_reason_and_actions(api, fake_api):
    fake_api.add_class("fraud", 6.0, 1.5)
    fake_api.add_class("clicks", 1.0, 3.0)
    running = fake_api.add_job(["fraud", "clicks"], status="running")
    failed = fake_api.add_job(["fraud"], status="failed", failure_reason="py4j: driver died")
    table, alert = load_jobs_table(api)
    assert alert is None

    running_row = find(table, f"job-row-{running['id']}")
    assert "running" in text(running_row) and "fraud, clicks" in text(running_row)
    assert "driver died" in text(find(table, f"job-failure-{failed['id']}"))
    # Newest first.
    assert ids(table).index(f"job-row-{failed['id']}") < ids(table).index(
        f"job-row-{running['id']}"
    )
    # Only an active job can be stopped; every job links to its live view.
    stop_ids = [b.id for b in of_type(table, "Button")]
    assert stop_ids == [{"type": STOP_BUTTON_TYPE, "index": running["id"]}]
    hrefs = {link.href for link in of_type(table, "Link")}
    assert hrefs == {live_href(running["id"]), live_href(failed["id"])}


def test_stop(api, fake_api):
    fake_api.add_class("fraud", 6.0, 1.5)
    job = fake_api.add_job(["fraud"])
    assert "now stopping" in text(stop_job(api, job["id"]))
    assert fake_api.jobs[job["id"]]["status"] == "stopping"
    assert "404" in text(stop_job(api, 999))


def test_empty_jobs_table(api):
    table, alert = load_jobs_table(api)
    assert "No jobs yet" in text(table) and alert is None


def test_an_error_not_about_a_form_field_goes_to_the_alert(api, fake_api):
    # The real backend answers unknown class ids with 404 rather than 422.
    fake_api.overrides[("POST", "/jobs")] = (404, {"detail": "class_ids=[99] do not exist"})
    outcome = start_job(api, [99], None)
    assert outcome.feedback_by_field == {}
    assert "Could not start the job: class_ids=[99] do not exist" in text(outcome.alert)

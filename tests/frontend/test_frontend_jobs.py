"""frontend.actions.jobs against the real API (what the Jobs page callbacks do)."""

from __future__ import annotations

import pytest

from frontend.actions.jobs import (
    LOG_BUTTON_TYPE,
    RESTART_BUTTON_TYPE,
    STOP_BUTTON_TYPE,
    build_start_options,
    history_href,
    jobs_fingerprint,
    launch_details,
    live_href,
    load_class_choices,
    load_jobs_table,
    load_log,
    render_jobs_table,
    render_log,
    restart_job,
    split_failure,
    start_job,
    startup_progress,
    stop_job,
    waiting_since,
)
from tests.frontend.frontend_tree import find, ids, of_type, prop, text


def test_class_choices_preselect_every_class(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    clicks = real_api.add_class("clicks", 1.0, 3.0)
    choices = load_class_choices(api)
    assert choices.selected == [fraud["id"], clicks["id"]]
    assert choices.options[0] == {
        "label": "fraud (priority 6, target 1.5 s)",
        "value": fraud["id"],
    }
    assert choices.alert is None


def test_start_sends_the_chosen_classes_and_duration(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("clicks", 1.0, 3.0)
    outcome = start_job(api, [fraud["id"]], 60.0)
    assert outcome.job is not None
    assert [c["name"] for c in outcome.job["classes"]] == ["fraud"]
    assert real_api.requests_to("POST", "/jobs")[-1].body == {
        "class_ids": [fraud["id"]],
        "duration_s": 60.0,
    }
    assert "Started job" in text(outcome.alert)
    assert live_href(outcome.job["id"]) in [prop(c, "href") for c in of_type(outcome.alert, "Link")]


def test_start_without_classes_is_refused_locally(api, real_api):
    outcome = start_job(api, [], None)
    assert set(outcome.feedback_by_field) == {"class_ids"}
    assert real_api.requests_to("POST", "/jobs") == []


def test_start_validation_errors_land_on_their_fields(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    outcome = start_job(api, [fraud["id"]], -5)
    assert set(outcome.feedback_by_field) == {"duration_s"}
    assert "greater than 0" in outcome.feedback_by_field["duration_s"]
    assert outcome.alert is None

    outcome = start_job(api, [fraud["id"], 999], None)
    assert "every id must name an existing class" in outcome.feedback_by_field["class_ids"]


def test_table_shows_status_failure_reason_and_actions(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("clicks", 1.0, 3.0)
    running = real_api.add_job(["fraud", "clicks"], status="running")
    failed = real_api.add_job(["fraud"], status="failed", failure_reason="py4j: driver died")
    view = load_jobs_table(api)
    table = view.table
    assert view.alert is None

    running_row = find(table, f"job-row-{running['id']}")
    assert "running" in text(running_row) and "fraud, clicks" in text(running_row)
    assert "driver died" in text(find(table, f"job-failure-{failed['id']}"))
    # Newest first.
    assert ids(table).index(f"job-row-{failed['id']}") < ids(table).index(
        f"job-row-{running['id']}"
    )
    # An active job can be stopped, an ended one restarted; every job has a log and
    # links to its live view. Newest first.
    button_ids = [prop(b, "id") for b in of_type(table, "Button")]
    assert button_ids == [
        {"type": LOG_BUTTON_TYPE, "index": failed["id"]},
        {"type": RESTART_BUTTON_TYPE, "index": failed["id"]},
        {"type": LOG_BUTTON_TYPE, "index": running["id"]},
        {"type": STOP_BUTTON_TYPE, "index": running["id"]},
    ]
    hrefs = {prop(link, "href") for link in of_type(table, "Link")}
    assert hrefs == {
        live_href(running["id"]),
        live_href(failed["id"]),
        history_href(running["id"]),
        history_href(failed["id"]),
    }


def test_stop(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    job = real_api.add_job(["fraud"])
    assert "now stopping" in text(stop_job(api, job["id"]))
    assert real_api.jobs[job["id"]]["status"] == "stopping"
    assert "404" in text(stop_job(api, 999))


def test_empty_jobs_table(api):
    view = load_jobs_table(api)
    assert "No jobs yet" in text(view.table) and view.alert is None


def test_the_table_is_only_rendered_again_when_the_jobs_changed(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    job = real_api.add_job(["fraud"], status="pending")
    first = load_jobs_table(api)
    assert first.table is not None and first.fingerprint is not None
    same = load_jobs_table(api, previous=first.fingerprint)
    assert same.table is None and same.fingerprint == first.fingerprint  # keep the buttons
    real_api.set_status(job["id"], "starting")
    moved = load_jobs_table(api, previous=first.fingerprint)
    assert moved.table is not None and moved.fingerprint != first.fingerprint
    jobs = list(real_api.jobs.values())
    assert jobs_fingerprint(jobs, True) != jobs_fingerprint(jobs, False)


def test_an_api_error_gives_a_placeholder_and_an_alert(dead_url):
    from frontend.api import ApiClient

    with ApiClient(dead_url, timeout_s=0.5) as down:
        view = load_jobs_table(down, previous="abc")
    assert "could not be loaded" in text(view.table) and "Cannot reach" in text(view.alert)
    assert view.fingerprint is None


def test_an_error_not_about_a_form_field_goes_to_the_alert(api, real_api):
    # A form's Idempotency-Key sent again with another body: the API's 422 names the
    # key, which is no field of the form.
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    assert start_job(api, [fraud["id"]], None, idempotency_key="form-9").job is not None
    outcome = start_job(api, [fraud["id"]], 60.0, idempotency_key="form-9")
    assert outcome.feedback_by_field == {}
    assert "Could not start the job: Idempotency-Key: 'form-9' was used for another request" in (
        text(outcome.alert)
    )


def test_a_viewer_gets_logs_but_no_stop_or_restart_buttons(viewer_api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    running = real_api.add_job(["fraud"], status="running")
    failed = real_api.add_job(["fraud"], status="failed", failure_reason="boom")
    view = load_jobs_table(viewer_api, can_control=False)
    assert view.alert is None
    assert [prop(b, "id") for b in of_type(view.table, "Button")] == [
        {"type": LOG_BUTTON_TYPE, "index": failed["id"]},
        {"type": LOG_BUTTON_TYPE, "index": running["id"]},
    ]
    assert "An operator can start one" in text(render_jobs_table([], can_control=False))


def test_start_up_shows_progress_and_the_wait(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    pending = real_api.add_job(["fraud"], status="pending")
    starting = real_api.add_job(["fraud"], status="starting")
    running = real_api.add_job(["fraud"], status="running")
    assert startup_progress(pending) == (1, "queued for a worker")
    assert startup_progress(starting) == (2, "Spark is starting")
    assert startup_progress(running) is None
    assert waiting_since(pending) == pending["created_at"]
    assert waiting_since(starting) == starting["started_at"]

    table = load_jobs_table(api).table
    assert "1/3 queued for a worker since 04:00:00 UTC" in text(
        find(table, f"job-row-{pending['id']}")
    )
    assert "2/3 Spark is starting since 04:00:05 UTC" in text(
        find(table, f"job-row-{starting['id']}")
    )
    assert not of_type(find(table, f"job-row-{running['id']}"), "Progress")
    progress_ids = [prop(p, "id") for p in of_type(table, "Progress")]
    assert progress_ids == [f"job-progress-{starting['id']}", f"job-progress-{pending['id']}"]


def test_failure_row_shows_the_reason_without_the_log_tail(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    reason = "the job process exited with code 1\n--- log tail ---\nTraceback\nOOM"
    failed = real_api.add_job(["fraud"], status="failed", failure_reason=reason)
    table = load_jobs_table(api).table
    row = text(find(table, f"job-failure-{failed['id']}"))
    assert "failed: the job process exited with code 1" in row
    assert "Traceback" not in row and "Open its log" in row
    assert split_failure(reason) == ("the job process exited with code 1", ["Traceback", "OOM"])
    assert split_failure(None) == ("no reason given", [])


def test_restart_starts_a_new_run(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    stopped = real_api.add_job(["fraud"], status="stopped")
    alert = restart_job(api, stopped["id"])
    new_id = max(real_api.jobs)
    assert f"Restarted job {stopped['id']} as job {new_id} (pending)" in text(alert)
    assert live_href(new_id) in [prop(c, "href") for c in of_type(alert, "Link")]
    assert real_api.jobs[new_id]["restart_of"] == stopped["id"]


def test_restart_of_a_running_job_shows_the_409(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    running = real_api.add_job(["fraud"], status="running")
    alert = restart_job(api, running["id"])
    assert "only a stopped or failed job can be restarted" in text(alert)


def test_a_403_shows_the_apis_sentence(viewer_api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    stopped = real_api.add_job(["fraud"], status="stopped")
    message = "role='viewer' may not do this: it needs operator or higher"
    assert text(restart_job(viewer_api, stopped["id"])).endswith(message)
    assert message in text(stop_job(viewer_api, stopped["id"]))
    outcome = start_job(viewer_api, [1], None)
    assert f"Could not start the job: {message}" in text(outcome.alert)


def test_start_sends_the_idempotency_key_and_a_retry_gets_the_same_job(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    first = start_job(api, [fraud["id"]], None, idempotency_key="form-1")
    again = start_job(api, [fraud["id"]], None, idempotency_key="form-1")
    assert first.job is not None and again.job is not None
    assert first.job["id"] == again.job["id"]
    assert len(real_api.jobs) == 1
    assert real_api.requests_to("POST", "/jobs")[-1].headers["idempotency-key"] == "form-1"


def test_log_of_a_failed_job_has_its_reason_and_last_lines(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    failed = real_api.add_job(
        ["fraud"], status="failed", failure_reason="exited with code 1\n--- log tail ---\nx"
    )
    real_api.write_log(failed["id"], [f"line {i}" for i in range(300)])
    view = load_log(api, failed["id"])
    assert view.failure == "exited with code 1"
    assert view.lines == [f"line {i}" for i in range(100, 300)]  # the last 200
    assert not view.live  # a failed job writes nothing more
    assert real_api.requests_to("GET", f"/jobs/{failed['id']}/log")[-1].query == {"lines": ["200"]}
    body = render_log(view)
    assert "Failed: exited with code 1" in text(find(body, "job-log-failure"))
    assert "line 299" in text(find(body, "job-log-lines"))


def test_log_of_a_running_job_keeps_polling_and_an_empty_log_says_so(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    running = real_api.add_job(["fraud"], status="running")
    view = load_log(api, running["id"])
    assert view.live and view.failure is None
    assert "the log is empty so far" in text(render_log(view))
    missing = load_log(api, 999)
    assert "Could not read the log of job 999" in text(render_log(missing))


def test_start_options_become_the_api_fields(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    options = {
        "rate_per_s": 50,
        "spark_master": " local[2] ",
        "manager": "ctrl",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": "5",
    }
    outcome = start_job(api, [fraud["id"]], 120.0, options=options)
    assert outcome.job is not None
    assert real_api.requests_to("POST", "/jobs")[-1].body == {
        "class_ids": [fraud["id"]],
        "duration_s": 120.0,
        "rate_per_s": 50.0,
        "spark_master": "local[2]",
        "manager": "ctrl",
        "recommend_only": True,
        "policy": "strict",
        "redistribution_every": 5,
    }


def test_empty_options_are_left_to_the_api():
    body, feedback = build_start_options(
        {
            "rate_per_s": "",
            "spark_master": "",
            "manager": "own",
            "recommend_only": False,
            "policy": None,
            "redistribution_every": None,
        }
    )
    assert body == {} and feedback == {}


def test_a_bad_option_is_marked_without_a_request(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    outcome = start_job(api, [fraud["id"]], None, options={"rate_per_s": "fast"})
    assert set(outcome.feedback_by_field) == {"rate_per_s"}
    assert real_api.requests_to("POST", "/jobs") == []


def test_the_cores_message_about_the_manager_lands_on_the_manager(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    outcome = start_job(api, [fraud["id"]], None, options={"manager": "nope"})
    assert set(outcome.feedback_by_field) == {"manager"}
    assert "'nope' is invalid: must be one of aloma" in outcome.feedback_by_field["manager"]
    assert outcome.alert is None


def test_start_sends_the_source_and_the_output(api, real_api):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    options = {"source": "generator", "sink": "json"}
    outcome = start_job(api, [fraud["id"]], None, options=options)
    assert outcome.job is not None
    assert real_api.requests_to("POST", "/jobs")[-1].body == {
        "class_ids": [fraud["id"]],
        "duration_s": None,
        "source": "generator",
        "sink": "json",
    }
    engine = outcome.job["launch"]["engine"]
    assert (engine.get("source"), engine.get("sink")) == ("generator", "json")
    assert launch_details(outcome.job)[-1] == "json output"  # the generator goes unsaid


@pytest.mark.parametrize("field", ["source", "sink"])
def test_redis_without_a_redis_on_the_control_plane_shows_under_its_select(api, real_api, field):
    fraud = real_api.add_class("fraud", 6.0, 1.5)
    outcome = start_job(api, [fraud["id"]], None, options={field: "redis"})
    assert outcome.job is None and outcome.alert is None
    assert outcome.feedback_by_field == {
        field: f"{field}='redis' is invalid: no Redis for streams is configured on the "
        "control plane (set HEADROOM_STREAMS_REDIS_URL)"
    }
    assert real_api.jobs == {}

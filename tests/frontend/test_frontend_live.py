"""frontend.actions.live against the fake API (what the Live page callbacks do)."""

from __future__ import annotations

import pytest
from frontend_tree import text

from frontend.actions.live import (
    job_options,
    load_job_choices,
    metrics_since,
    parse_job_id,
    pick_job,
    recent,
    refresh_live,
)
from frontend.api import ApiClient

T0 = 1_763_700_000.0


@pytest.fixture
def job(fake_api):
    fake_api.add_class("fraud", 6.0, 1.5)
    fake_api.add_class("clicks", 1.0, 3.0)
    return fake_api.add_job(["fraud", "clicks"], status="running")


@pytest.mark.parametrize(
    ("value", "expected"), [("3", 3), (3, 3), (" 12 ", 12), ("x", None), (None, None), (True, None)]
)
def test_parse_job_id(value, expected):
    assert parse_job_id(value) == expected


def jobs_with(*statuses):
    return [{"id": i + 1, "status": s, "classes": []} for i, s in enumerate(statuses)]


def test_pick_job_prefers_current_then_requested_then_newest_active():
    jobs = jobs_with("running", "stopped", "running", "failed")
    assert pick_job(jobs, requested=2, current=1) == 1
    assert pick_job(jobs, requested=2, current=None) == 2
    assert pick_job(jobs, requested=99, current=None) == 3
    assert pick_job(jobs_with("stopped", "failed"), None, None) == 2
    assert pick_job([], 1, 1) is None


def test_job_options_newest_first(api, job):
    jobs, alert = load_job_choices(api)
    assert alert is None
    assert job_options(jobs) == [
        {"label": f"Job {job['id']} · running · fraud, clicks", "value": job["id"]}
    ]


def test_metrics_since_and_recent_window():
    assert metrics_since(None, 3, 300.0) is None
    assert metrics_since({"job_id": 4, "latest_t": T0}, 3, 300.0) is None
    assert metrics_since({"job_id": 3, "latest_t": None}, 3, 300.0) is None
    assert metrics_since({"job_id": 3, "latest_t": T0}, 3, 300.0) == T0 - 300.0

    samples = [{"class_name": "fraud", "t": t} for t in (T0, T0 + 5, T0 + 10)]
    assert [s["t"] for s in recent(samples, 5.0)] == [T0 + 5, T0 + 10]
    assert recent([], 5.0) == []


def test_refresh_draws_samples_and_moves_the_cursor(api, fake_api, job):
    fake_api.add_sample(job["id"], "fraud", T0, response_time_mean_s=0.5)
    fake_api.add_sample(job["id"], "clicks", T0 + 0.5, response_time_mean_s=4.0)

    view = refresh_live(api, job["id"], None, window_s=60.0)
    assert view.cursor == {"job_id": job["id"], "latest_t": T0 + 0.5}
    assert view.polling
    names = [t.name for t in view.response_time.data]
    assert "fraud target 1.5 s" in names and "clicks target 3 s" in names
    assert [t.name for t in view.throughput.data] == [
        "fraud arrivals",
        "fraud output",
        "clicks arrivals",
        "clicks output",
    ]
    assert view.response_time.layout.uirevision == job["id"]
    summary = text(view.summary)
    assert "within target" in summary and "over target" in summary
    assert fake_api.requests_to("GET", f"/jobs/{job['id']}/metrics")[-1].query == {}

    # The next refresh asks for one window before the newest sample only.
    fake_api.add_sample(job["id"], "fraud", T0 + 1.0)
    view = refresh_live(api, job["id"], view.cursor, window_s=60.0)
    assert fake_api.requests_to("GET", f"/jobs/{job['id']}/metrics")[-1].query == {
        "since": [repr(T0 + 0.5 - 60.0)]
    }
    assert view.cursor["latest_t"] == T0 + 1.0


def test_polling_stops_once_an_ended_job_has_nothing_new(api, fake_api, job):
    fake_api.add_sample(job["id"], "fraud", T0)
    fake_api.jobs[job["id"]]["status"] = "stopped"
    first = refresh_live(api, job["id"], None)
    assert first.polling  # first sight of the samples: one more look
    second = refresh_live(api, job["id"], first.cursor)
    assert not second.polling


def test_failed_job_shows_its_reason(api, fake_api):
    fake_api.add_class("fraud", 6.0, 1.5)
    failed = fake_api.add_job(["fraud"], status="failed", failure_reason="OOM in executor 2")
    view = refresh_live(api, failed["id"], None)
    assert "OOM in executor 2" in text(view.summary)
    assert len(view.response_time.data) == 0  # no samples: empty but valid figure


def test_no_job_chosen(api):
    view = refresh_live(api, None, None)
    assert not view.polling and view.cursor is None
    assert "No job chosen" in text(view.summary)


def test_missing_job_stops_polling_and_unreachable_api_keeps_figures(api, dead_url):
    gone = refresh_live(api, 42, None)
    assert not gone.polling and "404" in text(gone.summary)

    cursor = {"job_id": 42, "latest_t": T0}
    with ApiClient(dead_url, timeout_s=0.5) as down:
        view = refresh_live(down, 42, cursor)
    assert view.response_time is None and view.throughput is None  # keep what is on screen
    assert view.polling and view.cursor == cursor


def test_summary_of_a_period_without_output(api, fake_api, job):
    fake_api.add_sample(job["id"], "fraud", T0, response_time_mean_s=None, response_time_max_s=None)
    view = refresh_live(api, job["id"], None)
    summary = text(view.summary)
    assert "within target" not in summary and "over target" not in summary

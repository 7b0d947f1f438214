"""frontend.actions.live against the real API (what the Live page's chart callback does)."""

from __future__ import annotations

from typing import cast

import pytest

from frontend.actions.live import (
    JOB_REFRESH_TICKS,
    LATE_MARGIN_S,
    LIVE_WAIT_S,
    LIVE_WINDOW_S,
    LiveCursor,
    class_bands,
    job_options,
    load_job_choices,
    new_samples,
    parse_job_id,
    parse_window,
    pick_job,
    refresh_live,
    window_options,
)
from frontend.api import ApiClient, MetricSample
from tests.frontend.frontend_tree import find, text

T0 = 1_763_700_000.0
FULL = {
    "response_time_p50_s": 0.3,
    "response_time_p95_s": 0.7,
    "response_time_p99_s": 0.9,
    "shed_count": 20,
    "load": 0.9,
    "capacity_share": 0.5,
    "headroom": 0.8,
    "capacity_usage": 1.125,
    "shed_fraction": 0.1,
    "oracle_shed_fraction": 0.08,
    "manager": "aloma",
    "manager_state": "OT",
    "redistributed": False,
    "config_version": 0,
}


@pytest.fixture
def job(real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("clicks", 1.0, 3.0)
    return real_api.add_job(["fraud", "clicks"], status="running")


def metric_queries(real_api, job_id):
    return [r.query for r in real_api.requests_to("GET", f"/jobs/{job_id}/metrics")]


@pytest.mark.parametrize(
    ("value", "expected"), [("3", 3), (3, 3), (" 12 ", 12), ("x", None), (None, None), (True, None)]
)
def test_parse_job_id(value, expected):
    assert parse_job_id(value) == expected


def test_parse_window_takes_only_offered_windows():
    assert parse_window("60.0") == 60.0
    assert parse_window(120) == 120.0
    assert parse_window("7") == LIVE_WINDOW_S
    assert parse_window(None) == LIVE_WINDOW_S
    assert [o["value"] for o in window_options()] == ["60.0", "120.0", "300.0", "600.0"]


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


def test_first_refresh_draws_the_newest_window_whole(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0, response_time_mean_s=0.5)
    real_api.add_sample(job["id"], "clicks", T0 + 0.5, response_time_mean_s=4.0)

    view = refresh_live(api, job["id"], None, window_s=60.0)
    assert metric_queries(real_api, job["id"]) == [{"last_s": ["60.0"]}]
    assert view.extend is None and view.polling
    assert view.figure is not None
    names = [t["name"] for t in view.figure["data"]]
    # Response time (mean, and max for want of p95), then input and output rate per
    # class; then one legend entry per class.
    assert names == [
        "fraud mean",
        "fraud max",
        "clicks mean",
        "clicks max",
        "fraud input",
        "fraud output",
        "clicks input",
        "clicks output",
        "fraud",
        "clicks",
    ]
    cursor = view.cursor
    assert cursor is not None
    assert cursor["job_id"] == job["id"] and cursor["newest_t"] == T0 + 0.5
    assert cursor["last_seq"] == {"fraud": 0, "clicks": 0}
    assert cursor["shown"] == [T0, T0 + 0.5]
    assert cursor["plans"]["response_time"][0] == ["series", "fraud", "mean"]
    summary = text(view.summary)
    assert "within target" in summary and "over target" in summary
    assert "newest sample" in summary


def test_later_refreshes_send_only_the_new_points(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0)
    real_api.add_sample(job["id"], "clicks", T0)
    first = refresh_live(api, job["id"], None)

    real_api.add_sample(job["id"], "fraud", T0 + 1, response_time_mean_s=0.6)
    view = refresh_live(api, job["id"], first.cursor)
    # The look-back window, answered as soon as it holds a sample newer than T0.
    assert metric_queries(real_api, job["id"])[-1] == {
        "since": [repr(T0 - LATE_MARGIN_S)],
        "newer_than": [repr(T0)],
        "wait_s": [repr(LIVE_WAIT_S)],
    }
    assert view.figure is None
    assert view.extend is not None
    update, indices, _limits = view.extend
    assert indices == [0, 1, 4, 5]  # fraud mean and max, fraud input and output
    assert update["y"] == [[0.6], [0.93], [200.0], [98.0]]
    assert view.cursor is not None
    assert view.cursor["last_seq"] == {"fraud": 1, "clicks": 0}
    assert view.cursor["shown"] == [T0 + 1]

    # A sample of the same period posted later (older than the newest) is still drawn,
    # and nothing is drawn twice.
    real_api.add_sample(job["id"], "clicks", T0 + 0.9)
    late = refresh_live(api, job["id"], view.cursor)
    assert late.extend is not None and late.extend[1] == [2, 3, 6, 7]
    again = refresh_live(api, job["id"], late.cursor)
    assert again.extend is None and again.figure is None and again.summary is None
    assert again.cursor is not None and again.cursor["shown"] == []


def test_a_new_metric_or_class_draws_the_charts_again(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0)
    first = refresh_live(api, job["id"], None)
    assert first.cursor is not None and first.cursor["plans"]["load"] == []

    real_api.add_sample(job["id"], "fraud", T0 + 1, **FULL)  # the runner now reports more
    view = refresh_live(api, job["id"], first.cursor)
    assert view.figure is not None and view.extend is None
    names = [t["name"] for t in view.figure["data"]]
    assert "fraud load L" in names and "fraud headroom L_C" in names and "fraud p95" in names
    assert "OT" in text(view.summary) and "10%" in text(view.summary)
    assert metric_queries(real_api, job["id"])[-1] == {"last_s": [repr(LIVE_WINDOW_S)]}


def test_bands_come_from_the_live_configuration(api, real_api, job):
    config = api.job_config(job["id"])
    managers = api.list_managers()
    bands = class_bands(api.get_job(job["id"]), config, managers)
    assert bands["fraud"] == pytest.approx((1.35, 1.5, 1.65))  # ALoMa's default margins
    without = class_bands(api.get_job(job["id"]), None, managers)
    assert without["fraud"] == (1.5, 1.5, 1.5)

    real_api.add_sample(job["id"], "fraud", T0)
    first = refresh_live(api, job["id"], None, config, managers=managers)
    same = refresh_live(api, job["id"], first.cursor, config, managers=managers)
    assert same.figure is None
    # The delay target is tuned: nothing moves until the job applies the change...
    pending = api.change_job_config(job["id"], {"classes": {"fraud": {"delay_target_s": 2.0}}})
    still = refresh_live(api, job["id"], same.cursor, pending, managers=managers)
    assert still.figure is None
    # ...then the band moves, so the charts are drawn again.
    real_api.ack(job["id"], 1)
    tuned = api.job_config(job["id"])
    view = refresh_live(api, job["id"], still.cursor, tuned, managers=managers)
    assert view.figure is not None
    shapes = view.figure["layout"]["shapes"]
    lines = [s["y0"] for s in shapes if s["type"] == "line"]
    assert 2.0 in lines
    assert "2" in text(find(view.summary, "live-row-fraud"))


def test_new_samples_are_those_above_the_last_seq():
    samples = cast(
        list[MetricSample],  # only the fields new_samples reads
        [
            {"class_name": "a", "seq": 3, "t": T0},
            {"class_name": "a", "seq": 4, "t": T0 + 1},
            {"class_name": "b", "seq": 0, "t": T0},
        ],
    )
    assert [s["seq"] for s in new_samples(samples, {"a": 3})] == [4, 0]


def test_the_job_is_read_every_few_refreshes(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0)
    cursor = refresh_live(api, job["id"], None).cursor
    before = len(real_api.requests_to("GET", f"/jobs/{job['id']}"))
    for _ in range(2 * JOB_REFRESH_TICKS):
        cursor = refresh_live(api, job["id"], cursor).cursor
    assert len(real_api.requests_to("GET", f"/jobs/{job['id']}")) - before == 2


def test_polling_stops_once_an_ended_job_has_nothing_new(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0)
    view = refresh_live(api, job["id"], None)
    real_api.set_status(job["id"], "stopped")
    for _ in range(JOB_REFRESH_TICKS):  # the status is read again within these
        view = refresh_live(api, job["id"], view.cursor)
    assert view.polling and "stopped" in text(view.summary)  # one more look
    last = refresh_live(api, job["id"], view.cursor)
    assert not last.polling
    assert "wait_s" not in metric_queries(real_api, job["id"])[-1]  # nothing more will come


def test_failed_job_shows_its_reason(api, real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    failed = real_api.add_job(["fraud"], status="failed", failure_reason="OOM in executor 2")
    view = refresh_live(api, failed["id"], None)
    assert "OOM in executor 2" in text(view.summary)
    assert view.figure is not None
    assert [t["name"] for t in view.figure["data"]] == ["fraud"]  # only the legend entry


def test_no_job_chosen(api):
    view = refresh_live(api, None, None)
    assert not view.polling and view.cursor is None
    assert "No job chosen" in text(view.summary)


def test_missing_job_stops_polling_and_unreachable_api_keeps_the_charts(api, dead_url):
    gone = refresh_live(api, 42, None)
    assert not gone.polling and "404" in text(gone.alert)

    # Partial: refresh_live stops at reading the job, before it needs the other fields.
    cursor = cast(LiveCursor, {"job_id": 42, "newest_t": T0})
    with ApiClient(dead_url, timeout_s=0.5) as down:
        view = refresh_live(down, 42, cursor)
    assert view.figure is None and view.extend is None  # keep what is on screen
    assert view.polling and view.cursor == cursor
    assert "Cannot reach the API" in text(view.alert)


def test_a_warmup_period_is_not_shown_as_over_target(api, real_api, job):
    """The newest period waited through Spark's start: its response time is no verdict
    on the target, and the band on the response-time chart says why."""
    real_api.add_sample(job["id"], "fraud", T0, response_time_mean_s=25.0, warmup=True)
    view = refresh_live(api, job["id"], None)
    row = text(find(view.summary, "live-row-fraud"))
    assert "warm-up" in row and "over target" not in row
    assert view.figure is not None
    assert any(t.get("legendgroup") == "warmup" for t in view.figure["data"])


def test_summary_shows_dashes_for_what_a_job_does_not_report(api, real_api, job):
    real_api.add_sample(job["id"], "fraud", T0, response_time_mean_s=None, response_time_max_s=None)
    view = refresh_live(api, job["id"], None)
    row = text(find(view.summary, "live-row-fraud"))
    assert "within target" not in row and "over target" not in row
    assert row.count("—") >= 6

"""frontend.actions.history against the real API (what the History page callbacks do)."""

from __future__ import annotations

import csv
import io

import pytest

from frontend.actions.history import (
    SINCE_SLACK_S,
    describe_range,
    export_csv,
    load_comparison,
    load_run,
    pick_run,
    render_comparison,
    render_run,
    run_options,
    run_span,
    slider_settings,
    time_range,
)
from tests.frontend.frontend_tree import find, ids, prop, text

T0 = 1_763_700_000.0


def fill(real_api, job_id, periods, *, full=True):
    samples = []
    for i in range(periods):
        for name, target in (("fraud", 1.5), ("clicks", 3.0)):
            extra = {}
            if full:
                extra = {
                    "response_time_p95_s": 0.5 * target + 0.01 * i,
                    "shed_count": 20,
                    "shed_fraction": 0.1,
                    "oracle_shed_fraction": 0.08,
                }
            samples.append(real_api.make_sample(job_id, name, T0 + i, **extra))
    real_api.post_samples(job_id, samples)


@pytest.fixture
def runs(real_api):
    real_api.add_class("fraud", 6.0, 1.5)
    real_api.add_class("clicks", 1.0, 3.0)
    first = real_api.add_job(["fraud", "clicks"], status="stopped")
    second = real_api.add_job(["fraud", "clicks"], status="stopped")
    fill(real_api, first["id"], 120)
    fill(real_api, second["id"], 60, full=False)
    return first, second


def test_runs_newest_first_and_the_requested_one(api, runs):
    first, second = runs
    jobs = api.list_jobs()
    options = run_options(jobs)
    assert [o["value"] for o in options] == [second["id"], first["id"]]
    assert options[0]["label"].startswith(f"Job {second['id']} · stopped · fraud, clicks")
    assert pick_run(jobs, first["id"]) == first["id"]
    assert pick_run(jobs, 999) == second["id"]
    assert pick_run([], None) is None


def test_the_time_range_is_seconds_since_the_first_sample(api, runs):
    first, _ = runs
    span, alert = run_span(api, first["id"])
    assert alert is None and span == (T0, T0 + 119)
    slider = slider_settings(span)
    assert slider["min"] == 0 and slider["max"] == 119 and slider["value"] == [0, 119]
    assert slider["marks"][0] == "0 s" and slider["marks"][119] == "119 s"
    assert time_range(span, [0, 119]) == (None, None)  # the whole run
    assert time_range(span, [10, 60]) == (T0 + 10 - SINCE_SLACK_S, T0 + 60)
    assert describe_range(span, [10, 60]).endswith("(50 s)")
    assert "whole run" in describe_range(span, [0, 119])
    assert run_span(api, None) == (None, None)


def test_a_run_without_samples_and_a_missing_run(api, real_api, dead_url):
    real_api.add_class("fraud", 6.0, 1.5)
    empty = real_api.add_job(["fraud"], status="pending")
    assert run_span(api, empty["id"]) == (None, None)
    assert describe_range(None, None) == "This run has no samples yet."
    assert slider_settings(None)["max"] == 1
    span, alert = run_span(api, 999)
    assert span is None and "Could not read job 999" in text(alert)
    view = load_run(api, 999, None, None)
    assert view.summary is None and "Could not load job 999" in text(view.alert)
    assert render_run(view, column="a") == [view.alert]


def test_one_run_in_a_range_shows_qos_and_qod_per_class(api, real_api, runs):
    first, _ = runs
    span, _ = run_span(api, first["id"])
    view = load_run(api, first["id"], span, [10, 60])
    summary_query = real_api.requests_to("GET", f"/jobs/{first['id']}/summary")[-1].query
    assert summary_query == {
        "since": [repr(T0 + 10 - SINCE_SLACK_S)],
        "until": [repr(T0 + 60)],
    }
    assert view.summary is not None
    fraud = next(c for c in view.summary["classes"] if c["class_name"] == "fraud")
    assert fraud["periods"] == 51 and fraud["loss_fraction"] == pytest.approx(0.1)

    parts = render_run(view, column="a")
    qos = text(find(parts, "history-a-qos-fraud"))
    # target, periods, warm-up periods, mean response time
    assert qos.startswith("fraud 1.500 51 0 0.410")
    qod = text(find(parts, "history-a-qod-fraud"))
    assert "10,200" in qod and "10.0%" in qod and "8.0%" in qod  # arrived, loss, oracle
    assert {"history-a-series", "history-a-qos", "history-a-qod"} <= set(ids(parts))
    series = prop(find(parts, "history-a-series"), "figure")
    assert [t.name for t in series.data][:2] == ["fraud mean", "fraud p95"]


def test_a_skeleton_run_shows_dashes_for_qod(api, runs):
    _, second = runs
    span, _ = run_span(api, second["id"])
    parts = render_run(load_run(api, second["id"], span, None), column="b")
    qod = text(find(parts, "history-b-qod-clicks"))
    assert qod.count("—") == 5  # shed, loss, mean shed, oracle loss, oracle gap


def test_long_ranges_are_downsampled_on_the_server(api, real_api, runs):
    first, _ = runs
    load_run(api, first["id"], (T0, T0 + 3000), None)
    query = real_api.requests_to("GET", f"/jobs/{first['id']}/metrics")[-1].query
    assert query == {"limit": ["100000"], "step_s": ["10"]}


def test_two_whole_runs_come_from_compare(api, real_api, runs):
    first, second = runs
    spans = (run_span(api, first["id"])[0], run_span(api, second["id"])[0])
    a, b = load_comparison(api, first["id"], second["id"], spans, [0, 119])
    assert real_api.requests_to("GET", "/runs/compare")[-1].query == {
        "a": [str(first["id"])],
        "b": [str(second["id"])],
    }
    assert a.summary is not None and b.summary is not None
    assert a.summary["job"]["id"] == first["id"] and b.summary["job"]["id"] == second["id"]
    figure = prop(render_comparison(a, b), "figure")
    assert [t.name for t in figure.data] == [f"job {first['id']}"] * 2 + [f"job {second['id']}"] * 2

    # A part of the runs: the same offsets over each run's own first sample.
    a, b = load_comparison(api, first["id"], second["id"], spans, [5, 30])
    assert real_api.requests_to("GET", f"/jobs/{second['id']}/summary")[-1].query == {
        "since": [repr(T0 + 5 - SINCE_SLACK_S)],
        "until": [repr(T0 + 30)],
    }
    assert b.summary is not None
    assert next(c for c in b.summary["classes"] if c["class_name"] == "fraud")["periods"] == 26
    assert render_comparison(a, load_run(api, 999, None, None)) is None


def test_csv_download_goes_through_the_dashboard(api, real_api, runs):
    first, _ = runs
    span, _ = run_span(api, first["id"])
    download, alert = export_csv(api, first["id"], span, [0, 9])
    assert alert is None and download is not None
    assert download["filename"] == f"job-{first['id']}-metrics.csv"
    assert download["type"] == "text/csv" and download["base64"] is False
    rows = list(csv.DictReader(io.StringIO(download["content"])))
    assert len(rows) == 20 and {r["class_name"] for r in rows[:2]} == {"fraud", "clicks"}
    rows = [r for r in rows if r["class_name"] == "fraud"]
    assert rows[0]["shed_fraction"] == "0.1" and rows[0]["manager_state"] == ""
    request = real_api.requests_to("GET", f"/jobs/{first['id']}/metrics/export")[-1]
    assert "limit" not in request.query  # every sample of the range, however many
    assert request.headers["authorization"].startswith("Bearer ")

    download, alert = export_csv(api, 999, None, None)
    assert download is None and "Could not export job 999" in text(alert)


def test_the_client_compares_runs_over_seconds_into_each(api, real_api, runs):
    first, second = runs
    both = api.compare_runs(first["id"], second["id"], {"since_s": 5.0, "until_s": 30.0})
    assert real_api.requests_to("GET", "/runs/compare")[-1].query == {
        "a": [str(first["id"])],
        "b": [str(second["id"])],
        "since_s": ["5.0"],
        "until_s": ["30.0"],
    }
    for side in ("a", "b"):
        assert both[side]["first_sample_t"] == T0
        fraud = next(c for c in both[side]["classes"] if c["class_name"] == "fraud")
        assert fraud["periods"] == 26  # offsets 5 to 30, both included


def test_the_client_says_when_a_window_was_cut(api, runs):
    first, _ = runs
    assert api.export_metrics(first["id"])["truncated"] is False
    assert api.export_metrics(first["id"], {"limit": 3})["truncated"] is True
    newest = api.job_metrics(first["id"], query={"last_s": 1000.0, "limit": 2})
    assert newest["truncated"] is True and [s["t"] for s in newest["samples"]] == [T0 + 119] * 2

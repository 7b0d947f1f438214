"""Figure builders: pure functions of samples (live charts) and summaries (history)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import cast

import plotly.io as pio
import pytest
from plotly.io.json import to_json_plotly

from frontend.api import ClassSummary, MetricSample
from frontend.figures import class_colors, class_order, epoch_to_iso, epoch_to_utc
from frontend.history_figures import compare_figure, qod_figure, qos_figure, target_ratio
from frontend.sample_charts import (
    EXECUTORS,
    HISTORY_RESPONSE_TIME,
    JOB_USAGE,
    LIVE_CHARTS,
    LOAD,
    NO_SAMPLES,
    RATES,
    REDISTRIBUTION_KEY,
    RESPONSE_TIME,
    SHED,
    STATE,
    STATE_COLORS,
    USAGE,
    WARMUP_KEY,
    ChartContext,
    build_chart,
    chart_spec,
    dashboard_spec,
    extend_chart,
    extend_dashboard,
    max_points,
    new_trace_keys,
    output_rate,
    plan_chart,
    row_heights,
    style_hint,
)

T0 = 1_763_700_000.0
CLASSES = ("fraud", "clicks")
CONTEXT = ChartContext(
    classes=CLASSES,
    bands={"fraud": (1.35, 1.5, 1.65), "clicks": (3.0, 3.0, 3.0)},
    uirevision=7,
)


def skeleton(class_name, t, *, mean_s=0.4, max_s=0.9, seq=0, arrival_rate=200.0, output=98):
    """What the skeleton job reports: the first nine fields only."""
    return {
        "class_name": class_name,
        "seq": seq,
        "t": t,
        "period_s": 1.0,
        "arrived_count": int(arrival_rate),
        "output_count": output,
        "arrival_rate": arrival_rate,
        "response_time_mean_s": mean_s,
        "response_time_max_s": max_s,
    }


def full(class_name, t, *, seq=0, state="normal", redistributed=False, **values):
    """A sample of a job that reports every field (any may still be None)."""
    sample = {
        **skeleton(class_name, t, seq=seq),
        "response_time_p50_s": 0.35,
        "response_time_p95_s": 0.8,
        "response_time_p99_s": 0.88,
        "violation_mean_s": 0.0,
        "violation_max_s": 0.0,
        "admitted_count": 150,
        "shed_count": 50,
        "waiting_count": 3,
        "load": 0.9,
        "capacity_share": 0.6,
        "headroom": 0.8,
        "capacity_usage": 1.125,
        "shed_fraction": 0.25,
        "oracle_shed_fraction": 0.2,
        "manager": "aloma",
        "manager_state": state,
        "redistributed": redistributed,
        "config_version": 0,
    }
    sample.update(values)
    return sample


def run(n, *, start=T0, make=full, **values):
    """``n`` periods of both classes, by time."""
    out = []
    for i in range(n):
        for k, name in enumerate(CLASSES):
            out.append(make(name, start + i + 0.1 * k, seq=i, **values))
    return out


def traces(fig):
    return {trace.name: trace for trace in fig.data}


def chart(chart_spec, samples, context=CONTEXT):
    return build_chart(
        chart_spec, plan_chart(chart_spec, samples, context.classes), samples, context
    )


def test_shared_helpers():
    samples = [skeleton("b", T0), skeleton("a", T0 + 1)]
    assert class_order(samples) == ["b", "a"]
    assert class_order(samples, ["c", "a"]) == ["c", "a", "b"]
    assert class_colors(["x", "y"])["x"] != class_colors(["x", "y"])["y"]
    assert epoch_to_utc(T0).isoformat() == "2025-11-21T04:40:00"
    assert epoch_to_iso(T0 + 0.25) == "2025-11-21 04:40:00.250"


def test_response_time_shows_mean_and_p95_against_the_band():
    fig = chart(RESPONSE_TIME, run(3))
    assert list(traces(fig)) == ["fraud mean", "fraud p95", "clicks mean", "clicks p95"]
    assert list(traces(fig)["fraud p95"].y) == [0.8, 0.8, 0.8]
    assert list(traces(fig)["fraud mean"].x) == [epoch_to_iso(T0 + i) for i in range(3)]
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    # fraud has a band (ALoMa's margins), clicks a target line only.
    assert [(r.y0, r.y1) for r in rects] == [(1.35, 1.65)]
    assert sorted(line.y0 for line in lines) == [1.5, 3.0]
    assert {a.text for a in fig.layout.annotations} == {"fraud target 1.5 s", "clicks target 3 s"}
    assert fig.layout.uirevision == 7
    # One colour per class for its lines and its band.
    assert traces(fig)["fraud mean"].line.color == rects[0].fillcolor


def test_a_skeleton_job_gets_max_instead_of_p95_and_notes_on_what_it_lacks():
    samples = run(3, make=skeleton)
    rt = chart(RESPONSE_TIME, samples)
    assert list(traces(rt)) == ["fraud mean", "fraud max", "clicks mean", "clicks max"]
    assert list(traces(chart(RATES, samples))) == [
        "fraud input",
        "fraud output",
        "clicks input",
        "clicks output",
    ]
    for spec in (LOAD, USAGE, SHED, STATE):
        fig = chart(spec, samples)
        assert len(fig.data) == 0
        assert [a.text for a in fig.layout.annotations] == [spec.missing]
        json.loads(pio.to_json(fig))


def test_nulls_leave_gaps_and_a_class_without_data_gets_no_trace():
    samples = [
        full("fraud", T0, seq=0),
        full("fraud", T0 + 1, seq=1, response_time_mean_s=None, response_time_p95_s=None),
        full("clicks", T0 + 1, seq=0, load=None, headroom=None),
    ]
    rt = traces(chart(RESPONSE_TIME, samples))
    assert list(rt["fraud mean"].y) == [0.4, None]
    load = traces(chart(LOAD, samples))
    assert list(load) == ["fraud load L", "fraud headroom L_C"]


def test_usage_has_a_line_at_capacity_and_fractions_a_fixed_axis():
    usage = chart(USAGE, run(2))
    assert [s.y0 for s in usage.layout.shapes] == [1.0]
    assert "at capacity" in usage.layout.annotations[0].text
    assert tuple(chart(SHED, run(2)).layout.yaxis.range) == (0, 1.05)
    shed = traces(chart(SHED, run(2)))
    assert list(shed["fraud oracle"].y) == [0.2, 0.2]
    assert shed["fraud oracle"].line.dash == "dot"


def test_the_shed_chart_shows_what_was_dropped_beside_the_managers_fraction():
    """A class whose loss is all the queue rule's (its manager's fraction 0) shows that
    loss; a backlog drained beyond the period's arrivals reads 1, not more."""
    samples = [
        full("fraud", T0, seq=0, shed_count=150, shed_fraction=0.0),
        full("fraud", T0 + 1, seq=1, shed_count=500, shed_fraction=0.0),
        full("clicks", T0, seq=0, shed_count=None),
    ]
    shed = traces(chart(SHED, samples))
    assert list(shed["fraud shed"].y) == [0.75, 1.0]
    assert list(shed["fraud manager"].y) == [0.0, 0.0]
    assert shed["fraud manager"].line.dash == "dash"
    assert "clicks shed" not in shed  # a job that does not count what it drops


def test_output_rate():
    # A skeleton sample lacks the optional fields, which output_rate does not read.
    assert (
        output_rate(cast(MetricSample, {**skeleton("a", T0, output=150), "period_s": 2.0})) == 75.0
    )
    assert output_rate(cast(MetricSample, {**skeleton("a", T0), "period_s": 0.0})) is None


def test_state_timeline_has_one_row_per_class_and_a_colour_per_state():
    samples = [
        full("fraud", T0, seq=0, state="normal"),
        full("clicks", T0, seq=0, state="OT"),
        full("fraud", T0 + 1, seq=1, state="UT"),
        full("clicks", T0 + 1, seq=1, state="overloaded"),
        full("fraud", T0 + 2, seq=2, state="weird"),
    ]
    fig = chart(STATE, samples)
    assert [t.name for t in fig.data] == [
        "normal",
        "UT (under target)",
        "OT (over target)",
        "overloaded",
        "weird",
    ]
    assert fig.data[0].line.color == STATE_COLORS["normal"]
    # One segment per period, from its start to its end.
    assert list(fig.data[2].y) == ["clicks", "clicks", None]
    assert list(fig.data[2].x) == [epoch_to_iso(T0 - 1), epoch_to_iso(T0), None]
    assert list(fig.layout.yaxis.categoryarray) == ["clicks", "fraud"]


def test_redistributions_are_vertical_lines_on_every_chart():
    samples = run(3)
    samples[2]["redistributed"] = True  # period 1 of fraud
    samples[3]["redistributed"] = True  # period 1 of clicks: 0.1 s later
    for spec in LIVE_CHARTS:
        plan = plan_chart(spec, samples, CLASSES)
        assert plan[-1] == REDISTRIBUTION_KEY
        fig = build_chart(spec, plan, samples, CONTEXT)
        line = fig.data[-1]
        assert line.name == "redistribution" and line.yaxis == "y2"
        assert list(line.y) == [0, 1, None, 0, 1, None]
        assert list(line.x)[:2] == [epoch_to_iso(T0 + 1), epoch_to_iso(T0 + 1)]
        assert tuple(fig.layout.yaxis2.range) == (0, 1)
    assert REDISTRIBUTION_KEY not in plan_chart(RESPONSE_TIME, run(3), CLASSES)


def test_warmup_periods_are_a_shaded_band_on_the_response_time_charts():
    """A warm-up period (its tuples waited through Spark's start) is a grey band over the
    plot's height from the period's start to its end, once per period, on the charts that
    judge response times against the target; the others do not draw it."""
    samples = run(3)
    for sample in samples[:4]:  # periods 0 and 1 of both classes
        sample["warmup"] = True
    for spec in (RESPONSE_TIME, HISTORY_RESPONSE_TIME):
        plan = plan_chart(spec, samples, CLASSES)
        assert plan[-1] == WARMUP_KEY
        band = chart_spec(spec, plan, samples, CONTEXT)["data"][-1]
        assert band["name"].startswith("warm-up") and band["yaxis"] == "y2"
        assert band["fill"] == "toself" and band["hoverinfo"] == "skip"
        assert band["y"] == [0, 1, 1, 0, None] * 2
        start, end = epoch_to_iso(T0 - 1), epoch_to_iso(T0)
        assert band["x"][:5] == [start, start, end, end, None]
        assert band["x"][5:7] == [end, end]  # period 1 starts where period 0 ends
        build_chart(spec, plan, samples, CONTEXT)  # valid for Plotly
    for spec in (RATES, LOAD, STATE):
        assert WARMUP_KEY not in plan_chart(spec, samples, CLASSES)
    assert WARMUP_KEY not in plan_chart(RESPONSE_TIME, run(3), CLASSES)
    assert new_trace_keys(RESPONSE_TIME, plan_chart(RESPONSE_TIME, run(2), CLASSES), samples) == [
        WARMUP_KEY
    ]
    assert max_points(WARMUP_KEY, 60, 1.0, 2) == 5 * 62 * 2
    # On the dashboard: the response-time row's hidden axis, once in the legend, and
    # a chart with nothing else to draw still says so.
    dashboard = dashboard_spec(LIVE_CHARTS, plans_for(samples), samples, CONTEXT)
    [band] = [t for t in dashboard["data"] if t.get("legendgroup") == "warmup"]
    assert band["yaxis"] == f"y{len(LIVE_CHARTS) + 1}" and band["showlegend"]
    bare = chart_spec(RESPONSE_TIME, [WARMUP_KEY], samples, CONTEXT)
    assert RESPONSE_TIME.missing in [a["text"] for a in bare["layout"]["annotations"]]


def apply_extend(figure_json, extend):
    """What dcc.Graph does with extendData (Plotly.extendTraces with maxPoints)."""
    update, indices, limits = extend
    for n, index in enumerate(indices):
        trace = figure_json["data"][index]
        for axis in ("x", "y"):
            values = list(trace.get(axis, [])) + list(update[axis][n])
            trace[axis] = values[-limits[axis][n] :]
    return figure_json


def data_of(fig):
    return json.loads(pio.to_json(fig))["data"]


@pytest.mark.parametrize("spec", LIVE_CHARTS, ids=lambda c: c.chart_id)
def test_drawing_a_then_extending_by_b_equals_drawing_a_and_b(spec):
    samples = run(6, state="normal")
    samples[5]["manager_state"] = "OT"
    samples[8]["redistributed"] = True
    for sample in samples[:2] + samples[6:8]:  # warm-up in both halves
        sample["warmup"] = True
    first, second = samples[:6], samples[6:]
    plan = plan_chart(spec, samples, CLASSES)
    whole = build_chart(spec, plan, samples, CONTEXT)
    drawn = json.loads(pio.to_json(build_chart(spec, plan, first, CONTEXT)))
    extend = extend_chart(spec, plan, second, window_s=300, period_s=1.0, class_count=2)
    assert extend is not None
    # Through JSON, as Dash sends it (datetimes become ISO strings).
    extended = apply_extend(drawn, json.loads(to_json_plotly(extend)))
    for got, want in zip(extended["data"], data_of(whole), strict=True):
        assert got["name"] == want["name"]
        assert [str(x) for x in got["x"]] == [str(x) for x in want["x"]]
        assert got["y"] == want["y"]


def test_extend_keeps_a_window_of_points_and_skips_traces_without_new_points():
    plan = plan_chart(RESPONSE_TIME, run(2), CLASSES)
    extend = extend_chart(
        RESPONSE_TIME,
        plan,
        [full("clicks", T0 + 5, seq=5)],
        window_s=60,
        period_s=0.5,
        class_count=2,
    )
    assert extend is not None
    update, indices, limits = extend
    assert indices == [2, 3]  # clicks mean and p95 only
    assert limits == {"x": [122, 122], "y": [122, 122]}
    assert update["y"] == [[0.4], [0.8]]
    assert extend_chart(RESPONSE_TIME, plan, [], window_s=60, period_s=1, class_count=2) is None
    assert max_points(REDISTRIBUTION_KEY, 60, 1.0, 2) == 3 * 62
    assert max_points(("state", "", "OT"), 60, 1.0, 3) == 3 * 62 * 3


def test_new_trace_keys_say_when_a_chart_must_be_drawn_again():
    skeleton_plan = plan_chart(RESPONSE_TIME, run(2, make=skeleton), CLASSES)
    # The job starts reporting p95: a trace the chart does not have.
    assert ("series", "fraud", "p95") in new_trace_keys(RESPONSE_TIME, skeleton_plan, run(1))
    # A class that was not in the window appears.
    assert new_trace_keys(RESPONSE_TIME, skeleton_plan, [skeleton("ads", T0)]) == [
        ("series", "ads", "mean"),
        ("series", "ads", "max"),
    ]
    # A period with max but without p95 needs no max trace where p95 is drawn.
    full_plan = plan_chart(RESPONSE_TIME, run(2), CLASSES)
    assert new_trace_keys(RESPONSE_TIME, full_plan, [skeleton("fraud", T0 + 9)]) == []
    assert new_trace_keys(STATE, plan_chart(STATE, run(2), CLASSES), run(1, state="UT")) == [
        ("state", "", "UT")
    ]
    assert new_trace_keys(RESPONSE_TIME, full_plan, run(1, redistributed=True)) == [
        REDISTRIBUTION_KEY
    ]


def test_empty_data_gives_empty_but_valid_figures():
    for spec in LIVE_CHARTS:
        fig = build_chart(spec, [], [], CONTEXT)
        assert len(fig.data) == 0
        assert [a.text for a in fig.layout.annotations if a.text == NO_SAMPLES] == [NO_SAMPLES]
        json.loads(pio.to_json(fig))


def test_the_plain_spec_is_what_the_figure_validates():
    samples = run(3, redistributed=True)
    for spec in LIVE_CHARTS:
        plan = plan_chart(spec, samples, CLASSES)
        plain = chart_spec(spec, plan, samples, CONTEXT)
        json.loads(to_json_plotly(plain))
        fig = build_chart(spec, plan, samples, CONTEXT)  # raises on anything invalid
        assert [t["name"] for t in plain["data"]] == [t.name for t in fig.data]
        assert plain["layout"]["template"]["layout"]["plot_bgcolor"] == "white"


def test_builders_do_not_mutate_their_input():
    samples = run(3)
    before = copy.deepcopy(samples)
    for spec in (*LIVE_CHARTS, HISTORY_RESPONSE_TIME):
        plan = plan_chart(spec, samples, CLASSES)
        build_chart(spec, plan, samples, CONTEXT)
        extend_chart(spec, plan, samples, window_s=60, period_s=1, class_count=2)
    assert samples == before


def test_history_percentiles_fall_back_to_mean_and_max():
    assert list(traces(chart(HISTORY_RESPONSE_TIME, run(2)))) == [
        "fraud p50",
        "fraud p95",
        "fraud p99",
        "clicks p50",
        "clicks p95",
        "clicks p99",
    ]
    assert list(traces(chart(HISTORY_RESPONSE_TIME, run(2, make=skeleton)))) == [
        "fraud mean",
        "fraud max",
        "clicks mean",
        "clicks max",
    ]


SUMMARY: ClassSummary = {
    "class_name": "fraud",
    "delay_target_s": 1.5,
    "periods": 60,
    "warmup_periods": 2,
    "arrived": 12_000,
    "output": 9_000,
    "shed": 3_000,
    "mean_response_time_s": 0.5,
    "p95_response_time_s": 1.2,
    "max_response_time_s": 2.0,
    "mean_violation_s": 0.01,
    "max_violation_s": 0.5,
    "late_period_fraction": 0.1,
    "loss_fraction": 0.25,
    "shed_fraction_mean": 0.24,
    "oracle_loss_fraction": 0.2,
    "oracle_gap": 1.25,
}
SKELETON_SUMMARY: ClassSummary = {
    **SUMMARY,
    "class_name": "clicks",
    "delay_target_s": 3.0,
    "shed": None,
    "p95_response_time_s": None,
    "loss_fraction": None,
    "shed_fraction_mean": None,
    "oracle_loss_fraction": None,
    "oracle_gap": None,
}


def test_qos_figure_has_bars_per_statistic_and_the_targets():
    fig = qos_figure([SUMMARY, SKELETON_SUMMARY])
    bars = traces(fig)
    assert list(bars) == ["mean", "p95", "max", "delay target"]
    assert list(bars["p95"].y) == [1.2, None]
    assert list(bars["delay target"].y) == [1.5, 3.0]
    assert list(bars["mean"].x) == ["fraud", "clicks"]


def test_qod_figure_and_a_run_without_shedding_data():
    fig = qod_figure([SUMMARY])
    assert [t.name for t in fig.data] == [
        "loss (shed / arrived)",
        "oracle loss",
        "manager's mean shed fraction",
    ]
    empty = qod_figure([SKELETON_SUMMARY])
    assert len(empty.data) == 0 and "no shedding" in empty.layout.annotations[0].text
    nothing = qos_figure(
        [{**SKELETON_SUMMARY, "mean_response_time_s": None, "max_response_time_s": None}]
    )
    assert [t.name for t in nothing.data] == ["delay target"]


def test_compare_figure_puts_the_two_runs_side_by_side():
    assert target_ratio(SUMMARY) == pytest.approx(0.8)
    assert target_ratio(SKELETON_SUMMARY) == pytest.approx(0.5 / 3.0)  # mean, no p95
    fig = compare_figure([SUMMARY], [SUMMARY, SKELETON_SUMMARY], "job 1", "job 2")
    ratio_a, _loss_a, ratio_b, loss_b = fig.data
    assert list(ratio_a.x) == ["fraud", "clicks"]
    assert list(ratio_a.y) == [pytest.approx(0.8), None]  # job 1 has no clicks
    assert list(loss_b.y) == [0.25, None]
    assert ratio_a.name == "job 1" and ratio_b.name == "job 2"
    json.loads(pio.to_json(fig))


def plans_for(samples):
    return {spec.chart_id: plan_chart(spec, samples, CLASSES) for spec in LIVE_CHARTS}


def test_the_dashboard_is_every_chart_as_a_row_of_one_figure():
    samples = run(3, redistributed=True)
    plans = plans_for(samples)
    spec = dashboard_spec(LIVE_CHARTS, plans, samples, CONTEXT)
    fig = go_figure(spec)  # valid for Plotly
    planned = sum(len(plan) for plan in plans.values())
    assert len(spec["data"]) == planned + len(CLASSES)
    # The rows' traces in order, each on its row's axes; the class entries last.
    assert spec["data"][0]["name"] == "fraud mean" and spec["data"][0]["yaxis"] == "y"
    load = next(t for t in spec["data"] if t["name"] == "fraud load L")
    assert (load["xaxis"], load["yaxis"]) == ("x3", "y3")
    lines = [t for t in spec["data"] if t["name"] == "redistribution"]
    assert len(lines) == len(LIVE_CHARTS)
    assert [t["showlegend"] for t in lines] == [True] + [False] * (len(LIVE_CHARTS) - 1)
    assert lines[2]["yaxis"] == f"y{len(LIVE_CHARTS) + 3}"
    assert [t["name"] for t in spec["data"][-2:]] == list(CLASSES)
    assert all(
        not t.get("showlegend", True)
        for t in spec["data"]
        if t.get("legendgroup") in CLASSES and t["x"] != [None]
    )
    # Rows top to bottom, not overlapping, with a linked time axis.
    layout = fig.layout
    domains = [layout[f"yaxis{'' if i == 0 else i + 1}"].domain for i in range(len(LIVE_CHARTS))]
    assert all(a[0] > b[1] for a, b in itertools.pairwise(domains))
    assert layout.xaxis2.matches == "x"
    assert layout.height == 70 + sum(row_heights(LIVE_CHARTS, 2)) + 62 * len(LIVE_CHARTS)
    # Bands live on the response-time row, the usage line on its own.
    assert {s.yref for s in layout.shapes if s.type == "rect"} == {"y"}
    usage_line = next(s for s in layout.shapes if s.y0 == 1.0 and s.yref == "y4")
    assert usage_line.xref == "x4 domain"
    titles = [a.text for a in layout.annotations if a.text.startswith("<b>")]
    assert titles[0].startswith("<b>Response time vs delay target</b>")
    assert "dashed: p95" in titles[0]


def test_the_dashboard_notes_what_a_job_does_not_report():
    samples = run(2, make=skeleton)
    spec = dashboard_spec(LIVE_CHARTS, plans_for(samples), samples, CONTEXT)
    notes = [a["text"] for a in spec["layout"]["annotations"] if a["text"].startswith("This job")]
    assert notes == [
        LOAD.missing,
        USAGE.missing,
        "This job reports no capacity share",
        SHED.missing,
        STATE.missing,
        EXECUTORS.missing,
        JOB_USAGE.missing,
    ]
    empty = dashboard_spec(LIVE_CHARTS, {}, [], CONTEXT)
    assert [a["text"] for a in empty["layout"]["annotations"]].count(NO_SAMPLES) == len(LIVE_CHARTS)


def test_an_elastic_job_draws_one_line_of_executors_and_usage_with_its_thresholds():
    """The pool's fields repeat on every class's sample of a period: one line each for
    the job, in the legend, and the usage row carries the job's τ0..τ3."""
    samples = run(4, executors=1, executors_requested=2, job_usage=1.2)
    context = ChartContext(
        classes=CLASSES, thresholds={"tau0": 0.2, "tau1": 0.4, "tau2": 0.8, "tau3": 0.95}
    )
    assert plan_chart(EXECUTORS, samples, CLASSES) == [
        ("series", "", "executors"),
        ("series", "", "asked"),
    ]
    spec = chart_spec(JOB_USAGE, plan_chart(JOB_USAGE, samples, CLASSES), samples, context)
    [usage] = spec["data"]
    assert usage["y"] == [1.2] * 4  # one point a period, not one per class
    levels = sorted(shape["y0"] for shape in spec["layout"]["shapes"])
    assert levels == [0.2, 0.4, 0.8, 0.95]
    assert any("τ3: scale out above 0.95" in a["text"] for a in spec["layout"]["annotations"])
    whole = dashboard_spec(LIVE_CHARTS, plans_for(samples), samples, context)
    job_lines = [t for t in whole["data"] if t.get("legendgroup") == ""]
    assert [t["name"] for t in job_lines] == ["executors serving", "executors asked", "job u"]
    assert all(t["showlegend"] for t in job_lines)


def test_extending_the_dashboard_equals_drawing_it_whole():
    samples = run(6)
    samples[5]["manager_state"] = "OT"
    samples[8]["redistributed"] = True
    samples[9]["redistributed"] = True
    for sample in samples[:2] + samples[6:8]:
        sample["warmup"] = True
    first, second = samples[:6], samples[6:]
    plans = plans_for(samples)
    whole = dashboard_spec(LIVE_CHARTS, plans, samples, CONTEXT)
    drawn = json.loads(to_json_plotly(dashboard_spec(LIVE_CHARTS, plans, first, CONTEXT)))
    extend = extend_dashboard(LIVE_CHARTS, plans, second, window_s=300, period_s=1.0, class_count=2)
    extended = apply_extend(drawn, json.loads(to_json_plotly(extend)))
    want = json.loads(to_json_plotly(whole))["data"]
    for got, expected in zip(extended["data"], want, strict=True):
        assert got["name"] == expected["name"]
        assert got["x"] == expected["x"] and got["y"] == expected["y"]
    assert extend_dashboard(LIVE_CHARTS, plans, [], window_s=60, period_s=1, class_count=2) is None


def test_style_hints_name_the_line_styles():
    assert style_hint(RESPONSE_TIME) == "solid: mean · dashed: p95 · dotted: max"
    assert style_hint(USAGE) == ""


def go_figure(spec):
    import plotly.graph_objects as go

    return go.Figure(spec)

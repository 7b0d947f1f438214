"""frontend.figures: pure figure builders."""

from __future__ import annotations

import json

import plotly.io as pio

from frontend.figures import (
    EMPTY_MESSAGE,
    class_order,
    epoch_to_utc,
    output_rate,
    response_time_figure,
    throughput_figure,
)

T0 = 1_763_700_000.0


def sample(
    class_name, t, *, mean_s=0.4, max_s=0.9, arrival_rate=200.0, output_count=98, period_s=1.0
):
    return {
        "class_name": class_name,
        "seq": 0,
        "t": t,
        "period_s": period_s,
        "arrived_count": int(arrival_rate * period_s),
        "output_count": output_count,
        "arrival_rate": arrival_rate,
        "response_time_mean_s": mean_s,
        "response_time_max_s": max_s,
    }


SAMPLES = [
    sample("fraud", T0, mean_s=0.41, max_s=0.93),
    sample("clicks", T0 + 0.5, mean_s=2.0, max_s=3.5),
    sample("fraud", T0 + 1.0, mean_s=0.45, max_s=1.1),
    sample("clicks", T0 + 1.5, mean_s=2.2, max_s=4.0),
]
TARGETS = {"fraud": 1.5, "clicks": 3.0}


def traces_by_name(fig):
    return {trace.name: trace for trace in fig.data}


def test_response_time_has_mean_max_and_target_per_class():
    fig = response_time_figure(SAMPLES, TARGETS)
    traces = traces_by_name(fig)
    assert list(traces) == [
        "fraud mean",
        "fraud max",
        "fraud target 1.5 s",
        "clicks mean",
        "clicks max",
        "clicks target 3 s",
    ]
    assert list(traces["fraud mean"].y) == [0.41, 0.45]
    assert list(traces["clicks max"].y) == [3.5, 4.0]
    assert list(traces["fraud mean"].x) == [epoch_to_utc(T0), epoch_to_utc(T0 + 1.0)]
    assert {t.legendgroup for t in fig.data} == {"fraud", "clicks"}


def test_target_line_is_flat_at_the_target_across_all_samples():
    traces = traces_by_name(response_time_figure(SAMPLES, TARGETS))
    fraud_target = traces["fraud target 1.5 s"]
    assert list(fraud_target.y) == [1.5, 1.5]
    # Spans every sample, not just the class's own: the lines line up across classes.
    assert list(fraud_target.x) == [epoch_to_utc(T0), epoch_to_utc(T0 + 1.5)]
    assert fraud_target.line.dash == "dash"
    assert list(traces["clicks target 3 s"].y) == [3.0, 3.0]


def test_a_class_without_samples_still_shows_its_target():
    fig = response_time_figure(SAMPLES, {**TARGETS, "ads": 5.0})
    names = [t.name for t in fig.data]
    assert "ads target 5 s" in names
    assert "ads mean" not in names


def test_a_class_without_target_shows_samples_only():
    fig = response_time_figure(SAMPLES, {"fraud": 1.5})
    names = [t.name for t in fig.data]
    assert "clicks mean" in names
    assert not any(name.startswith("clicks target") for name in names)


def test_colours_are_per_class_and_shared_by_both_figures():
    rt = traces_by_name(response_time_figure(SAMPLES, TARGETS))
    tp = traces_by_name(throughput_figure(SAMPLES, list(TARGETS)))
    assert rt["fraud mean"].line.color == rt["fraud target 1.5 s"].line.color
    assert rt["fraud mean"].line.color != rt["clicks mean"].line.color
    assert tp["fraud arrivals"].line.color == rt["fraud mean"].line.color
    assert tp["clicks output"].line.color == rt["clicks mean"].line.color


def test_throughput_has_arrival_and_output_rate_per_class():
    samples = [sample("fraud", T0, arrival_rate=400.0, output_count=150, period_s=2.0)]
    traces = traces_by_name(throughput_figure(samples))
    assert list(traces) == ["fraud arrivals", "fraud output"]
    assert list(traces["fraud arrivals"].y) == [400.0]
    assert list(traces["fraud output"].y) == [75.0]  # 150 rows over 2 s


def test_output_rate_of_a_zero_period_is_none():
    assert output_rate(sample("fraud", T0, period_s=0.0)) is None


def test_class_order_puts_known_classes_first():
    assert class_order(SAMPLES) == ["fraud", "clicks"]
    assert class_order(SAMPLES, ["ads", "clicks"]) == ["ads", "clicks", "fraud"]


def test_empty_data_gives_an_empty_but_valid_figure():
    for fig in (response_time_figure([], TARGETS), throughput_figure([])):
        assert len(fig.data) == 0
        assert [a.text for a in fig.layout.annotations] == [EMPTY_MESSAGE]
        assert fig.layout.xaxis.title.text == "time (UTC)"
        # Serialisable the way Dash sends it to the browser.
        json.loads(pio.to_json(fig))


def test_uirevision_is_passed_through():
    assert response_time_figure(SAMPLES, TARGETS, uirevision=3).layout.uirevision == 3
    assert throughput_figure(SAMPLES, uirevision=3).layout.uirevision == 3


def test_builders_do_not_mutate_their_input():
    before = json.dumps(SAMPLES)
    response_time_figure(SAMPLES, TARGETS)
    throughput_figure(SAMPLES)
    assert json.dumps(SAMPLES) == before


def test_periods_without_output_leave_gaps():
    samples = [sample("fraud", T0, mean_s=0.4), sample("fraud", T0 + 1, mean_s=None, max_s=None)]
    traces = traces_by_name(response_time_figure(samples, {"fraud": 1.5}))
    assert list(traces["fraud mean"].y) == [0.4, None]
    assert list(traces["fraud max"].y) == [0.9, None]
    json.loads(pio.to_json(response_time_figure(samples, {"fraud": 1.5})))

"""Building samples from batch statistics and windows, and pairing them (no Spark)."""

from __future__ import annotations

import json

import pytest

from spark_runner.job.metrics import (
    BatchStats,
    BatchWindow,
    ClassOutputStats,
    SampleAssembler,
    build_samples,
    window_from_offsets,
)
from spark_runner.job.samples import MetricSample

CLASSES = ("gold", "bronze")
T0 = 1_763_700_000.0


def offset(t_s: float, origin_s: float = T0) -> str:
    return json.dumps({"origin_us": round(origin_s * 1e6), "t_us": round(t_s * 1e6)})


def stats(t_out_s: float = T0 + 2.5) -> BatchStats:
    return BatchStats(
        arrived={0: 200, 1: 40},
        outputs={
            0: ClassOutputStats(output_count=100, arrival_min_s=T0 + 1.0, arrival_mean_s=T0 + 1.5)
        },
        t_out_s=t_out_s,
    )


def test_window_between_offsets() -> None:
    window = window_from_offsets(offset(T0 + 1), offset(T0 + 2.25))
    assert window == BatchWindow(T0 + 1, T0 + 2.25)
    assert window.period_s == pytest.approx(1.25)


@pytest.mark.parametrize("missing", [None, "", "None", "null"])
def test_first_window_starts_at_the_origin(missing: str | None) -> None:
    assert window_from_offsets(missing, offset(T0 + 3)) == BatchWindow(T0, T0 + 3)


def test_samples_per_class() -> None:
    gold, bronze = build_samples(7, CLASSES, stats(), BatchWindow(T0 + 1, T0 + 2))

    assert gold == MetricSample(
        class_name="gold",
        seq=7,
        t=T0 + 2,
        period_s=1.0,
        arrived_count=200,
        output_count=100,
        arrival_rate=200.0,
        response_time_mean_s=1.0,
        response_time_max_s=1.5,
    )
    # Arrivals but no outputs: no response time rather than a made-up one.
    assert (bronze.arrived_count, bronze.output_count) == (40, 0)
    assert bronze.response_time_mean_s is None
    assert bronze.response_time_max_s is None


def test_arrival_rate_uses_the_real_window_length() -> None:
    # A batch that fell behind covers 4 s of arrivals, not one control period.
    [gold, _] = build_samples(3, CLASSES, stats(), BatchWindow(T0 - 2, T0 + 2))
    assert gold.period_s == 4.0
    assert gold.arrival_rate == 50.0


def test_response_times_never_negative() -> None:
    [gold, _] = build_samples(0, CLASSES, stats(t_out_s=T0 + 1.2), BatchWindow(T0, T0 + 1))
    assert gold.response_time_max_s == pytest.approx(0.2)
    assert gold.response_time_mean_s == 0.0


class Collector:
    def __init__(self) -> None:
        self.samples: list[MetricSample] = []

    def __call__(self, samples: list[MetricSample]) -> None:
        self.samples.extend(samples)

    def seqs(self) -> list[int]:
        return [s.seq for s in self.samples if s.class_name == "gold"]


@pytest.mark.parametrize("stats_first", [True, False])
def test_assembler_pairs_by_batch_in_either_order(stats_first: bool) -> None:
    sink = Collector()
    assembler = SampleAssembler(CLASSES, sink, fallback_period_s=1.0)
    window = BatchWindow(T0 + 1, T0 + 2)
    if stats_first:
        assembler.add_stats(5, stats())
        assert sink.samples == []
        assembler.add_window(5, window)
    else:
        assembler.add_window(5, window)
        assembler.add_stats(5, stats())
    assert sink.samples == build_samples(5, CLASSES, stats(), window)
    assert assembler.pending_batches() == []


def test_statistics_of_uncommitted_batches_can_be_discarded() -> None:
    sink = Collector()
    assembler = SampleAssembler(CLASSES, sink, fallback_period_s=0.5)
    assembler.add_stats(9, stats(t_out_s=T0 + 10))
    assert assembler.pending_batches() == [9]

    assert assembler.discard_pending() == [9]
    assert assembler.pending_batches() == []
    assembler.add_window(9, BatchWindow(T0, T0 + 1))  # too late: nothing to pair with
    assert sink.samples == []


def test_pending_statistics_are_bounded() -> None:
    sink = Collector()
    assembler = SampleAssembler(CLASSES, sink, fallback_period_s=0.5, max_pending=2)
    for batch_id in range(4):
        assembler.add_stats(batch_id, stats(t_out_s=T0 + 10))
    assert sink.seqs() == [0, 1]
    assert assembler.pending_batches() == [2, 3]
    # The evicted ones carry the nominal window, ending at their output instant.
    gold = sink.samples[0]
    assert (gold.t, gold.period_s, gold.arrival_rate) == (T0 + 10, 0.5, 400.0)


def test_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="fallback_period_s"):
        SampleAssembler(CLASSES, Collector(), fallback_period_s=0)
    with pytest.raises(ValueError, match="max_pending"):
        SampleAssembler(CLASSES, Collector(), fallback_period_s=1, max_pending=0)

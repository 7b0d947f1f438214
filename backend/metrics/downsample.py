"""Server-side downsampling of per-period samples into coarser buckets (pure).

Buckets are ``[k·step, (k+1)·step)`` of the sample end time ``t``, per class. Within a
bucket: counts add up; rates are recomputed from the summed counts and periods; the mean
response time and mean violation are weighted by output count; maxima and percentiles
take the bucket's maximum (a conservative bound: a p95 of p95s is not a p95); gauges
(load, headroom, shares, fractions) are averaged; the state fields keep the newest value
(the newest sample is the one with the largest ``(t, seq)``); ``seq`` is the oldest's.
A bucket is ``redistributed`` if any of its samples is, and ``warmup`` only if all of them
are: a bucket that holds an ordinary period is judged against the class's target like
one, so merging never hides a late ordinary period behind a warm-up.

A bucket is folded one sample at a time, so memory grows with the number of buckets, not
with the samples in them. A merged bucket's ``t`` is its newest sample's, and its counts
may exceed a single period's bounds (it is built without re-validation).

Windows with a limit (``limit`` buckets, never more) come in two directions:
:func:`oldest_buckets` reads samples oldest first and keeps the first buckets;
:func:`newest_buckets` reads them newest first and keeps the last ones. Both stop reading
as soon as the buckets they keep are complete, and both report whether any bucket was
left out. Output is always ordered by ``(t, class_name)``, oldest first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from typing import Any

from spark_runner.contract.samples import MetricSample

_MAXED = (
    "response_time_max_s",
    "response_time_p50_s",
    "response_time_p95_s",
    "response_time_p99_s",
    "violation_max_s",
    "floor_s",
)
_WEIGHTED = ("response_time_mean_s", "violation_mean_s")
_SUMMED = ("arrived_count", "output_count", "admitted_count", "shed_count")
_AVERAGED = (
    "load",
    "capacity_share",
    "headroom",
    "capacity_usage",
    "shed_fraction",
    "oracle_shed_fraction",
    "job_usage",
)
_NEWEST = (
    "t",
    "waiting_count",
    "manager",
    "manager_state",
    "config_version",
    "executors",
    "executors_requested",
)

BucketKey = tuple[str, int]


def bucket_key(sample: MetricSample, step_s: float) -> BucketKey:
    return sample.class_name, math.floor(sample.t / step_s)


def _order(sample: MetricSample) -> tuple[float, str]:
    return sample.t, sample.class_name


class _Bucket:
    """The running merge of one class's samples in one bucket (any arrival order)."""

    def __init__(self, sample: MetricSample) -> None:
        self.first = sample
        self.count = 0
        self.oldest = sample
        self.newest = sample
        self.period_s = 0.0
        self.sums: dict[str, int | None] = dict.fromkeys(_SUMMED)
        self.maxima: dict[str, float | None] = dict.fromkeys(_MAXED)
        self.weighted: dict[str, tuple[float, int]] = dict.fromkeys(_WEIGHTED, (0.0, 0))
        self.averaged: dict[str, tuple[float, int]] = dict.fromkeys(_AVERAGED, (0.0, 0))
        self.redistributed = False
        self.warmup = True
        self.add(sample)

    def add(self, sample: MetricSample) -> None:
        self.count += 1
        if (sample.t, sample.seq) < (self.oldest.t, self.oldest.seq):
            self.oldest = sample
        if (sample.t, sample.seq) >= (self.newest.t, self.newest.seq):
            self.newest = sample
        self.period_s += sample.period_s
        for name in _SUMMED:
            value = getattr(sample, name)
            if value is not None:
                self.sums[name] = (self.sums[name] or 0) + value
        for name in _MAXED:
            value = getattr(sample, name)
            if value is not None:
                current = self.maxima[name]
                self.maxima[name] = value if current is None else max(current, value)
        for name in _WEIGHTED:
            value = getattr(sample, name)
            if value is not None:
                total, weight = self.weighted[name]
                self.weighted[name] = (
                    total + value * sample.output_count,
                    weight + sample.output_count,
                )
        for name in _AVERAGED:
            value = getattr(sample, name)
            if value is not None:
                total, n = self.averaged[name]
                self.averaged[name] = (total + value, n + 1)
        self.redistributed = self.redistributed or sample.redistributed
        self.warmup = self.warmup and sample.warmup

    def merged(self) -> MetricSample:
        if self.count == 1:
            return self.first
        out: dict[str, Any] = {
            "class_name": self.first.class_name,
            "seq": self.oldest.seq,
            "period_s": self.period_s,
        }
        for name in _NEWEST:
            out[name] = getattr(self.newest, name)
        out.update(self.sums)
        out["arrival_rate"] = (out["arrived_count"] or 0) / self.period_s
        out.update(self.maxima)
        for name, (total, weight) in self.weighted.items():
            out[name] = total / weight if weight else None
        for name, (total, n) in self.averaged.items():
            out[name] = total / n if n else None
        out["redistributed"] = self.redistributed
        out["warmup"] = self.warmup
        # Not re-validated: a bucket's counts may exceed one period's int32 bound.
        return MetricSample.model_construct(**out)


def downsample(samples: Iterable[MetricSample], step_s: float) -> list[MetricSample]:
    """Merge samples (in any order) into buckets of ``step_s`` seconds."""
    buckets: dict[BucketKey, _Bucket] = {}
    for sample in samples:
        key = bucket_key(sample, step_s)
        bucket = buckets.get(key)
        if bucket is None:
            buckets[key] = _Bucket(sample)
        else:
            bucket.add(sample)
    return sorted((b.merged() for b in buckets.values()), key=_order)


def downsample_stream(
    samples_oldest_first: Iterable[MetricSample], step_s: float
) -> Iterator[MetricSample]:
    """Merged buckets, each yielded once complete; input ordered by ``t`` ascending.

    Time only moves forward, so a sample in a later bucket index completes every open
    bucket: memory holds one bucket per class.
    """
    open_buckets: dict[str, _Bucket] = {}
    open_index: int | None = None
    for sample in samples_oldest_first:
        name, index = bucket_key(sample, step_s)
        if open_index is not None and index != open_index:
            yield from sorted((b.merged() for b in open_buckets.values()), key=_order)
            open_buckets = {}
        open_index = index
        bucket = open_buckets.get(name)
        if bucket is None:
            open_buckets[name] = _Bucket(sample)
        else:
            bucket.add(sample)
    yield from sorted((b.merged() for b in open_buckets.values()), key=_order)


def take(items: Iterable[MetricSample], limit: int) -> tuple[list[MetricSample], bool]:
    """The first ``limit`` items, and whether there were more."""
    iterator = iter(items)
    kept = list(itertools.islice(iterator, limit))
    return kept, next(iterator, None) is not None


def oldest_buckets(
    samples_oldest_first: Iterable[MetricSample], step_s: float, limit: int
) -> tuple[list[MetricSample], bool]:
    """The oldest ``limit`` merged buckets, and whether newer ones were left out."""
    return take(downsample_stream(samples_oldest_first, step_s), limit)


def newest_buckets(
    samples_newest_first: Iterable[MetricSample], step_s: float, limit: int
) -> tuple[list[MetricSample], bool]:
    """The newest ``limit`` merged buckets (by their newest sample's ``(t, class_name)``),
    and whether older ones were left out; input ordered by ``(t, class_name)`` descending.

    Read newest first, a bucket is met first through its newest sample, so buckets open
    in the order of the output, newest first: the first ``limit`` to open are the ones
    kept. Reading stops at the first sample below the last kept bucket's index (all kept
    buckets are complete by then).
    """
    buckets: dict[BucketKey, _Bucket] = {}
    truncated = False
    lowest_index: int | None = None
    for sample in samples_newest_first:
        key = bucket_key(sample, step_s)
        bucket = buckets.get(key)
        if bucket is not None:
            bucket.add(sample)
        elif len(buckets) < limit:
            buckets[key] = _Bucket(sample)
            lowest_index = key[1]
        else:
            truncated = True
            if lowest_index is not None and key[1] < lowest_index:
                break
    return sorted((b.merged() for b in buckets.values()), key=_order), truncated

"""Server-side downsampling of per-period samples into coarser buckets (pure).

Buckets are ``[k·step, (k+1)·step)`` of the sample end time ``t``, per class. Within a
bucket: counts add up; rates are recomputed from the summed counts and periods; the mean
response time and mean violation are weighted by output count; maxima and percentiles
take the bucket's maximum (a conservative bound: a p95 of p95s is not a p95); gauges
(load, headroom, shares, fractions) are averaged; the state fields keep the newest value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from spark_runner.job.samples import MetricSample

_MAXED = (
    "response_time_max_s",
    "response_time_p50_s",
    "response_time_p95_s",
    "response_time_p99_s",
    "violation_max_s",
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
)
_NEWEST = ("t", "waiting_count", "manager", "manager_state", "config_version")


def downsample(samples: Iterable[MetricSample], step_s: float) -> list[MetricSample]:
    """Merge samples into buckets of ``step_s`` seconds; input ordered by ``t``."""
    buckets: dict[tuple[str, int], list[MetricSample]] = {}
    for sample in samples:
        buckets.setdefault((sample.class_name, math.floor(sample.t / step_s)), []).append(sample)
    merged = [_merge(group) for group in buckets.values()]
    merged.sort(key=lambda s: (s.t, s.class_name))
    return merged


def _merge(group: Sequence[MetricSample]) -> MetricSample:
    if len(group) == 1:
        return group[0]
    newest = group[-1]
    out: dict[str, Any] = {"class_name": newest.class_name, "seq": group[0].seq}
    out["period_s"] = sum(s.period_s for s in group)
    for name in _NEWEST:
        out[name] = getattr(newest, name)
    for name in _SUMMED:
        values = [getattr(s, name) for s in group if getattr(s, name) is not None]
        out[name] = sum(values) if values else None
    out["arrival_rate"] = out["arrived_count"] / out["period_s"]
    for name in _MAXED:
        values = [getattr(s, name) for s in group if getattr(s, name) is not None]
        out[name] = max(values) if values else None
    for name in _WEIGHTED:
        pairs = [(getattr(s, name), s.output_count) for s in group if getattr(s, name) is not None]
        weight = sum(w for _, w in pairs)
        out[name] = sum(v * w for v, w in pairs) / weight if weight else None
    for name in _AVERAGED:
        values = [getattr(s, name) for s in group if getattr(s, name) is not None]
        out[name] = sum(values) / len(values) if values else None
    out["redistributed"] = any(s.redistributed for s in group)
    return MetricSample(**out)

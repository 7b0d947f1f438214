"""Response-time statistics per control period, and a log histogram for the whole run.

Per period a class's answers come as a :class:`ResponseSample` (measured in Spark:
:mod:`measures`): count, mean and max are exact; p50/p95/p99 and the mean violation come
from the merged quantile points, and the largest violation from the exact max
(:func:`period_stats`). Over a run, :class:`RunDigest` keeps the same log histogram as the
simulator (20 bins per decade from 1 µs, about 12 % resolution), so both engines report
p95 the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spark_runner.control.results import percentile_from_histogram
from spark_runner.control.run import HIST_BINS, HIST_BINS_PER_DECADE, HIST_MIN_EXP
from spark_runner.engine.measure.measures import ResponseSample


@dataclass(frozen=True)
class PeriodStats:
    """Response times (s) of one class's output tuples in one period."""

    count: int
    mean_s: float | None = None
    max_s: float | None = None
    p50_s: float | None = None
    p95_s: float | None = None
    p99_s: float | None = None
    violation_mean_s: float | None = None
    violation_max_s: float | None = None


def period_stats(sample: ResponseSample, delay_target_s: float) -> PeriodStats:
    """Statistics of ``sample`` against the target ``delay_target_s``."""
    if sample.count == 0:
        return PeriodStats(count=0)
    return PeriodStats(
        count=sample.count,
        mean_s=sample.mean_s,
        max_s=sample.max_s,
        p50_s=sample.quantile_s(0.50),
        p95_s=sample.quantile_s(0.95),
        p99_s=sample.quantile_s(0.99),
        violation_mean_s=sample.violation_mean_s(delay_target_s),
        violation_max_s=max(0.0, sample.max_s - delay_target_s),
    )


def histogram_bins(response_s: np.ndarray) -> np.ndarray:
    """Bin index of every response time in the simulator's log histogram."""
    safe = np.maximum(response_s, 1e-12)
    b = np.floor(HIST_BINS_PER_DECADE * (np.log10(safe) - HIST_MIN_EXP)).astype(np.int64)
    return np.asarray(np.clip(b, 0, HIST_BINS - 1), dtype=np.int64)


class RunDigest:
    """Whole-run response-time accumulators of one class; each sample's violation is
    measured against the delay target in force when it is added."""

    def __init__(self) -> None:
        self.count = 0
        self.sum_s = 0.0
        self.max_s = 0.0
        self.violation_sum_s = 0.0
        self.violation_max_s = 0.0
        self.histogram = np.zeros(HIST_BINS, dtype=np.float64)

    def add(self, sample: ResponseSample, delay_target_s: float) -> None:
        if not sample.count:
            return
        values, weights = sample.points()
        self.count += sample.count
        self.sum_s += sample.sum_s
        self.max_s = max(self.max_s, sample.max_s)
        violation = np.maximum(values - delay_target_s, 0.0)
        self.violation_sum_s += float((violation * weights).sum())
        self.violation_max_s = max(self.violation_max_s, sample.max_s - delay_target_s)
        self.histogram += np.bincount(histogram_bins(values), weights=weights, minlength=HIST_BINS)

    def quantile_s(self, fraction: float) -> float | None:
        return percentile_from_histogram(self.histogram.tolist(), fraction)

    @property
    def mean_s(self) -> float | None:
        return self.sum_s / self.count if self.count else None

    @property
    def violation_mean_s(self) -> float:
        return self.violation_sum_s / self.count if self.count else 0.0

"""Summaries of a run's per-period samples (pure).

QoS per class: response time (output-weighted mean; p95 as the output-weighted 95th
percentile of the per-period p95, falling back to per-period maxima; maximum), delay
violation (output-weighted mean, maximum, share of periods whose worst tuple was late).
QoD per class: loss = shed / arrived tuples, the manager's mean shed fraction, the
oracle's loss (the least shedding that would have fitted the capacity the class received)
and the gap ``loss / oracle loss`` (1 = no more data lost than necessary).

Warm-up periods (``warmup``: their tuples waited through the job's first Spark batch,
which pays for JIT compilation and Python worker start-up) are left out of the response
times and violations: their waits measure Spark's start, not the class's target. They
still count in the periods, the tuples and the losses (what was shed in them is lost all
the same), and ``warmup_periods`` says how many there were.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel

from spark_runner.contract.samples import MetricSample


class ClassSummary(BaseModel):
    """One class over a run; ``periods`` counts every period, ``warmup_periods`` those of
    them left out of the response times and violations; ``delay_target_s`` is the target
    in force in the newest period (each period is judged against its own)."""

    class_name: str
    delay_target_s: float | None
    periods: int
    warmup_periods: int
    arrived: int
    output: int
    shed: int | None
    mean_response_time_s: float | None
    p95_response_time_s: float | None
    max_response_time_s: float | None
    mean_violation_s: float | None
    max_violation_s: float | None
    late_period_fraction: float | None
    loss_fraction: float | None
    shed_fraction_mean: float | None
    oracle_loss_fraction: float | None
    oracle_gap: float | None


Targets = Mapping[str, float]
"""A delay target per class name."""


def summarize(
    samples: Iterable[MetricSample],
    targets: Targets,
    by_version: Mapping[int, Targets] | None = None,
) -> list[ClassSummary]:
    """Each class's summary of ``samples``, each sample judged against the targets of the
    configuration version it reports (``by_version``), or ``targets`` (the launch's) where
    it reports none or one not given."""
    by_class: dict[str, list[MetricSample]] = defaultdict(list)
    for sample in samples:
        by_class[sample.class_name].append(sample)
    versions = by_version or {}

    def target_of(sample: MetricSample) -> float | None:
        version = sample.config_version
        in_force = versions.get(version, targets) if version is not None else targets
        return in_force.get(sample.class_name, targets.get(sample.class_name))

    return [
        _summary(name, by_class.get(name, []), targets.get(name), target_of)
        for name in sorted(set(by_class) | set(targets))
    ]


def _summary(
    name: str,
    rows: Sequence[MetricSample],
    launch_target: float | None,
    target_of: Callable[[MetricSample], float | None],
) -> ClassSummary:
    arrived = sum(r.arrived_count for r in rows)
    output = sum(r.output_count for r in rows)
    shed_values = [r.shed_count for r in rows if r.shed_count is not None]
    shed = sum(shed_values) if shed_values else None
    measured = [r for r in rows if not r.warmup]
    with_rt = [r for r in measured if r.output_count and r.response_time_mean_s is not None]
    mean_rt = _weighted([(r.response_time_mean_s, r.output_count) for r in with_rt])
    max_values = [r.response_time_max_s for r in measured if r.response_time_max_s is not None]
    p95 = _weighted_quantile(
        [
            (
                r.response_time_p95_s
                if r.response_time_p95_s is not None
                else r.response_time_max_s,
                r.output_count,
            )
            for r in with_rt
        ],
        0.95,
    )
    violations = _violations(measured, target_of)
    target = target_of(rows[-1]) if rows else launch_target
    loss = shed / arrived if shed is not None and arrived else None
    shed_mean = _mean([r.shed_fraction for r in rows if r.shed_fraction is not None])
    oracle = _weighted(
        [
            (r.oracle_shed_fraction, r.arrived_count)
            for r in rows
            if r.oracle_shed_fraction is not None
        ]
    )
    gap = None
    if loss is not None and oracle is not None:
        gap = loss / oracle if oracle > 0 else (1.0 if loss == 0 else None)
    return ClassSummary(
        class_name=name,
        delay_target_s=target,
        periods=len(rows),
        warmup_periods=len(rows) - len(measured),
        arrived=arrived,
        output=output,
        shed=shed,
        mean_response_time_s=mean_rt,
        p95_response_time_s=p95,
        max_response_time_s=max(max_values) if max_values else None,
        mean_violation_s=violations[0],
        max_violation_s=violations[1],
        late_period_fraction=violations[2],
        loss_fraction=loss,
        shed_fraction_mean=shed_mean,
        oracle_loss_fraction=oracle,
        oracle_gap=gap,
    )


def _violations(
    rows: Sequence[MetricSample], target_of: Callable[[MetricSample], float | None]
) -> tuple[float | None, float | None, float | None]:
    judged = [(r, t) for r in rows if r.output_count and (t := target_of(r)) is not None]
    reported = [r for r in rows if r.output_count and r.violation_mean_s is not None]
    if reported:
        mean = _weighted([(r.violation_mean_s, r.output_count) for r in reported])
        worst = max(r.violation_max_s or 0.0 for r in reported)
    elif judged:
        # Without per-tuple violations, the period means bound the mean from below.
        mean = _weighted(
            [(max(0.0, (r.response_time_mean_s or 0.0) - t), r.output_count) for r, t in judged]
        )
        worst = max(max(0.0, (r.response_time_max_s or 0.0) - t) for r, t in judged)
    else:
        return None, None, None
    late = None
    if judged:
        late = sum(1 for r, t in judged if (r.response_time_max_s or 0.0) > t) / len(judged)
    return mean, worst, late


def _weighted(pairs: Iterable[tuple[float | None, int]]) -> float | None:
    total = weight = 0.0
    for value, w in pairs:
        if value is not None and w > 0:
            total += value * w
            weight += w
    return total / weight if weight else None


def _weighted_quantile(pairs: Iterable[tuple[float | None, int]], q: float) -> float | None:
    points = sorted((v, w) for v, w in pairs if v is not None and w > 0)
    total = sum(w for _, w in points)
    if not total:
        return None
    running = 0
    for value, weight in points:
        running += weight
        if running >= q * total:
            return value
    return points[-1][0]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None

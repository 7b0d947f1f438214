"""Priority on a real local Spark when every class has work: who sheds, who keeps its
target, how fast the run recovers (issue 14's tests).

Each run is one engine on the session's shared ``local[2]`` Spark, judged on the samples
its controller reported. These are timing properties: never rerun (if they are flaky,
the controller is).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_runner.contract.samples import MetricSample
from spark_runner.core.dilos import FLAG_PERIODS
from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.scenario import parse_scenario

from .conftest import SHARED_EXPENSIVE_LOWER
from .spark_helpers import Run, cpu_hog

pytestmark = [pytest.mark.spark, pytest.mark.timing, pytest.mark.timeout(300)]

RECOVERY_PERIODS = 10
VIOLATION_SHARE = 0.05
LOSS_VS_ORACLE = 1.15
"""The most a class may lose over its oracle's loss (issue 14's bar)."""
LATENCY_SLACK_S = 0.1
"""Classes admitted in full commit in the same batches: their mean response times differ
only by their tuples' arrival instants."""


def loss(samples: list[MetricSample]) -> float:
    arrived = sum(s.arrived_count for s in samples)
    return sum(s.shed_count or 0 for s in samples) / arrived if arrived else 0.0


def mean_response_s(samples: list[MetricSample]) -> float:
    outputs = sum(s.output_count for s in samples)
    total = sum((s.response_time_mean_s or 0.0) * s.output_count for s in samples)
    return total / outputs if outputs else 0.0


def latency_gap_s(higher: list[MetricSample], lower: list[MetricSample]) -> float:
    """How much later the higher class answered than the lower one, s: the mean, over the
    periods in which both answered, of the difference of their mean response times. Per
    period, not pooled: a class that sheds more in the late periods would otherwise look
    faster only because its answers fall in the fast ones."""
    by_seq = {s.seq: s for s in lower}
    gaps = [
        (h.response_time_mean_s or 0.0) - (lo.response_time_mean_s or 0.0)
        for h in higher
        if (lo := by_seq.get(h.seq)) is not None and h.output_count and lo.output_count
    ]
    return sum(gaps) / len(gaps) if gaps else 0.0


def within_target(sample: MetricSample, target_s: float) -> bool:
    """A period's mean violation is at most 5 % of ``target_s`` (ALoMa tolerates a
    violation up to 10 % of the target by design, so a period's worst answer may pass it
    slightly; the mean may not)."""
    return (sample.violation_mean_s or 0.0) <= VIOLATION_SHARE * target_s


def recovered_from(samples: list[MetricSample], target_s: float, *, stays: bool) -> int | None:
    """The first period within target; with ``stays``, the first from which every later
    period is within target."""
    if not stays:
        return next((k for k, s in enumerate(samples) if within_target(s, target_s)), None)
    late = [k for k, s in enumerate(samples) if not within_target(s, target_s)]
    first = late[-1] + 1 if late else 0
    return first if first < len(samples) else None


def oracle_loss(run: Run, name: str) -> float:
    """The class's oracle loss over the run, as the results file reports it (over the
    periods the oracle judges: those in which the class was feasible)."""
    return run.engine.controller.class_summaries()[name].oracle_loss


def p95_report(samples: list[MetricSample]) -> str:
    """The mean violation over every answer beside the periods' p95 (median and worst:
    the samples carry each period's p95, not the answers' histograms)."""
    p95s = sorted(s.response_time_p95_s for s in samples if s.response_time_p95_s is not None)
    p95 = f"p95 per period median {p95s[len(p95s) // 2]:.2f} s, worst {p95s[-1]:.2f} s"
    return f"mean violation {pooled_violation_s(samples):.3f} s, {p95 if p95s else 'no p95'}"


def summary(run: Run, names: list[str]) -> str:
    """Each class's loss, oracle loss, mean response time, mean violation and p95,
    periods' worst answers, and its first periods' state, floor and shed count."""
    rows = []
    for name in names:
        samples = run.of(name)
        oracle = oracle_loss(run, name)
        worst = [round(s.response_time_max_s or 0.0, 1) for s in samples]
        # the first periods' state, floor and shed: where a start goes wrong
        start = [
            (s.manager_state, s.floor_s and round(s.floor_s, 1), s.shed_count) for s in samples[:6]
        ]
        rows.append(
            f"{name}: loss {loss(samples):.3f} (oracle {oracle:.3f}), "
            f"mean {mean_response_s(samples):.2f} s, {p95_report(samples)}, "
            f"worst per period {worst}, "
            f"first periods (state, floor, shed) {start}"
        )
    return "\n".join([*rows, machine_report(run)])


def machine_report(run: Run) -> str:
    """The batches' fixed time and pace over the measured periods (median and range): a
    failure on a slower machine shows as a longer fixed time, which no admission removes."""
    series = [e for e in run.engine.controller.series if not e["warmup"]]

    def spread(key: str) -> str:
        values = sorted(e[key] for e in series)
        return f"{values[len(values) // 2]:.2f} s ({values[0]:.2f}-{values[-1]:.2f})"

    if not series:
        return "machine: no period measured"
    return f"machine: fixed time {spread('fixed_s')}, pace {spread('pace_s')}"


def assert_recovers(run: Run, targets: dict[str, float], since_s: float = 0.0) -> None:
    """Every class is back within target within 10 periods of ``since_s``; the top class
    (the first) stays there. (A lower class's manager probes toward its target once its
    shedding is pinned, and may pass it again later: seen for bronze after the hog.)"""
    top = next(iter(targets))
    for name, target in targets.items():
        samples = [s for s in run.of(name) if s.t >= since_s]
        first = recovered_from(samples, target, stays=name == top)
        assert first is not None and first <= RECOVERY_PERIODS, (
            f"{name} since {since_s}: {first}\n{summary(run, list(targets))}"
        )


def test_an_expensive_lower_branch_behind_a_shared_segment_is_shed_by_its_class(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Gold owns the segment; bronze's 4 ms map after it asks 600 × 0.9 × 4 ms = 2.2 s
    of CPU per second of 2 cores. While the owner paid for the lower branch, gold lost
    66 % of its tuples here; now gold loses nothing and bronze sheds on its edge.
    (Bronze's loss against its oracle is reported, not asserted: it can read above 1.15×
    over these 20 periods, and below it over longer runs. The oracle lets a
    queue grow to D less the floor before it sheds, a one-time buffer of about 11 points
    over 20 periods; a class after a shared segment cannot hold one, since Spark cannot
    keep the owner's tuples on its edge for a later batch.)"""
    scenario = parse_scenario(SHARED_EXPENSIVE_LOWER)
    run = Run(spark, scenario, tmp_path, options=ControllerOptions(warmup_s=6.0))
    try:
        run.start().until(lambda: run.measured_periods() >= 20, timeout_s=150)
    finally:
        run.stop()
    gold, bronze = run.of("gold"), run.of("bronze")
    report = summary(run, ["gold", "bronze"])
    print(f"\n{report}")  # the figures docs/measurements.md reports (pytest -s shows them)
    assert loss(gold) == 0.0, report
    assert loss(bronze) > 0.2, report
    assert latency_gap_s(gold, bronze) <= LATENCY_SLACK_S, report
    assert_recovers(run, {"gold": 4.0, "bronze": 6.0})


def classes_yaml(rates: dict[str, int], targets: dict[str, float], cost_s: float) -> str:
    """Classes gold/silver/bronze (priorities 6/3/1), one stream and one map each."""
    priorities = {"gold": 6, "silver": 3, "bronze": 1, "tight": 4}
    return "\n".join(
        f"""  - name: {name}
    priority: {priorities[name]}
    delay_target_s: {targets[name]}
    manager: {{kind: aloma, params: {{max_shed: 0.99}}}}
    queries:
      - name: q
        source: s_{name}
        operators:
          - {{kind: map, expression: "value * 2", output: v, cpu_cost_per_tuple_s: {cost_s}}}"""
        for name in rates
    )


def loaded(
    rates: dict[str, int], targets: dict[str, float], cost_s: float, background: str = "[]"
) -> str:
    streams = "\n".join(
        f"  - {{name: s_{n}, arrival: {{kind: constant, rate_per_s: {r}}}}}"
        for n, r in rates.items()
    )
    return f"""
version: 1
name: loaded
seed: 23
duration_s: 600
control: {{period_s: 1.0, mode: dilos}}
background: {background}
streams:
{streams}
classes:
{classes_yaml(rates, targets, cost_s)}
"""


HOG_RATES = {"gold": 80, "silver": 300, "bronze": 1200, "tight": 50}
HOG_TARGETS = {"gold": 3.0, "silver": 4.0, "bronze": 5.0, "tight": 0.4}


@dataclass(frozen=True)
class HogRun:
    run: Run
    hog_from: float
    hog_to: float


@pytest.fixture(scope="module")
def hog_run(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> HogRun:
    """Gold, silver and bronze all have work (1 ms a tuple: 1.6 s of CPU per second in
    the maps alone, more than the engine does here beside its batches' fixed time), a
    fourth class asks for 0.4 s (below any batch cycle: held as infeasible), and after 8
    measured periods a background job takes ¾ of the machine for 16 s. One run, judged
    by the two tests below."""
    scenario = parse_scenario(loaded(HOG_RATES, HOG_TARGETS, 0.001))
    tmp_path = tmp_path_factory.mktemp("hog")
    run = Run(spark, scenario, tmp_path, options=ControllerOptions(warmup_s=6.0))
    try:
        run.start().until(lambda: run.measured_periods() >= 8, timeout_s=120)
        with cpu_hog(0.75):
            hog_from = time.time()
            run.until(lambda: time.time() - hog_from >= 16, timeout_s=30)
        hog_to = time.time()
        run.until(lambda: len([s for s in run.of("gold") if s.t > hog_to]) >= 12, 90)
    finally:
        run.stop()
    gaps = [
        latency_gap_s(run.of(higher), run.of(lower))
        for higher, lower in (("gold", "silver"), ("silver", "bronze"))
    ]
    # the figures docs/measurements.md reports (pytest -s shows them)
    print(f"\n{summary(run, list(HOG_RATES))}\nlatency gaps {gaps[0]:.2f} s, {gaps[1]:.2f} s")
    return HogRun(run, hog_from, hog_to)


def test_every_class_loaded_with_a_cpu_hog_and_an_infeasible_class(hog_run: HogRun) -> None:
    """Priority decides who sheds: gold loses nothing, silver less than bronze, and
    bronze, which absorbs the overload, no more than 1.15× its oracle's loss; the
    feasible classes are back within target within 10 periods of the hog's start and of
    its end. (Silver's loss against its oracle is reported, not asserted: its oracle,
    which knows when the hog starts, loses nothing here, and silver's small loss around
    the hog's start cannot be a ratio to 0.)"""
    run = hog_run.run
    gold, silver, bronze = run.of("gold"), run.of("silver"), run.of("bronze")
    report = summary(run, list(HOG_RATES))
    assert loss(gold) == 0.0, report
    assert loss(gold) <= loss(silver) <= loss(bronze), report
    assert loss(bronze) <= LOSS_VS_ORACLE * oracle_loss(run, "bronze"), report
    for name in ("gold", "silver", "bronze"):
        # exact counts: what was admitted, shed or still waits arrived in the measured
        # periods or waited at their start (the tuples of the batch after the warm-up's)
        samples = run.of(name)
        accounted = sum((s.admitted_count or 0) + (s.shed_count or 0) for s in samples)
        at_start = (
            accounted + (samples[-1].waiting_count or 0) - sum(s.arrived_count for s in samples)
        )
        assert 0 <= at_start <= 5 * HOG_RATES[name], (name, at_start)
    feasible = {n: t for n, t in HOG_TARGETS.items() if n != "tight"}
    assert_recovers(run, feasible, since_s=hog_run.hog_from)
    assert_recovers(run, feasible, since_s=hog_run.hog_to)


def test_the_impossible_target_is_flagged_and_no_class_answered_within_its_target_is(
    hog_run: HogRun,
) -> None:
    """Tight's 0.4 s is below any batch cycle: once its manager is in control (after the
    first two steps, which hold a start's late answers) and its answers missed the target
    ``FLAG_PERIODS`` periods in a row, it is flagged infeasible in every period. No class
    is flagged in a period whose answers met its target on average (issue 43: a floor
    that is true)."""
    run = hog_run.run
    report = summary(run, list(HOG_RATES))
    tight = run.of("tight")
    assert len(tight) > 10 and all(
        s.manager_state == "infeasible" for s in tight[FLAG_PERIODS + 1 :]
    ), report
    for name, target in HOG_TARGETS.items():
        false = [
            (s.seq, s.response_time_mean_s, s.floor_s)
            for s in run.of(name)
            if s.manager_state == "infeasible"
            and s.response_time_mean_s is not None
            and s.response_time_mean_s <= target
        ]
        assert not false, (name, false, report)


def test_under_the_cpu_hog_latency_follows_priority(hog_run: HogRun) -> None:
    """A higher class's mean response time is at or below a lower class's (0.1 s slack:
    classes admitted in full commit in the same batches)."""
    run = hog_run.run
    gold, silver, bronze = run.of("gold"), run.of("silver"), run.of("bronze")
    report = summary(run, list(HOG_RATES))
    assert latency_gap_s(gold, silver) <= LATENCY_SLACK_S, report
    assert latency_gap_s(silver, bronze) <= LATENCY_SLACK_S, report


def test_a_start_after_a_40_s_backlog_recovers_within_10_periods(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The streams have flowed for 40 s when the run starts: every class's queue holds
    40 s of tuples, already past every target. Each class serves or sheds its backlog
    (stale first: a tuple that will be late whatever is done goes first) and is back
    within target within 10 periods; gold sheds no more than its backlog and, settled,
    nothing; priority orders the losses; no class loses more than 1.15× its oracle's loss
    (which sheds the tuples already past their target when the engine started)."""
    rates = {"gold": 80, "silver": 250, "bronze": 900}
    targets = {"gold": 3.0, "silver": 4.0, "bronze": 5.0}
    scenario = parse_scenario(loaded(rates, targets, 0.001))
    run = Run(spark, scenario, tmp_path, backlog_s=40.0)
    try:
        run.start().until(lambda: run.measured_periods() >= 20, timeout_s=150)
    finally:
        run.stop()
    gold, silver, bronze = run.of("gold"), run.of("silver"), run.of("bronze")
    report = summary(run, list(rates))
    print(f"\n{report}")
    # gold sheds at most its backlog (tuples already 40 s late: stale first); settled, nothing
    assert sum(s.shed_count or 0 for s in gold) <= 40 * rates["gold"], report
    assert sum(s.shed_count or 0 for s in gold[len(gold) // 2 :]) == 0, report
    assert loss(gold) <= loss(silver) <= loss(bronze), report
    for name in rates:
        assert loss(run.of(name)) <= LOSS_VS_ORACLE * oracle_loss(run, name), report
    assert_recovers(run, targets)


STATEFUL_OVERLOAD = Path(__file__).parents[2] / "scenarios" / "stateful_overload.yaml"
STATEFUL_TARGETS = (2.0, 2.5, 3.0)
"""Gold's, silver's and bronze's targets in the stateful test, s. The scenario's 1.5 s for
gold is at this machine's floor: in one query every batch runs a fixed time of 0.6-0.8 s
(more on a busier machine), and in simulated time gold at 1.5 s loses its bar past a fixed
time of 0.8 s, at 2 s not below 1 s (``test_pacing``'s
``test_how_slow_a_machine_the_stateful_top_target_tolerates``). The 1.5 s runs are
measured, not asserted (docs/measurements.md)."""
SETTLE_PERIODS = 15
"""The first measured periods a stateful run's JVM still compiles Spark's code in (its
fixed time falls by a quarter over them, gold's worst answer from 2.6 to 1.7 s): the
targets are judged after them."""


def pooled_violation_s(samples: list[MetricSample]) -> float:
    """The mean violation over every answer of ``samples``, s."""
    outputs = sum(s.output_count for s in samples)
    total = sum((s.violation_mean_s or 0.0) * s.output_count for s in samples)
    return total / outputs if outputs else 0.0


def test_stateful_classes_at_tight_targets_under_overload_keep_priority(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Issue 43's bar at one-to-a-few-second targets: three stateful classes (a 1 ms map
    and a 10 s window sum each) at 2 / 2.5 / 3 s (``STATEFUL_TARGETS``) ask 1.6 s of CPU a
    second of two cores. Gold loses nothing and answers within its target (mean violation
    ≤ 5 % of it); priority orders the losses and the latencies."""
    scenario = parse_scenario(
        STATEFUL_OVERLOAD.read_text(encoding="utf-8"),
        overrides=[f"classes[{k}].delay_target_s={t}" for k, t in enumerate(STATEFUL_TARGETS)],
    )
    targets = {c.name: c.delay_target_s for c in scenario.classes}
    run = Run(spark, scenario, tmp_path, options=ControllerOptions(warmup_s=15.0))
    try:
        run.start().until(lambda: run.measured_periods() >= SETTLE_PERIODS + 20, timeout_s=150)
    finally:
        run.stop()
    report = summary(run, list(targets))
    settled = {n: run.of(n)[SETTLE_PERIODS:] for n in targets}
    gold, silver, bronze = settled["gold"], settled["silver"], settled["bronze"]
    violation = pooled_violation_s(gold)
    print(f"\n{report}\nsettled: gold mean {mean_response_s(gold):.3f} s, {p95_report(gold)}")
    assert loss(run.of("gold")) == 0.0, report
    assert violation <= VIOLATION_SHARE * targets["gold"], (violation, report)
    assert loss(gold) <= loss(silver) <= loss(bronze), report
    assert latency_gap_s(gold, silver) <= LATENCY_SLACK_S, report
    assert latency_gap_s(silver, bronze) <= LATENCY_SLACK_S, report

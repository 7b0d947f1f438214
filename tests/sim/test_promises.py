"""The promise checker finds each broken promise in a series, and none in a clean one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from spark_runner.control.results import build_results
from spark_runner.core.dilos import FLAG_PERIODS
from spark_runner.sim import simulate
from spark_runner.sim.promises import (
    RECOVERY_PERIODS,
    TOP_LOSS_LIMIT,
    USAGE_TOLERANCE,
    WARMUP_PERIODS,
    judge,
)
from spark_runner.sim.workloads import PERIOD_S, VARIANTS, Workload, random_workload
from tests.rotation import SEED

# Two classes: "hi" (priority 3, share 0.75, target 1 s) and "lo" (priority 1, share 0.25).
WORKLOAD = Workload(
    seed=0,
    doc={
        "control": {"period_s": PERIOD_S},
        "classes": [
            {"name": "hi", "delay_target_s": 1.0},
            {"name": "lo", "delay_target_s": 1.0},
        ],
    },
    infeasible=frozenset(),
    priorities={"hi": 3.0, "lo": 1.0},
)
PERIODS = WARMUP_PERIODS + 30


def sample(**per_class: dict[str, Any]) -> dict[str, Any]:
    """One period: both classes well inside everything unless overridden."""
    base = {
        "shed_fraction": 0.0,
        "shed_count": 0,
        "stale_shed_count": 0,
        "expired_shed_count": 0,
        "busy_s": 0.1 * PERIOD_S,
        "unwanted_busy_s": 0.0,
        "repaid_busy_s": 0.0,
        "longest_turn_s": 0.0,
        "load": 0.1,
        "queue_length": 0,
        "arrival_rate_per_s": 100.0,
        "max_response_time_s": 0.5,
        "state": "normal",
    }
    classes = {name: {**base, **per_class.get(name, {})} for name in ("hi", "lo")}
    idle = PERIOD_S - sum(c["busy_s"] for c in classes.values())  # the rest of the period
    return {"background_share": 0.0, "idle_s": idle, "classes": classes}


def series(**at: dict[str, Any]) -> list[dict[str, Any]]:
    """A clean run with the periods listed in ``at`` (``p<k>=``) overridden."""
    return [sample(**at.get(f"p{k}", {})) for k in range(PERIODS)]


def test_a_clean_run_keeps_every_promise_it_judges():
    # Nobody sheds: priority order and idle while shedding have nothing to judge, and
    # say so; the idle processor breaks nothing.
    verdict = judge(WORKLOAD, series(), "absolute")
    assert verdict.all_kept, verdict
    assert verdict.top_loss == 0.0
    assert verdict.kept["priority_order"] is None and verdict.priority_excess is None
    assert verdict.kept["no_idle_while_shedding"] is None
    assert verdict.judged["top_class"] == PERIODS - WARMUP_PERIODS - 2  # after a target


def test_a_lower_class_above_its_share_while_a_higher_one_sheds_breaks_priority_order():
    p = WARMUP_PERIODS + 3
    over = (0.25 + 2 * USAGE_TOLERANCE) * PERIOD_S
    broken = series(**{f"p{p}": {"hi": {"shed_count": 20}, "lo": {"busy_s": over}}})
    verdict = judge(WORKLOAD, broken, "relative")
    assert not verdict.kept["priority_order"]
    assert verdict.priority_excess == pytest.approx(2 * USAGE_TOLERANCE)
    # Within its share it is allowed, except under strict, where it is not served at all.
    within = series(**{f"p{p}": {"hi": {"shed_count": 20}, "lo": {"busy_s": 0.2 * PERIOD_S}}})
    assert judge(WORKLOAD, within, "relative").kept["priority_order"]
    assert not judge(WORKLOAD, within, "strict").kept["priority_order"]
    # Under absolute (the default) a shedding class takes the classes below down to their
    # quotas' floors: none by default, so its share no longer excuses it.
    assert not judge(WORKLOAD, within, "absolute").kept["priority_order"]
    assert judge(WORKLOAD, within, "absolute").judged["priority_order"] == 1
    # One operator turn it started is not preempted.
    turn = {"busy_s": over, "longest_turn_s": 2 * USAGE_TOLERANCE * PERIOD_S}
    one_turn = series(**{f"p{p}": {"hi": {"shed_count": 20}, "lo": turn}})
    assert judge(WORKLOAD, one_turn, "relative").kept["priority_order"]
    # What it took while no class above it wanted the processor was taken from nobody.
    unwanted = {"busy_s": over, "unwanted_busy_s": 2 * USAGE_TOLERANCE * PERIOD_S}
    free_time = series(**{f"p{p}": {"hi": {"shed_count": 20}, "lo": unwanted}})
    assert judge(WORKLOAD, free_time, "relative").kept["priority_order"]
    # Nor what the scheduler gave it back for what another class's long turn took from it.
    repaid = {"busy_s": over, "repaid_busy_s": 2 * USAGE_TOLERANCE * PERIOD_S}
    given_back = series(**{f"p{p}": {"hi": {"shed_count": 20}, "lo": repaid}})
    assert judge(WORKLOAD, given_back, "relative").kept["priority_order"]
    # Where stalls left the classes a sliver of the period, a scheduler round is the
    # granularity: a class may be one round ahead of its share.
    sliver = series(
        **{f"p{p}": {"hi": {"shed_count": 20, "busy_s": 0.004}, "lo": {"busy_s": 0.004}}}
    )
    sliver[p]["idle_s"] = 0.0
    assert judge(WORKLOAD, sliver, "relative").kept["priority_order"]
    sliver[p]["classes"]["lo"]["busy_s"] = 0.004 + 0.011  # more than a round beyond
    assert not judge(WORKLOAD, sliver, "relative").kept["priority_order"]
    # Tuples shed stale first are shed too; the on-arrival reading leaves them out.
    stale = series(
        **{f"p{p}": {"hi": {"shed_count": 20, "stale_shed_count": 20}, "lo": {"busy_s": over}}}
    )
    verdict = judge(WORKLOAD, stale, "relative")
    assert not verdict.kept["priority_order"]
    assert verdict.priority_excess_on_arrival is None  # no period in which hi shed arrivals


def test_the_top_class_losing_more_than_the_limit_breaks_its_promise():
    # 100 tuples arrive per second, 50 per period: 5 shed is 10 %
    shed = {f"p{k}": {"hi": {"shed_count": 5}} for k in range(WARMUP_PERIODS, PERIODS)}
    verdict = judge(WORKLOAD, series(**shed), "absolute")
    assert verdict.top_loss is not None and verdict.top_loss > TOP_LOSS_LIMIT
    assert verdict.top_loss == pytest.approx(0.1)
    assert not verdict.kept["top_class"]
    # Under absolute it may have the whole processor: a load of 0.9 of it is judged ...
    over = {f"p{k}": {"hi": {"shed_count": 5, "load": 0.9}} for k in range(WARMUP_PERIODS, PERIODS)}
    assert judge(WORKLOAD, series(**over), "absolute").top_loss == pytest.approx(0.1)
    # ... under relative only its share (0.75): that load releases the promise, for the
    # period and one target after, and a run that never judges it says so
    relative = judge(WORKLOAD, series(**over), "relative")
    assert relative.top_loss is None and relative.kept["top_class"] is None
    p = WARMUP_PERIODS + 5
    after_burst = series(
        **{f"p{p}": {"hi": {"load": 0.9}}},
        **{f"p{k}": {"hi": {"shed_count": 5}} for k in (p + 1, p + 2)},
    )
    assert judge(WORKLOAD, after_burst, "relative").top_loss == 0.0
    # A queue excuses nothing: a top class the scheduler under-served builds one.
    backlog = series(
        **{f"p{k}": {"hi": {"queue_length": 500}} for k in range(WARMUP_PERIODS, p)},
        **{f"p{k}": {"hi": {"shed_count": 5}} for k in (p, p + 1)},
    )
    assert judge(WORKLOAD, backlog, "relative").top_loss


def test_idle_processor_in_more_than_a_tenth_of_the_shedding_periods_is_found():
    first = WARMUP_PERIODS + 2
    shedding = {f"p{k}": {"lo": {"shed_count": 15}} for k in range(first, first + 20)}
    run = series(**shedding)
    for k in range(first, first + 20):
        run[k]["idle_s"] = 0.0  # the classes use the processor whole...
    for k in (first + 3, first + 11):  # ...but in two of twenty: the controller learns late
        run[k]["idle_s"] = 0.2 * PERIOD_S
    verdict = judge(WORKLOAD, run, "absolute")
    assert verdict.idle_share == pytest.approx(2 / 20)
    assert verdict.kept["no_idle_while_shedding"]
    run[first + 12]["idle_s"] = 0.2 * PERIOD_S  # a third, in the period after one
    verdict = judge(WORKLOAD, run, "absolute")
    assert verdict.idle_share == pytest.approx(3 / 20)
    assert not verdict.kept["no_idle_while_shedding"]


def test_tuples_shed_past_their_target_do_not_make_a_period_a_shedding_one():
    """Tuples that had already waited their delay target would have been late whatever
    served them (the loss counts a late answer as lost): shedding them wastes nothing of
    an idle processor. One tuple shed in time more (beyond ``SHED_EPS`` of the arrivals)
    and the idle period is judged, and breaks the promise."""
    p = WARMUP_PERIODS + 2  # every period leaves the processor 80 % idle
    expired = {"shed_count": 15, "stale_shed_count": 15, "expired_shed_count": 15}
    verdict = judge(WORKLOAD, series(**{f"p{p}": {"lo": expired}}), "absolute")
    assert verdict.kept["no_idle_while_shedding"] is None  # no period to judge it in
    in_time = {**expired, "expired_shed_count": 14}
    verdict = judge(WORKLOAD, series(**{f"p{p}": {"lo": in_time}}), "absolute")
    assert verdict.idle_share == 1.0 and not verdict.kept["no_idle_while_shedding"]


def test_a_class_starved_of_answers_is_late():
    """Tuples queued and no answer, period after period: late, and so not recovered."""
    first = WARMUP_PERIODS + 2
    starved = {"max_response_time_s": None, "queue_length": 40}
    run = series(**{f"p{k}": {"lo": starved} for k in range(first, first + RECOVERY_PERIODS + 1)})
    assert not judge(WORKLOAD, run, "absolute").kept["recovery"]
    quiet = {"max_response_time_s": None, "queue_length": 0}  # nothing to answer
    run = series(**{f"p{k}": {"lo": quiet} for k in range(first, first + RECOVERY_PERIODS + 1)})
    assert judge(WORKLOAD, run, "absolute").kept["recovery"]


def test_a_long_late_run_breaks_recovery_but_a_short_one_does_not():
    def late(n: int) -> list[dict[str, Any]]:
        first = WARMUP_PERIODS + 2
        return series(
            **{f"p{k}": {"lo": {"max_response_time_s": 1.5}} for k in range(first, first + n)}
        )

    assert judge(WORKLOAD, late(RECOVERY_PERIODS), "relative").kept["recovery"]
    verdict = judge(WORKLOAD, late(RECOVERY_PERIODS + 1), "relative")
    assert verdict.longest_late_run == RECOVERY_PERIODS + 1 and not verdict.kept["recovery"]


def test_flags_must_match_the_truth_both_ways():
    flagged = series(**{f"p{WARMUP_PERIODS + 1}": {"lo": {"state": "infeasible"}}})
    assert judge(WORKLOAD, flagged, "relative").misflagged == ("lo",)
    truth = Workload(**{**WORKLOAD.__dict__, "infeasible": frozenset({"lo"})})
    assert judge(truth, flagged, "relative").kept["feasibility"]
    assert judge(truth, series(), "relative").misflagged == ("lo",)


def test_a_simulated_run_gives_a_verdict_on_its_own_series():
    workload = random_workload(3)
    out = simulate(workload.scenario("none"))
    verdict = judge(workload, out.series, "")
    # No manager never sheds: priority order and idle while shedding are not judged.
    assert verdict.priority_excess is None and verdict.idle_share is None
    assert verdict.top_loss in (None, 0.0)


@pytest.mark.parametrize("variant", ["dilos-relative", "aloma"])
def test_the_simulator_flags_exactly_the_infeasible_classes(variant: str):
    """Seed 1 has three infeasible classes of five, seed 0 one: the floor the simulator
    measures puts exactly those in state ``infeasible``, in every period once their
    answers missed the target ``FLAG_PERIODS`` periods in a row (the first periods)."""
    for seed in (0, 1):
        workload = random_workload(seed)
        out = simulate(workload.scenario(variant))
        assert judge(workload, out.series, "relative").kept["feasibility"]
        for sample in out.series[FLAG_PERIODS - 1 :]:
            flagged = {n for n, c in sample["classes"].items() if c["state"] == "infeasible"}
            assert flagged == workload.infeasible, sample["t_s"]
        # the results say so too: the share of periods infeasible, and the floor
        unflagged = (FLAG_PERIODS - 1) / len(out.series)
        for name, summary in build_results(out)["classes"].items():
            infeasible = name in workload.infeasible
            share = summary["infeasible_fraction"]
            assert share >= 1.0 - unflagged if infeasible else share == 0.0
            assert (summary["max_floor_s"] > summary["delay_target_s"]) == infeasible


KNOWN_BROKEN = {
    "dilos-relative": {"no_idle_while_shedding"},
    "dilos-absolute": {"no_idle_while_shedding", "recovery"},
    "dilos-strict": {"no_idle_while_shedding", "recovery"},
}
"""The promises the judges of issue 44 found DILoS breaking on some generated workloads
(``python -m bench.bench_robustness --strict``; the shares in docs/measurements.md):
the processor idles in more than a tenth of the shedding periods now and then (in
runs with few of them: a class's stale rule drops tuples not yet at their target early
in a period, a burst's queue beyond its bound, and the processor idles later in it when
the arrivals fall); a feasible class stays late for up to 18 periods with room to
shed (under ``absolute`` and ``strict``, a class the classes above took to quota 0
keeps a few tuples queued that no turn serves). Open in issue 44: the controller is to
be fixed and each entry removed, not the judge widened."""


@hypothesis_seed(SEED)
@example(seed=453, variant="dilos-relative")
@example(seed=76611, variant="dilos-strict")
@settings(max_examples=12, deadline=None, database=None)
@given(
    seed=st.integers(min_value=200, max_value=100_000),
    variant=st.sampled_from(["dilos-relative", "dilos-absolute", "dilos-strict"]),
)
def test_on_any_generated_workload_dilos_keeps_its_promises(seed: int, variant: str):
    """A property over workloads outside the benchmark's seeds, new ones at each commit
    (``tests/rotation.py``; a failure prints its workload's seed: pin it with
    ``@example``), under each policy: while a class sheds, no lower class takes more than
    its guaranteed share; the top class loses at most 0.5 % where its load fits what it
    may have; the processor is seldom idle while a class sheds; every feasible class is
    back within its target within ten periods; exactly the infeasible classes are
    flagged; each but what :data:`KNOWN_BROKEN` lists."""
    workload = random_workload(seed)
    out = simulate(workload.scenario(variant))
    verdict = judge(workload, out.series, VARIANTS[variant]["policy"])
    broken = {p for p, kept in verdict.kept.items() if kept is False}
    assert not broken - KNOWN_BROKEN[variant], f"workload {seed}, {variant}: {verdict}"


@pytest.mark.parametrize(
    ("seed", "variant"),
    [
        (11, "dilos-absolute"),
        (11, "dilos-strict"),
        (17, "dilos-relative"),
        (17, "dilos-strict"),
    ],
)
def test_a_burst_above_a_class_does_not_make_it_drop_what_the_idle_processor_serves(
    seed: int, variant: str
) -> None:
    """A class starved for a period by a burst above it measures its queue bound on the
    processor's idle over the last CRC periods, not on that period alone (which dropped
    tuples the processor then idled beside: these workloads idled in 37-50 % of their
    shedding periods). Workload 11 now sheds nothing: the promise is not judged there,
    and not broken."""
    workload = random_workload(seed)
    out = simulate(workload.scenario(variant))
    verdict = judge(workload, out.series, VARIANTS[variant]["policy"])
    kept = verdict.kept["no_idle_while_shedding"]
    assert kept is not False, f"workload {seed}, {variant}: {verdict}"


@pytest.mark.parametrize(
    ("seed", "variant"),
    [(469, "dilos-absolute"), (453, "dilos-relative"), (76611, "dilos-strict")],
)
def test_a_class_that_stops_shedding_serves_what_it_deferred_in_arrival_order(
    seed: int, variant: str
) -> None:
    """Tuples a class deferred while it shed join its queue in arrival order once it
    sheds nothing, as waiting tuples are taken oldest first on Spark. Served freshest
    first only when nothing else waited, they went stale behind the queue the class was
    draining within its target: the top class lost 0.70 % (workload 469, after a stall
    and a burst), 0.69 % and 1.02 % where its load fitted."""
    workload = random_workload(seed)
    out = simulate(workload.scenario(variant))
    verdict = judge(workload, out.series, VARIANTS[variant]["policy"])
    assert verdict.kept["top_class"] is True, f"workload {seed}, {variant}: {verdict}"

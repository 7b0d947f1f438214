"""Each exemption of the promise checker (``spark_runner.sim.promises``) forgives only time
or loss the class judged could not have used, and a real break of the same promise is
still found despite it.

Every exemption has two tests, on small simulated runs (simulated time only): one where
the exemption applies, asserting from the run's own per-period series (or a run of the
same scenario without the class that took the time) that what it forgives was beyond the
class's reach and that the promise is kept; one with a real break of the same promise,
found broken. Where the simulator does not break a promise by itself, the break is a run
judged under a policy whose guarantee it did not keep, or its series altered in one
period, as little as the break needs.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import pytest

from spark_runner.sim import simulate
from spark_runner.sim.promises import (
    IDLE_SHARE_LIMIT,
    IDLE_TOLERANCE,
    RECOVERY_PERIODS,
    SHED_EPS,
    TOP_LOSS_LIMIT,
    USAGE_TOLERANCE,
    WARMUP_PERIODS,
    judge,
)
from spark_runner.sim.workloads import MAX_SHED, PERIOD_S, VARIANTS, Workload

Sample = dict[str, Any]
DURATION_S = 20.0
ROUND_S = 0.01  # the engine's default scheduler round


def ops(cost_s: float) -> list[dict[str, Any]]:
    return [{"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": cost_s}}]


def constant(rate: float) -> dict[str, Any]:
    return {"kind": "constant", "rate_per_s": rate}


def bursts(rate: float, on_s: float, every_s: float) -> dict[str, Any]:
    """``rate`` tuples/s for ``on_s`` at the start of every ``every_s``, none between."""
    steps, t = [], 0.0
    while t < DURATION_S:
        steps += [
            {"at_s": round(t, 3), "rate_per_s": rate},
            {"at_s": round(t + on_s, 3), "rate_per_s": 0.0},
        ]
        t += every_s
    return {"kind": "step", "steps": steps}


def workload(
    hi: dict[str, Any],
    lo: dict[str, Any] | None,
    *,
    cost_hi: float = 0.001,
    cost_lo: float = 0.001,
    targets: tuple[float, float] = (1.0, 1.0),
) -> Workload:
    """Class "hi" (priority 3) over class "lo" (priority 1, left out when ``lo`` is
    None), one operator each, batches of 4."""
    priorities = {"hi": 3.0, "lo": 1.0}
    classes = [
        {
            "name": "hi",
            "priority": priorities["hi"],
            "delay_target_s": targets[0],
            "queries": [{"name": "q", "source": "sh", "operators": ops(cost_hi)}],
        },
        {
            "name": "lo",
            "priority": priorities["lo"],
            "delay_target_s": targets[1],
            "queries": [{"name": "q", "source": "sl", "operators": ops(cost_lo)}],
        },
    ]
    streams = [{"name": "sh", "arrival": hi}, {"name": "sl", "arrival": lo}]
    n = 2 if lo is not None else 1
    doc = {
        "version": 1,
        "name": "exemption",
        "seed": 1,
        "duration_s": DURATION_S,
        "control": {"period_s": PERIOD_S, "redistribution_every": 8},
        "engine": {"batch_size": 4, "batch_overhead_s": 0.0001},
        "streams": streams[:n],
        "classes": classes[:n],
    }
    names = ["hi", "lo"][:n]
    return Workload(0, doc, frozenset(), {name: priorities[name] for name in names})


def run(w: Workload, variant: str) -> list[Sample]:
    return simulate(w.scenario(variant)).series


def policy(variant: str) -> str:
    return str(VARIANTS[variant].get("policy", ""))


def judged(series: Sequence[Sample]) -> range:
    return range(WARMUP_PERIODS, len(series))


def free_s(s: Sample) -> float:
    """The processor time the classes had in a period (as the checker reads it)."""
    return float(s["idle_s"]) + sum(float(c["busy_s"]) for c in s["classes"].values())


def sheds(c: dict[str, Any]) -> bool:
    return float(c["shed_count"]) > SHED_EPS * float(c["arrival_rate_per_s"]) * PERIOD_S


def altered(series: Sequence[Sample], p: int, cls: str, **fields: float) -> list[Sample]:
    """``series`` with class ``cls``'s ``fields`` of period ``p`` replaced."""
    out = copy.deepcopy(list(series))
    out[p]["classes"][cls].update(fields)
    return out


def priority_excess_without(
    w: Workload, s: Sample, low: str, pol: str, *, keep: Sequence[str] = ()
) -> float:
    """A lower class's usage over its guaranteed share in period ``s`` with none of the
    checker's exemptions but those named in ``keep`` (``turn``, ``slack``)."""
    c = s["classes"][low]
    used = float(c["busy_s"])
    if "turn" in keep:
        used -= float(c["longest_turn_s"])
    if "slack" in keep:
        used -= max(0.0, ROUND_S - USAGE_TOLERANCE * free_s(s))
    return max(0.0, used) / free_s(s) - w.guaranteed_share(low, pol)


# --- unwanted_busy_s: time a lower class took while no class above wanted the processor


def late_bursts(rate: float, at_s: float, on_s: float, every_s: float) -> dict[str, Any]:
    """``rate`` tuples/s for ``on_s`` from ``at_s`` into every ``every_s``, none between."""
    steps, t = [{"at_s": 0.0, "rate_per_s": 0.0}], 0.0
    while t < DURATION_S:
        steps += [
            {"at_s": round(t + at_s, 3), "rate_per_s": rate},
            {"at_s": round(t + at_s + on_s, 3), "rate_per_s": 0.0},
        ]
        t += every_s
    return {"kind": "step", "steps": steps}


HI_BURSTS = bursts(30000.0, 0.05, 2.0)  # 1,500 tuples at once: 1.65 s of work, target 0.6 s


def test_unwanted_time_is_time_the_class_above_had_nothing_to_use_it_for() -> None:
    """``unwanted_busy_s``: "hi" (strict priority) gets bursts it cannot serve within its
    target and sheds their stale part; "lo"'s tuples come just after each burst and run
    once hi is done. The time lo takes in hi's shedding periods is all unwanted, more
    than priority order allows without the exemption, and it is time hi could not use:
    hi turned nothing away and left nothing queued, and without lo hi sheds exactly as
    much and is busy exactly as long, the processor idling in lo's place."""
    with_lo = workload(HI_BURSTS, late_bursts(3000.0, 0.1, 0.1, 2.0), targets=(0.6, 1.0))
    alone = workload(HI_BURSTS, None, targets=(0.6, 1.0))
    series, without = run(with_lo, "dilos-strict"), run(alone, "dilos-strict")
    forgiven = [
        p
        for p in judged(series)
        if sheds(series[p]["classes"]["hi"])
        and priority_excess_without(with_lo, series[p], "lo", "strict", keep=("turn", "slack"))
        > USAGE_TOLERANCE
    ]
    assert forgiven, "the exemption matters in some period"
    for p in forgiven:
        hi, lo = series[p]["classes"]["hi"], series[p]["classes"]["lo"]
        assert hi["shed_count"] == hi["stale_shed_count"]  # nothing turned away
        assert hi["queue_length"] == 0
        assert without[p]["classes"]["hi"]["shed_count"] == hi["shed_count"]
        assert without[p]["classes"]["hi"]["busy_s"] == hi["busy_s"]
        assert without[p]["idle_s"] >= float(lo["unwanted_busy_s"])
    assert judge(with_lo, series, "strict").kept["priority_order"]


def test_unwanted_time_does_not_cover_what_tuples_turned_away_would_have_taken() -> None:
    """``unwanted_busy_s`` against a real break: under ALoMa per class (fixed quotas, no
    stale first) "hi" gets a burst at each period's start, turns a third of it away at
    its admission, drains the rest and has nothing left; "lo" takes the rest of the
    period, its share of 0.25 and more, as unwanted time. Those tuples, admitted, would
    have been answered well within hi's target in that time: priority order is broken
    (the checker forgives unwanted time only beyond the work turned away in the period)."""
    w = workload(bursts(4000.0, 0.15, 0.5), constant(600))
    series = run(w, "aloma")
    broken = [
        p
        for p in judged(series)
        if priority_excess_without(w, series[p], "lo", "", keep=("turn", "slack")) > USAGE_TOLERANCE
    ]
    assert broken
    for p in broken:
        hi, lo = series[p]["classes"]["hi"], series[p]["classes"]["lo"]
        turned = (hi["shed_count"] - hi["stale_shed_count"]) * hi["load"] / hi["arrival_rate_per_s"]
        assert turned > float(lo["unwanted_busy_s"])  # they would have filled that time
        assert hi["max_response_time_s"] < 1.0  # and been answered within the target
    verdict = judge(w, series, "")
    assert verdict.kept["priority_order"] is False
    assert verdict.priority_excess_on_arrival is not None
    assert verdict.priority_excess_on_arrival > USAGE_TOLERANCE


@pytest.mark.xfail(
    strict=True,
    reason="open: the time a lower class takes after a stale-first drop is unwanted even "
    "where the class above dropped tuples it could have served in that time (DILoS's "
    "stale limit does not count it as capacity); counting stale drops against it breaks "
    "the strict robustness bar (dilos-absolute workloads 8, 9, 21, 29)",
)
def test_unwanted_time_after_a_premature_stale_drop_breaks_priority_order() -> None:
    """``unwanted_busy_s`` against a real break it still forgives: "hi" gets the same
    bursts as above with "lo" always busy. With lo, hi drops about a fifth more of each
    burst stale and serves less, and lo takes the rest of the period as unwanted time;
    without lo, hi serves that time (it is busy longer) and sheds less: lo took time hi
    could have used while it shed."""
    with_lo = workload(HI_BURSTS, constant(800), targets=(0.6, 1.0))
    alone = workload(HI_BURSTS, None, targets=(0.6, 1.0))
    series, without = run(with_lo, "dilos-strict"), run(alone, "dilos-strict")
    total = [
        sum(float(s[p]["classes"]["hi"][k]) for p in judged(s))
        for s in (series, without)
        for k in ("shed_count", "busy_s")
    ]
    assert total[0] > total[2] and total[1] < total[3]  # sheds more, served less with lo
    assert not judge(with_lo, series, "strict").kept["priority_order"]


def ahead_of_share(series: Sequence[Sample], low: str, share: float) -> float:
    """The most a class's busy time ran ahead of ``share`` of the processor time the
    classes had, over the run so far (from its first period to each one)."""
    taken = had = 0.0
    most = -math.inf
    for s in series[1:]:
        taken += float(s["classes"][low]["busy_s"])
        had += free_s(s)
        most = max(most, taken - share * had)
    return most


def moved(series: Sequence[Sample], p: int, seconds: float) -> list[Sample]:
    """``series`` with ``seconds`` of hi's busy time in period ``p`` taken by lo instead
    (the processor time the classes had unchanged)."""
    out = copy.deepcopy(list(series))
    out[p]["classes"]["hi"]["busy_s"] -= seconds
    out[p]["classes"]["lo"]["busy_s"] += seconds
    return out


# --- repaid_busy_s: time given back to a class for another class's overrun turns

LONG_HI_TURNS = workload(constant(30.0), constant(400.0), cost_hi=0.05)  # 0.2 s turns


def test_repaid_time_is_the_lower_class_share_given_back() -> None:
    """``repaid_busy_s``: "hi"'s turns (0.2 s) overrun its slot of a round and delay
    "lo"; shorter rounds give lo its part back, sometimes in a later period than the one
    it lost it in. There lo's usage is over its share (0.25) by more than priority order
    allows without the exemption, yet over the run lo never got ahead of its share: the
    time forgiven was its own, given back, not hi's."""
    series = run(LONG_HI_TURNS, "dilos-relative")
    over = [
        p
        for p in judged(series)
        if sheds(series[p]["classes"]["hi"])
        and priority_excess_without(LONG_HI_TURNS, series[p], "lo", "relative", keep=("turn",))
        > USAGE_TOLERANCE
    ]
    assert over and all(series[p]["classes"]["lo"]["repaid_busy_s"] > 0 for p in over)
    assert all(series[p]["classes"]["lo"]["unwanted_busy_s"] == 0 for p in over)
    assert ahead_of_share(series, "lo", 0.25) <= 0.0
    assert judge(LONG_HI_TURNS, series, "relative").kept["priority_order"]


def test_repaid_time_does_not_forgive_taking_as_much_again() -> None:
    """``repaid_busy_s`` against a real break: in a period where "hi" sheds with tuples
    queued and "lo", within its share, was given back time lost to hi's turns in that
    same period, lo takes as much again from hi. Forgiving all the time given back
    would hide it (lo's usage less the repayment stays within its share); the checker
    forgives only what lo was due from the periods before, and finds priority order
    broken."""
    w, series = LONG_HI_TURNS, run(LONG_HI_TURNS, "dilos-relative")
    within = [
        q
        for q in judged(series)
        if sheds(series[q]["classes"]["hi"])
        and priority_excess_without(w, series[q], "lo", "relative", keep=("turn",)) <= 0.0
    ]
    p = max(within, key=lambda q: series[q]["classes"]["lo"]["repaid_busy_s"])
    lo = series[p]["classes"]["lo"]
    assert series[p]["classes"]["hi"]["queue_length"] > 0
    repaid = float(lo["repaid_busy_s"])
    taken = moved(series, p, repaid)
    # the reading that forgives all the time given back: within the tolerance
    excess = priority_excess_without(w, taken[p], "lo", "relative", keep=("turn",))
    assert excess - repaid / free_s(taken[p]) <= USAGE_TOLERANCE
    assert judge(w, series, "relative").kept["priority_order"]
    assert judge(w, taken, "relative").kept["priority_order"] is False


# --- longest_turn_s: one operator turn (turns are not preempted)

LONG_LO_TURNS = workload(constant(1500.0), constant(200.0), cost_lo=0.01)  # 0.04 s turns


def test_one_turn_forgiven_is_an_overrun_the_class_pays_back() -> None:
    """``longest_turn_s``: "lo"'s turns (0.04 s, 8 % of a period) start on its own share
    and run past it; in the period one ends in, lo is over its share by more than the
    tolerance, never by more than that one turn, and over the run it never gets ahead of
    its share by a turn: the overrun is paid back as a deficit, not taken from hi."""
    series = run(LONG_LO_TURNS, "dilos-relative")
    over = [
        p
        for p in judged(series)
        if sheds(series[p]["classes"]["hi"])
        and priority_excess_without(LONG_LO_TURNS, series[p], "lo", "relative") > USAGE_TOLERANCE
    ]
    assert over
    turn = max(float(series[p]["classes"]["lo"]["longest_turn_s"]) for p in judged(series))
    for p in over:
        excess = priority_excess_without(LONG_LO_TURNS, series[p], "lo", "relative")
        assert excess * free_s(series[p]) <= turn
    assert ahead_of_share(series, "lo", 0.25) <= turn
    assert judge(LONG_LO_TURNS, series, "relative").kept["priority_order"]


def test_one_turn_does_not_forgive_a_second() -> None:
    """``longest_turn_s`` against a real break: in a period where "hi" sheds, "lo" takes
    another turn's time and the tolerance from hi besides: two turns beyond its share
    are not one turn that could not be preempted; priority order is broken."""
    series = run(LONG_LO_TURNS, "dilos-relative")
    p = next(p for p in judged(series) if sheds(series[p]["classes"]["hi"]))
    lo = series[p]["classes"]["lo"]
    extra = float(lo["longest_turn_s"]) + 1.5 * USAGE_TOLERANCE * free_s(series[p])
    assert judge(LONG_LO_TURNS, moved(series, p, extra), "relative").kept["priority_order"] is False


# --- a scheduler round's slack where stalls left the classes a sliver of the period


def sliver(series: Sequence[Sample], p: int, lo_busy_s: float) -> list[Sample]:
    """Period ``p`` of ``series`` stalled: hi and lo busy 4 ms and ``lo_busy_s``, no idle
    time, no turn or time given back to excuse lo."""
    out = altered(series, p, "hi", busy_s=0.004)
    out[p]["classes"]["lo"].update(
        busy_s=lo_busy_s, longest_turn_s=0.0, unwanted_busy_s=0.0, repaid_busy_s=0.0
    )
    out[p]["idle_s"] = 0.0
    return out


def test_a_round_of_slack_is_the_scheduler_granularity() -> None:
    """Round slack: where stalls left the classes 8 ms of a period, the tolerance (5 % of
    that) is less than one scheduler round (10 ms), the least the scheduler hands a class;
    "lo" ahead of its share by less than a round while "hi" sheds is the scheduler's
    granularity, not hi's time: kept."""
    w = LONG_LO_TURNS
    series = run(w, "dilos-relative")
    p = next(p for p in judged(series) if sheds(series[p]["classes"]["hi"]))
    stalled = sliver(series, p, 0.004 + 0.009)
    assert USAGE_TOLERANCE * free_s(stalled[p]) < ROUND_S
    excess_s = priority_excess_without(w, stalled[p], "lo", "relative") * free_s(stalled[p])
    assert 0.0 < excess_s < ROUND_S
    assert judge(w, stalled, "relative").kept["priority_order"]


def test_a_round_of_slack_does_not_forgive_more_than_a_round() -> None:
    """Round slack against a real break: in the same stalled period "lo" is ahead of its
    share by more than a round and the tolerance: broken."""
    w = LONG_LO_TURNS
    series = run(w, "dilos-relative")
    p = next(p for p in judged(series) if sheds(series[p]["classes"]["hi"]))
    assert judge(w, sliver(series, p, 0.004 + 0.016), "relative").kept["priority_order"] is False


# --- one learning period in ten: the processor idle while a class sheds


def idle(s: Sample) -> bool:
    return float(s["idle_s"]) > IDLE_TOLERANCE * PERIOD_S


OVERLOADED = workload(constant(1500.0), constant(400.0))  # hi alone 1.6 times the processor


def test_one_idle_period_in_ten_is_the_period_a_controller_learns_in() -> None:
    """``IDLE_SHARE_LIMIT`` (one learning period): "hi" sheds in every period and the
    classes use the whole processor, but in one period the processor idles: it followed
    a period with no idle time, so the shed fraction in force, decided at that period's
    end, could not have known of it, and the next period is busy again (the controller
    handed the time over once it learned): kept."""
    series = run(OVERLOADED, "dilos-strict")
    shedding = [p for p in judged(series) if any(sheds(c) for c in series[p]["classes"].values())]
    assert len(shedding) >= 1 / IDLE_SHARE_LIMIT and not any(idle(series[p]) for p in shedding)
    p = shedding[len(shedding) // 2]
    once = copy.deepcopy(series)
    once[p]["idle_s"] = 4 * IDLE_TOLERANCE * PERIOD_S
    assert not idle(once[p - 1]) and not idle(once[p + 1])
    verdict = judge(OVERLOADED, once, "strict")
    assert verdict.idle_share is not None and 0 < verdict.idle_share <= IDLE_SHARE_LIMIT
    assert verdict.kept["no_idle_while_shedding"]


def test_idling_again_after_learning_breaks_no_idle_while_shedding() -> None:
    """``IDLE_SHARE_LIMIT`` against a real break: under ALoMa (no stale first) "hi" alone
    gets a burst at every period's start and turns part of it away while the processor
    idles the rest of the period, period after period: it had learned the processor
    idled and went on shedding: broken."""
    w = workload(bursts(4000.0, 0.15, 0.5), None)
    series = run(w, "aloma")
    idle_shedding = [
        p for p in judged(series) if sheds(series[p]["classes"]["hi"]) and idle(series[p])
    ]
    assert any(p - 1 in idle_shedding for p in idle_shedding)  # idle again after learning
    verdict = judge(w, series, "")
    assert verdict.kept["no_idle_while_shedding"] is False


# --- the top class: judged where its load fitted, and one delay target after


def hi_bursts_over_a_base() -> dict[str, Any]:
    """100 tuples/s, with 1,500 at once every 2 s (1.65 s of work, target 0.6 s)."""
    steps, t = [], 0.0
    while t < DURATION_S:
        steps += [
            {"at_s": round(t, 3), "rate_per_s": 30000.0},
            {"at_s": round(t + 0.05, 3), "rate_per_s": 100.0},
        ]
        t += 2.0
    return {"kind": "step", "steps": steps}


TOP_BURSTS = workload(hi_bursts_over_a_base(), constant(200.0), targets=(0.6, 1.0))


def unfit(w: Workload, series: Sequence[Sample], p: int) -> bool:
    """The top class's arrivals in period ``p`` did not fit the whole processor."""
    return float(series[p]["classes"]["hi"]["load"]) * PERIOD_S > free_s(series[p])


def test_top_class_loss_forgiven_is_of_bursts_beyond_the_processor() -> None:
    """Top class (load did not fit, one delay target after): "hi" sheds only in the
    periods of bursts bigger than the whole processor or within a target after one, and
    what it sheds there is stale (tuples of the burst nobody could serve in time): the
    checker leaves those periods out and judges the rest, in which hi loses nothing."""
    series = run(TOP_BURSTS, "dilos-absolute")
    window = math.ceil(0.6 / PERIOD_S)
    lossy = [p for p in judged(series) if series[p]["classes"]["hi"]["shed_count"]]
    assert lossy
    for p in lossy:
        hi = series[p]["classes"]["hi"]
        assert hi["shed_count"] == hi["stale_shed_count"]
        assert any(unfit(TOP_BURSTS, series, q) for q in range(p - window, p + 1))
    verdict = judge(TOP_BURSTS, series, "absolute")
    assert verdict.judged["top_class"] > 0 and verdict.top_loss == 0.0
    assert verdict.kept["top_class"]


def test_top_class_loss_outside_the_burst_window_breaks_its_promise() -> None:
    """Top class against a real break: in a judged period more than a target after any
    burst, with its load well within the processor, "hi" turns a tenth of its arrivals
    away: broken."""
    series = run(TOP_BURSTS, "dilos-absolute")
    window = math.ceil(0.6 / PERIOD_S)
    p = next(
        p
        for p in judged(series)
        if not any(unfit(TOP_BURSTS, series, q) for q in range(p - window, p + 1))
    )
    arrived = float(series[p]["classes"]["hi"]["arrival_rate_per_s"]) * PERIOD_S
    lost = altered(series, p, "hi", shed_count=math.ceil(0.1 * arrived))
    verdict = judge(TOP_BURSTS, lost, "absolute")
    assert verdict.top_loss is not None and verdict.top_loss > TOP_LOSS_LIMIT
    assert verdict.kept["top_class"] is False


# --- recovery: late only counts while the class had room left to shed


def test_late_without_room_to_shed_is_not_a_failure_to_recover() -> None:
    """Recovery's room to shed: under strict priority "lo" gets no processor while "hi"
    sheds; it is late (tuples queued, no answer) in every judged period, but it sheds all
    it gets (at least ``MAX_SHED`` of its arrivals, stale): shedding more could not have
    brought it back, so the checker does not count it."""
    series = run(OVERLOADED, "dilos-strict")
    for p in judged(series):
        lo = series[p]["classes"]["lo"]
        assert lo["max_response_time_s"] is None and lo["queue_length"] > 0  # late
        arrived = float(lo["arrival_rate_per_s"]) * PERIOD_S
        assert float(lo["shed_count"]) >= (MAX_SHED - SHED_EPS) * arrived  # no room
    verdict = judge(OVERLOADED, series, "strict")
    assert verdict.longest_late_run == 0 and verdict.kept["recovery"]


def test_late_with_room_to_shed_breaks_recovery() -> None:
    """Recovery against a real break: the same overload without a manager: "hi" is late
    in every judged period while it sheds nothing (all its room left): broken."""
    series = run(OVERLOADED, "none")
    for p in judged(series):
        hi = series[p]["classes"]["hi"]
        assert hi["shed_count"] == 0 and float(hi["max_response_time_s"]) > 1.0
    verdict = judge(OVERLOADED, series, "")
    assert verdict.longest_late_run > RECOVERY_PERIODS and verdict.kept["recovery"] is False


# --- the warm-up: the first periods, while managers learn from their initial estimates


FITS = workload(constant(600.0), constant(200.0))  # 0.9 of the processor in all


def test_the_warm_up_is_the_load_model_learning() -> None:
    """``WARMUP_PERIODS``: the load "hi"'s manager reads climbs during the first periods
    (its estimate starts from the declared costs) and is settled after them; a loss of
    the top class inside those periods is not judged: kept."""
    series = run(FITS, "aloma")
    loads = [float(s["classes"]["hi"]["load"]) for s in series]
    settled = loads[WARMUP_PERIODS]
    assert loads[0] < 0.95 * settled
    assert all(abs(x - settled) <= 0.01 * settled for x in loads[WARMUP_PERIODS:])
    arrived = float(series[1]["classes"]["hi"]["arrival_rate_per_s"]) * PERIOD_S
    early = copy.deepcopy(series)
    for p in range(1, WARMUP_PERIODS):
        early[p]["classes"]["hi"]["shed_count"] = math.ceil(0.1 * arrived)
    assert judge(FITS, early, "absolute").kept["top_class"]


def test_the_same_loss_after_the_warm_up_breaks_the_top_class_promise() -> None:
    """``WARMUP_PERIODS`` against a real break: the same loss of "hi" in the periods just
    after the warm-up, its load learned and fitting: broken."""
    series = run(FITS, "aloma")
    arrived = float(series[1]["classes"]["hi"]["arrival_rate_per_s"]) * PERIOD_S
    late = copy.deepcopy(series)
    for p in range(WARMUP_PERIODS, 2 * WARMUP_PERIODS):
        late[p]["classes"]["hi"]["shed_count"] = math.ceil(0.1 * arrived)
    assert judge(FITS, late, "absolute").kept["top_class"] is False

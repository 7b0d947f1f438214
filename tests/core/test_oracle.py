"""The oracle's loss: the least shedding that meets the targets on the machine, classes
served by the policy's guarantees and then by priority (simulated time)."""

from __future__ import annotations

import itertools
import random

import pytest

from spark_runner.core.errors import ParameterError
from spark_runner.core.oracle import MachineOracle, recent_shed_s

T = 0.5


def alone(target: float, periods: list[tuple[float, float]], floor: float = 0.0) -> MachineOracle:
    """One class's oracle over ``periods`` of (offered work, machine time)."""
    oracle = MachineOracle({"c": target})
    for offered, machine in periods:
        oracle.period(T, {"c": offered}, machine, ["c"], floors_s={"c": floor})
    return oracle


def test_work_that_always_fits_needs_no_shedding() -> None:
    loss = alone(1.0, [(0.4, 0.5)] * 20).losses()["c"]
    assert loss.loss_fraction == 0.0 and loss.offered_s == pytest.approx(8.0)


def test_a_burst_beyond_what_fits_within_the_target_is_shed_at_its_deadline() -> None:
    """2 s of work arrives in the first period (taken at 0.25 s), the class can have the
    whole processor (1 s/s), D = 1 s: served from 0 s until its deadline at 1.25 s, so
    1.25 s of work makes it and 0.75 s had to go, in the third period."""
    loss = alone(1.0, [(2.0, 0.5), (0.0, 0.5), (0.0, 0.5), (0.0, 0.5)]).losses()["c"]
    assert loss.shed_s == pytest.approx(0.75)
    assert loss.shed_by_period == pytest.approx({2: 0.75})
    assert loss.loss_fraction == pytest.approx(0.375)


def test_the_floor_shortens_the_time_to_serve() -> None:
    loss = alone(1.0, [(2.0, 0.5), (0.0, 0.5), (0.0, 0.5)], floor=0.5).losses()["c"]
    assert loss.shed_s == pytest.approx(2.0 - 0.75)  # deadline 0.25 + 0.5 = 0.75 s


def test_a_capacity_dip_sheds_only_what_cannot_wait_for_the_next_period() -> None:
    """Steady 0.4 s per period, one period with no capacity (a stall): with D = 1 s the
    queued work still fits in the next periods' spare 0.1 s; with D = 0.5 s part of it
    cannot wait."""
    periods = [(0.4, c) for c in (0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5)]
    patient, hurried = alone(1.0, periods).losses()["c"], alone(0.5, periods).losses()["c"]
    assert patient.shed_s < hurried.shed_s
    assert hurried.shed_s > 0.0


def test_periods_in_which_the_class_is_infeasible_are_not_judged() -> None:
    oracle = MachineOracle({"c": 1.0})
    oracle.period(T, {"c": 5.0}, 0.0, ["c"], floors_s={"c": 1.2})
    assert oracle.losses()["c"].offered_s == 0.0
    oracle.period(T, {"c": 0.2}, 0.5, ["c"], floors_s={"c": 0.1})
    loss = oracle.losses()["c"]
    assert loss.offered_s == pytest.approx(0.2) and loss.loss_fraction == 0.0


def test_work_still_waiting_at_the_end_is_not_judged() -> None:
    loss = alone(3.0, [(1.0, 0.5)]).losses()["c"]
    assert loss.offered_s == pytest.approx(1.0)
    assert loss.judged_s == 0.0 and loss.shed_s == 0.0


def two_classes(
    periods: int, top: float, low: float, targets: tuple[float, float] = (1.0, 1.0)
) -> MachineOracle:
    oracle = MachineOracle({"top": targets[0], "low": targets[1]})
    for _ in range(periods):
        oracle.period(T, {"top": top, "low": low}, 0.5, ["top", "low"])
    return oracle


def test_the_top_class_has_the_machine_and_the_class_below_what_is_left() -> None:
    """The top class asks 0.8 of the machine, the low one 0.5: however a run shared the
    processor, the oracle's top class loses nothing and the low one 0.3 of its 0.5."""
    losses = two_classes(60, top=0.4, low=0.25).losses()
    assert losses["top"].loss_fraction == pytest.approx(0.0, abs=1e-9)
    assert losses["low"].loss_fraction == pytest.approx(0.6, abs=0.02)


def test_a_patient_top_class_leaves_the_first_moments_to_a_hurried_one() -> None:
    """A top class whose target is long can wait for the processor a hurried class
    below needs first: served top first, as a scheduler that runs it at once would, the
    low class would miss its deadline; the oracle loses neither."""
    oracle = MachineOracle({"top": 1.5, "low": 0.5})
    oracle.period(T, {"top": 0.4, "low": 0.25}, 0.5, ["top", "low"])
    for _ in range(4):
        oracle.period(T, {}, 0.5, ["top", "low"])
    losses = oracle.losses()
    assert losses["top"].shed_s == pytest.approx(0.0, abs=1e-9)
    assert losses["low"].shed_s == pytest.approx(0.0, abs=1e-9)


def test_a_guaranteed_share_is_kept_whatever_the_class_above_needs() -> None:
    """The top class asks the whole machine; the low class's guaranteed half (the
    ``relative`` policy at equal priorities) keeps it whole, and the top class loses
    what the low one keeps."""
    oracle = MachineOracle({"top": 1.0, "low": 1.0})
    for _ in range(60):
        oracle.period(
            T, {"top": 0.5, "low": 0.2}, 0.5, ["top", "low"], guaranteed={"top": 0.5, "low": 0.5}
        )
    losses = oracle.losses()
    assert losses["low"].loss_fraction == pytest.approx(0.0, abs=1e-9)
    assert losses["top"].loss_fraction == pytest.approx(0.4, abs=0.02)


def test_the_live_figure_reads_the_last_period_over_a_window() -> None:
    oracle = two_classes(50, top=0.4, low=0.25)
    shed = recent_shed_s(oracle, periods=20)
    assert shed["top"] == pytest.approx(0.0, abs=1e-9)
    assert shed["low"] == pytest.approx(0.15, abs=1e-6)  # 0.25 offered, 0.1 left to it


# --- the oracle against an exhaustive search ---------------------------------------------

UNIT = 0.125  # work and machine in these units, so that every optimum is on the grid
PERIODS = 4  # work arrives in the first two; every deadline passes by the fourth's end


def search(work: dict[str, list[float]], slack: dict[str, int]) -> tuple[float, ...]:
    """The least shed work, the top class's first, over every split of each period's
    machine (0.5 s, in ``UNIT`` steps) between the two classes; each class served oldest
    first within its share. ``slack`` in periods: a period's work must be served by the
    end of the period ``slack`` after it."""
    steps = round(T / UNIT)
    best: tuple[float, ...] | None = None
    for split in itertools.product(range(steps + 1), repeat=PERIODS):
        shares = {"top": list(split), "low": [steps - s for s in split]}
        shed = tuple(
            served_alone(work[name], slack[name], [UNIT * s for s in shares[name]])
            for name in ("top", "low")
        )
        best = shed if best is None or shed < best else best
    assert best is not None
    return best


def served_alone(work: list[float], slack: int, capacity: list[float]) -> float:
    """The work shed when pieces (one per period) are served oldest first, each by the
    end of the period ``slack`` after its own."""
    left = list(work) + [0.0] * (PERIODS - len(work))
    for p in range(PERIODS):
        c = capacity[p]
        for q in range(max(0, p - slack), p + 1):
            used = min(left[q], c)
            left[q] -= used
            c -= used
    return sum(left)


@pytest.mark.parametrize("seed", range(30))
def test_on_tiny_cases_the_oracle_equals_an_exhaustive_search(seed: int) -> None:
    """Two classes, two periods of arrivals, the deadlines on period ends (the floors
    chosen for it): no split of the machine sheds less for the top class, nor, at the
    top class's least, for the low one; and the oracle's split is one of them."""
    rng = random.Random(seed)
    work = {name: [UNIT * rng.randint(0, 5) for _ in range(2)] for name in ("top", "low")}
    slack = {name: rng.randint(1, 2) for name in ("top", "low")}
    target = 2.0
    oracle = MachineOracle({"top": target, "low": target})
    # the work taken at a period's middle, due slack periods after its end
    floors = {name: target - (slack[name] * T + T / 2) for name in work}
    for p in range(PERIODS):
        offered = {name: work[name][p] if p < 2 else 0.0 for name in work}
        oracle.period(T, offered, T, ["top", "low"], floors_s=floors)
    losses = oracle.losses()
    expected = search(work, slack)
    assert (losses["top"].shed_s, losses["low"].shed_s) == pytest.approx(expected, abs=1e-9)


def test_bounds() -> None:
    with pytest.raises(ParameterError, match="delay_target_s"):
        MachineOracle({"c": 0.0})
    with pytest.raises(ParameterError, match="period_s"):
        MachineOracle({"c": 1.0}).period(0.0, {"c": 1.0}, 1.0, ["c"])

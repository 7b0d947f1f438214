"""Query migration in the simulator: window recreation and state transfer against the
uninterrupted run of the same input (001 §7.3, 002 §V), in simulated time."""

from __future__ import annotations

import numpy as np
import pytest

from spark_runner.core.migration import HandOff, prefer_state_transfer
from spark_runner.sim.migration import Jobs, Kind, Query, Workload, finish_times, migrate

JOBS = Jobs()
COMMAND_MS = 10_300


def workload_for(kind: Kind) -> Workload:
    return Workload(1_000 if kind == "aggregate" else 200, 50, 30)


@pytest.mark.parametrize("kind", ["aggregate", "join", "join_aggregate"])
@pytest.mark.parametrize("length_ms", [5_000, 10_000])
def test_window_recreation_moves_nothing_and_matches_the_uninterrupted_run(
    kind: Kind, length_ms: int
) -> None:
    query = Query(kind, length_ms, 1_000)
    out = migrate(workload_for(kind), query, JOBS, COMMAND_MS, "window_recreation")
    assert out.results > 500
    assert (out.missing, out.duplicated, out.wrong) == (0, 0, 0)
    assert out.bytes_moved == 0
    # the overlap (length - slide of the stream) is read by both jobs
    assert out.read_twice > 0
    assert out.completion_s <= length_ms / 1000 + JOBS.batch_s
    near, near_ref = out.near_handoff(2.0)
    assert np.array_equal(out.rt_s[near], out.rt_uninterrupted_s[near_ref])


@pytest.mark.parametrize("kind", ["aggregate", "join"])
def test_state_transfer_matches_but_moves_state_and_pauses_the_class(kind: Kind) -> None:
    query = Query(kind, 5_000, 1_000)
    out = migrate(workload_for(kind), query, JOBS, COMMAND_MS, "state_transfer")
    assert (out.missing, out.duplicated, out.wrong) == (0, 0, 0)
    assert out.bytes_moved > 0 and out.read_twice == 0
    assert out.completion_s >= JOBS.install_s
    near, near_ref = out.near_handoff(2.0)
    # the first window to end after the switch (within a slide) waits for the state
    paused = out.rt_s[near].max()
    assert paused >= JOBS.install_s - 1.0 > 10 * out.rt_uninterrupted_s[near_ref].max()


def test_state_transfer_moves_more_bytes_for_more_keys_and_recreation_none() -> None:
    query = Query("aggregate", 5_000, 1_000)
    moved = [
        migrate(Workload(400.0 * k / 1000, k, 20), query, JOBS, COMMAND_MS, "state_transfer")
        for k in (1_000, 4_000)
    ]
    assert moved[1].bytes_moved > 3 * moved[0].bytes_moved


def test_a_target_activated_a_slide_early_emits_wrong_windows() -> None:
    """The comparison can fail: a hand-off whose migration timestamp is one slide before
    the rule's makes the target emit a window whose first tuples it never read."""
    query = Query("aggregate", 5_000, 1_000)
    right = HandOff.plan(5_000, 1_000, COMMAND_MS, 5_000)
    early = HandOff(5_000, 1_000, right.ts_mi - 1_000)
    out = migrate(workload_for("aggregate"), query, JOBS, COMMAND_MS, "window_recreation", early)
    assert out.wrong > 0


def test_finish_times_is_the_fifo_recursion() -> None:
    rng = np.random.default_rng(3)
    arrival = np.sort(rng.uniform(0, 10, 500))
    got = finish_times(arrival, 0.03, ready_s=4.0)
    f = 0.0
    for a, g in zip(arrival, got, strict=True):
        f = max(a, 4.0, f) + 0.03
        assert g == pytest.approx(f)


def test_state_transfer_is_chosen_only_when_faster_than_the_window_and_within_slack() -> None:
    assert prefer_state_transfer(window_s=10, transfer_s=5, slack_s=6)
    assert not prefer_state_transfer(window_s=4, transfer_s=5, slack_s=6)
    assert not prefer_state_transfer(window_s=10, transfer_s=5, slack_s=3)

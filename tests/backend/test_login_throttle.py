"""The failed-login throttle on a hand-moved clock (no sleeps)."""

from __future__ import annotations

import pytest

from backend.users.throttle import PENDING_RETRY_S, LoginThrottle, Outcome, SlidingWindow


class HandClock:
    """A clock the test moves: ``clock.now = 7``."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_is_blocked_at_the_limit_until_its_oldest_failure_leaves_the_window() -> None:
    clock = HandClock()
    window = SlidingWindow(limit=3, window_s=60, clock=clock)
    for at in (1000.0, 1010.0, 1020.0):
        clock.now = at
        assert window.retry_after_s("alice") == 0
        window.record("alice")
    assert window.retry_after_s("alice") == pytest.approx(40)  # 1000 + 60 - 1020
    clock.now = 1059.5
    assert window.retry_after_s("alice") == pytest.approx(0.5)
    clock.now = 1060.0  # the failure at 1000 has left the window: two remain
    assert window.retry_after_s("alice") == 0
    window.record("alice")
    assert window.retry_after_s("alice") == pytest.approx(10)  # now the one at 1010 leads


def test_keys_are_counted_apart_and_forget_clears_one() -> None:
    clock = HandClock()
    window = SlidingWindow(limit=2, window_s=60, clock=clock)
    window.record("alice")
    window.record("alice")
    window.record("bob")
    assert window.retry_after_s("alice") == pytest.approx(60)
    assert window.retry_after_s("bob") == 0
    window.forget("alice")
    assert window.retry_after_s("alice") == 0


def test_expired_keys_are_dropped_and_memory_is_bounded() -> None:
    clock = HandClock()
    window = SlidingWindow(limit=5, window_s=10, clock=clock, max_keys=100)
    for i in range(1000):
        window.record(f"user{i}")
    assert len(window) == 100  # the oldest were forgotten first
    assert window.retry_after_s("user999") == 0 and len(window) == 100
    clock.now += 10
    window.record("late")
    assert len(window) == 1  # everything older than the window went at once


def test_attempts_in_progress_count_toward_the_limit() -> None:
    """300 parallel guesses must not all pass the check before the first one fails."""
    clock = HandClock()
    window = SlidingWindow(limit=3, window_s=60, clock=clock)
    window.record("alice")
    window.start("alice")
    window.start("alice")
    assert window.retry_after_s("alice") == PENDING_RETRY_S
    window.finish("alice")
    assert window.retry_after_s("alice") == 0
    window.finish("alice")
    window.finish("alice")  # one finish too many leaves no negative count behind
    window.start("alice")
    window.start("alice")
    assert window.retry_after_s("alice") == PENDING_RETRY_S


@pytest.mark.parametrize(("limit", "window_s"), [(0, 60), (3, 0), (3, -1)])
def test_invalid_limits_name_the_rule(limit: int, window_s: float) -> None:
    with pytest.raises(ValueError, match="is invalid"):
        SlidingWindow(limit=limit, window_s=window_s)


def attempt(throttle: LoginThrottle, username: str, client: str, outcome: Outcome) -> None:
    """One login as the API makes it: check, start, decide."""
    assert throttle.retry_after_s(username, client) == 0
    throttle.start(username, client)
    throttle.finish(username, client, outcome)


def test_login_throttle_blocks_per_username_and_per_client() -> None:
    clock = HandClock()
    throttle = LoginThrottle(per_user=3, per_client=5, window_s=60, clock=clock)
    for client in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):  # one account, guessed from 3 hosts
        attempt(throttle, "alice", client, "wrong")
    assert throttle.retry_after_s("alice", "10.0.0.4") == 60
    clock.now += 0.4
    assert throttle.retry_after_s("alice", "10.0.0.4") == 60  # 59.6 s, rounded up

    for name in ("u1", "u2", "u3", "u4", "u5"):  # one host, sprayed over many accounts
        attempt(throttle, name, "10.0.0.9", "wrong")
    assert throttle.retry_after_s("somebody-else", "10.0.0.9") == 60
    assert throttle.retry_after_s("somebody-else", "10.0.0.10") == 0


def test_a_success_clears_the_username_but_not_the_client() -> None:
    throttle = LoginThrottle(per_user=2, per_client=3, window_s=60, clock=HandClock())
    attempt(throttle, "alice", "10.0.0.1", "wrong")
    attempt(throttle, "alice", "10.0.0.1", "right")
    attempt(throttle, "alice", "10.0.0.1", "wrong")
    assert throttle.users.retry_after_s("alice") == 0  # the success cleared the first failure
    # An attacker's own valid account must not reset its client's count: 3 failures block.
    attempt(throttle, "mallory", "10.0.0.1", "right")
    attempt(throttle, "bob", "10.0.0.1", "wrong")
    assert throttle.retry_after_s("anyone", "10.0.0.1") == 60


def test_an_undecided_attempt_counts_as_nothing() -> None:
    throttle = LoginThrottle(per_user=1, per_client=1, window_s=60, clock=HandClock())
    attempt(throttle, "alice", "10.0.0.1", "undecided")
    assert throttle.retry_after_s("alice", "10.0.0.1") == 0

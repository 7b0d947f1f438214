"""The login flow: throttle, read, hash, then a short write; never scrypt under a lock.

A login costs one scrypt (~50-100 ms of CPU) whether or not the username exists: an
unknown name is checked against ``security.DUMMY_HASH``. The steps are ordered so that
the expensive one holds nothing another request waits for:

1. the throttle answers 429 before any work when the username or the client address has
   failed too often (``throttle.LoginThrottle``);
2. the user's stored hash is read in a short read-only session (on SQLite it takes no
   write lock);
3. scrypt runs in a worker thread, at most ``hash_concurrency`` at once per process;
   waiting logins wait in the event loop, holding neither a thread nor a lock, so a
   flood of logins cannot take the threads or the CPU other requests need;
4. only a right password leads to a write: the token is stored and committed while the
   SQLite write gate (``WriteGate``) is held, which takes milliseconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from datetime import timedelta
from typing import Any

import anyio
import anyio.to_thread
from sqlalchemy.orm import Session

from backend.errors import DomainError, Unauthorized
from backend.settings import Settings
from backend.users import security, service
from backend.users.models import fold_username
from backend.users.schemas import TokenResponse
from backend.users.throttle import Clock, LoginThrottle, Outcome

ReadSessions = Callable[[], AbstractContextManager[Session]]
WriteGate = AbstractAsyncContextManager[Any]


class TooManyLogins(DomainError):
    """429: the username or the client failed too often; ``Retry-After`` says how long."""

    status_code = 429

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            "too many failed logins for this username or from this address: "
            f"try again in {retry_after_s} s",
            headers={"Retry-After": str(retry_after_s)},
        )


class Logins:
    """One API process's login throttle and its bounded pool of password hashes."""

    def __init__(self, throttle: LoginThrottle, hash_concurrency: int) -> None:
        self.throttle = throttle
        self._hashing = anyio.CapacityLimiter(hash_concurrency)

    @classmethod
    def from_settings(cls, settings: Settings, clock: Clock = time.monotonic) -> Logins:
        throttle = LoginThrottle(
            per_user=settings.login_failures_per_user,
            per_client=settings.login_failures_per_client,
            window_s=settings.login_failure_window_s,
            clock=clock,
        )
        return cls(throttle, settings.login_hash_concurrency)

    async def login(
        self,
        *,
        username: str,
        password: str,
        client: str,
        read_sessions: ReadSessions,
        session: Session,
        write_gate: WriteGate,
        ttl: timedelta,
    ) -> TokenResponse:
        """A token for ``username``, or ``TooManyLogins`` / ``Unauthorized``
        (the same answer for an unknown username and a wrong password). The username
        matches regardless of case, so its failures are counted under its folded form:
        ``Ops``, ``OPS`` and ``ops`` are one account and share one failure window."""
        account = fold_username(username)
        wait_s = self.throttle.retry_after_s(account, client)
        if wait_s:
            raise TooManyLogins(wait_s)
        self.throttle.start(account, client)
        outcome: Outcome = "undecided"
        try:
            checked = await anyio.to_thread.run_sync(_read_credentials, read_sessions, username)
            stored = checked.password_hash if checked is not None else security.DUMMY_HASH
            matches = await anyio.to_thread.run_sync(
                security.verify_password, password, stored, limiter=self._hashing
            )
            right = checked is not None and checked.active and matches
            outcome = "right" if right else "wrong"
        finally:
            self.throttle.finish(account, client, outcome)
        if checked is None or outcome != "right":
            raise Unauthorized("username or password is wrong")
        async with write_gate:
            return await anyio.to_thread.run_sync(_issue_and_commit, session, checked, ttl)


def _read_credentials(read_sessions: ReadSessions, username: str) -> service.Credentials | None:
    with read_sessions() as session:
        return service.credentials(session, username)


def _issue_and_commit(
    session: Session, checked: service.Credentials, ttl: timedelta
) -> TokenResponse:
    # The commit is here, not in the request's unit of work (``get_session``), because
    # it must happen before the write gate is released.
    token = service.issue_token(session, checked, ttl)
    session.commit()
    return token

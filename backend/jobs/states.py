"""The job status state machine.

    pending ─► starting ─► running ─► stopping ─► stopped
       │          │           │           │
       └──────────┴───────────┴───────────┴──► failed

A stop requested before the process exists goes pending/starting ─► stopping ─► stopped.
``stopped`` and ``failed`` are terminal.
"""

from __future__ import annotations

from enum import StrEnum

from backend.errors import Conflict


class JobStatus(StrEnum):
    PENDING = "pending"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


_ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    JobStatus.PENDING: frozenset({JobStatus.STARTING, JobStatus.STOPPING, JobStatus.FAILED}),
    JobStatus.STARTING: frozenset(
        {JobStatus.RUNNING, JobStatus.STOPPING, JobStatus.STOPPED, JobStatus.FAILED}
    ),
    JobStatus.RUNNING: frozenset({JobStatus.STOPPING, JobStatus.STOPPED, JobStatus.FAILED}),
    JobStatus.STOPPING: frozenset({JobStatus.STOPPED, JobStatus.FAILED}),
    JobStatus.STOPPED: frozenset(),
    JobStatus.FAILED: frozenset(),
}

TERMINAL = frozenset({JobStatus.STOPPED, JobStatus.FAILED})


class InvalidTransition(Conflict):
    pass


def can_move(current: JobStatus, target: JobStatus) -> bool:
    return target in _ALLOWED[current]


def check_move(current: JobStatus, target: JobStatus) -> None:
    """Raise ``InvalidTransition`` (HTTP 409) unless ``current → target`` is allowed."""
    if not can_move(current, target):
        allowed = ", ".join(sorted(_ALLOWED[current])) or "none (terminal)"
        raise InvalidTransition(
            f"status={current.value!r} cannot move to {target.value!r}; allowed: {allowed}"
        )

"""The coordinator's class moves: after a round's allocation, a class moves off a job its
executors cannot carry to a job that holds it ready and has room
(:func:`~spark_runner.core.class_moves.choose_move`), as a hand-off by ``coordinator``
(:mod:`backend.handoffs.service`, which checks the move like an operator's).

One hand-off at a time among a master's jobs, and none within ``min_interval_s`` of the
coordinator's last one: a class moves in seconds to a minute (its switch instant, then
the origin's watermark), and the loads the next choice reads must be the jobs' after it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from backend.coordinator import AUTHOR
from backend.coordinator.reports import Reported
from backend.errors import Conflict
from backend.handoffs import service as handoffs
from backend.handoffs.models import ACTIVE, HandoffRow
from backend.jobs.models import Job
from spark_runner.core.class_moves import ClassMove, choose_move
from spark_runner.core.coordinator import CoordinatorParams
from spark_runner.core.errors import ParameterError

log = logging.getLogger(__name__)


def move_a_class(
    session: Session,
    jobs: Sequence[Job],
    reported: Mapping[str, Reported],
    allocation: Mapping[str, int],
    executors: int,
    now_s: float,
    params: CoordinatorParams,
) -> HandoffRow | None:
    """The hand-off this round starts, if any."""
    ids = [job.id for job in jobs]
    if len(ids) < 2 or _busy(session, ids, now_s, params.min_interval_s):
        return None
    standby = {job: r.ready for job, r in reported.items()}
    reports = [reported[str(i)].report for i in ids]
    move = choose_move(reports, executors, allocation, standby, params)
    if move is None:
        return None
    request = handoffs.Move(move.class_name, int(move.origin), int(move.target))
    why = _why(move)
    try:
        with session.begin_nested():
            row = handoffs.request(session, request, now_s, AUTHOR, why=why)
    except (ParameterError, Conflict) as refused:
        log.info("coordinator: %s not moved to job %s: %s", move.class_name, move.target, refused)
        return None
    log.info("coordinator: hand-off %d of %s: %s", row.id, move.class_name, why)
    return row


def _why(move: ClassMove) -> str:
    return (
        f"job {move.origin}'s classes use {move.origin_usage:.2f} of its executors, none "
        f"left to give; job {move.target} at {move.target_usage:.2f} with {move.class_name}"
    )


def _busy(session: Session, ids: Sequence[int], now_s: float, interval_s: float) -> bool:
    """A hand-off of these jobs is under way, or the coordinator started one lately."""
    involved = or_(HandoffRow.origin_job_id.in_(ids), HandoffRow.target_job_id.in_(ids))
    active = select(HandoffRow.id).where(involved, HandoffRow.state.in_(ACTIVE)).limit(1)
    if session.scalars(active).first() is not None:
        return True
    last = select(func.max(HandoffRow.requested_s)).where(involved, HandoffRow.created_by == AUTHOR)
    latest = session.scalar(last)
    return latest is not None and now_s - latest < interval_s

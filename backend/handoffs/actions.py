"""A hand-off in both jobs' action logs: a ``move`` (origin ``handoff``, numbered by the
hand-off) when it is asked, judged like the coordinator's actions once the periods after
it are measured (``backend.actions.verdicts``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from sqlalchemy.orm import Session

from backend.actions.repository import ActionRepository
from backend.actions.verdicts import judge_pending
from backend.handoffs.models import HandoffRow
from backend.metrics.repository import MetricRepository
from spark_runner.contract.actions import ControlAction

ORIGIN: Final = "handoff"


def log_move(session: Session, row: HandoffRow, why: str | None) -> None:
    """``row``'s ``move`` in the origin's and the target's logs; ``why``: the asker's
    reason, if it gave one."""
    switch = datetime.fromtimestamp(row.switch_s, UTC).strftime("%H:%M:%S")
    by = row.created_by or "an operator"
    reason = f": {why}" if why else ""
    sides = (
        (row.origin_job_id, f"to job {row.target_job_id}"),
        (row.target_job_id, f"here from job {row.origin_job_id}"),
    )
    rows = []
    for job_id, way in sides:
        trigger = f"{row.class_name} moves {way} at {switch} UTC, asked by {by}{reason}"
        rows.append({"job_id": job_id, **_action(session, row, job_id, trigger)})
    ActionRepository(session).upsert_many(rows)


def judge(session: Session, row: HandoffRow) -> int:
    """The verdicts the two jobs' samples allow now on their hand-off actions."""
    return judge_pending(session, (row.origin_job_id, row.target_job_id), ORIGIN)


def _action(session: Session, row: HandoffRow, job_id: int, trigger: str) -> dict[str, object]:
    """The job's ``move`` action, with its u and the class's shed fraction now."""
    metrics = MetricRepository(session)
    newest = metrics.newest_t(job_id)
    samples = [] if newest is None else metrics.query(job_id, since=newest, since_inclusive=True)
    usage = next((s.job_usage for s in samples if s.job_usage is not None), 0.0)
    shed = next((s.shed_fraction or 0.0 for s in samples if s.class_name == row.class_name), 0.0)
    return ControlAction(
        seq=row.id,
        at_s=row.requested_s,
        kind="move",
        origin=ORIGIN,
        class_name=row.class_name,
        trigger=trigger[:200],
        usage=round(usage, 4),
        shed_before=round(shed, 4),
        shed_after=round(shed, 4),
    ).model_dump(mode="json")

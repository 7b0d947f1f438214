"""A job's control actions: ingest (a re-post with the verdict replaces the action) and
the log an operator reads."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from backend.actions.repository import ActionRepository
from backend.jobs.repository import JobRepository
from backend.metrics.service import reporting_job
from backend.tuning import service as tuning
from spark_runner.contract.actions import ActionKind, ControlAction

_COLUMNS = tuple(ControlAction.model_fields)


def ingest(session: Session, job_id: int, actions: Sequence[ControlAction], now_s: float) -> None:
    """Store a job's actions; one already stored (same job and seq) is replaced, so its
    verdict arrives by posting it again."""
    reporting_job(
        session,
        job_id,
        ((f"actions[{i}].at_s", a.at_s) for i, a in enumerate(actions)),
        (
            (f"actions[{i}].class_name", a.class_name)
            for i, a in enumerate(actions)
            if a.class_name is not None
        ),
        now_s,
    )
    rows = [{"job_id": job_id, **a.model_dump(mode="json")} for a in actions]
    # the newest post of an action wins, in the order the batch lists them
    latest = {row["seq"]: row for row in rows}
    ActionRepository(session).upsert_many(list(latest.values()))


def actions_of(
    session: Session,
    job_id: int,
    *,
    kind: ActionKind | None = None,
    class_name: str | None = None,
    limit: int,
) -> tuple[list[ControlAction], bool]:
    """The newest ``limit`` actions (oldest first) and whether older ones were left out."""
    JobRepository(session).require(job_id)
    rows = ActionRepository(session).newest(
        job_id, kind=kind, class_name=class_name, limit=limit + 1
    )
    kept = [ControlAction.model_validate({c: getattr(r, c) for c in _COLUMNS}) for r in rows]
    return kept[:limit][::-1], len(kept) > limit


def thresholds_of(session: Session, job_id: int) -> dict[str, float]:
    """The job's thresholds now: the lowest of its classes' in its latest configuration."""
    return tuning.latest_config(session, job_id).usage_thresholds()

"""Verdicts on the control plane's actions (the coordinator's allocations, the hand-offs'
moves), from the job's metric samples: the job's violation and loss over the
:data:`~spark_runner.contract.actions.WINDOW` periods up to the action against the
``WINDOW`` periods after it (the period it was made in left out), by the rule a job's own
actions are judged by (``judge``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby

from sqlalchemy.orm import Session

from backend.actions.repository import ActionRepository
from backend.metrics.models import MetricSampleRow
from backend.metrics.repository import MetricRepository
from spark_runner.contract.actions import WINDOW, ActionOrigin, Verdict, judge

LOOK_S = 3600.0
"""How far around an action its periods are looked for, s (a job's period is at most
this long)."""


def judge_pending(session: Session, job_ids: Iterable[int], origin: ActionOrigin) -> int:
    """Give each of the jobs' actions of ``origin`` without a verdict the one its samples
    allow now; returns how many were judged."""
    actions = ActionRepository(session)
    judged = 0
    for job_id in job_ids:
        for row in actions.unjudged(job_id, origin):
            verdict = verdict_at(session, job_id, row.at_s)
            if verdict is not None:
                row.verdict = verdict.model_dump(mode="json")
                judged += 1
    return judged


def verdict_at(session: Session, job_id: int, at_s: float) -> Verdict | None:
    """The verdict on an action of ``job_id`` at ``at_s`` (None: too few periods yet)."""
    metrics = MetricRepository(session)
    before = _periods(metrics.query(job_id, since=at_s - LOOK_S, until=at_s, limit=100_000))
    after = _periods(metrics.query(job_id, since=at_s, until=at_s + LOOK_S, limit=100_000))
    if len(before) < 1 or len(after) < WINDOW + 1:
        return None
    return judge(_summary(before[-WINDOW:]), _summary(after[1 : WINDOW + 1]), WINDOW)


Period = tuple[float, int, int]
"""One period of a job: its violation (s, summed over its classes), shed and arrived."""


def _periods(rows: Sequence[MetricSampleRow]) -> list[Period]:
    """The job's periods in order of time (its samples grouped by period)."""
    ordered = sorted(rows, key=lambda r: (r.seq, r.class_name))
    return [
        (
            sum(r.violation_max_s or 0.0 for r in group),
            sum(r.shed_count or 0 for r in group),
            sum(r.arrived_count for r in group),
        )
        for group in (list(g) for _, g in groupby(ordered, key=lambda r: r.seq))
    ]


def _summary(periods: Sequence[Period]) -> tuple[float, float]:
    """Mean violation per period, and loss, over ``periods``."""
    violation = sum(p[0] for p in periods) / len(periods)
    arrived = sum(p[2] for p in periods)
    return violation, sum(p[1] for p in periods) / arrived if arrived else 0.0

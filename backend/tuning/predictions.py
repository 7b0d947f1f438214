"""The tuning review's predictions checked against what the changes then did.

A preview (``service.preview``) keeps its prediction of the change; a change stored on the
same version with the same content is the one that prediction was for (``link``). Once
the job has run that version for as long as the preview replayed, its samples tagged with
that version give what the change did, and the prediction's error per class is kept
(predicted − measured: ``spark_runner.sim.whatif.prediction_error``). The review then
states how far off the predictions of the same kind of change were (``track_record``):
the error carries the replay's own (fresh managers, the simulator's model of the job) and
how the load after the change differed from the replayed minutes.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.db import utcnow
from backend.jobs.models import Job
from backend.jobs.states import TERMINAL
from backend.metrics.models import MetricSampleRow
from backend.tuning.models import Prediction
from backend.tuning.schemas import TrackRecord
from spark_runner.contract.samples import MetricSample
from spark_runner.sim.whatif import ClassOutcome, WhatIf, measured_outcome, prediction_error

KEPT_UNLINKED = 20
"""A job keeps its newest this many predictions no change was stored for."""
CHECKS_PER_PREVIEW = 20
"""A preview checks at most this many applied predictions (the oldest first)."""
_CLASS_PATH = re.compile(r"^classes\.[^.]+\.")


def kind_of(changes: Iterable[Mapping[str, Any]]) -> str:
    """The settings a change touches, class names left out ("delay_target_s,priority")."""
    return ",".join(sorted({_CLASS_PATH.sub("", str(c["path"])) for c in changes}))


def record(
    session: Session, job_id: int, base_version: int, changes: list[dict[str, Any]], result: WhatIf
) -> Prediction:
    """Keep a preview's prediction of ``changes`` on ``base_version``."""
    prediction = Prediction(
        job_id=job_id,
        base_version=base_version,
        kind=kind_of(changes)[:200],
        changes=changes,
        window_s=result.window_s,
        predicted={
            name: {"mean_violation_s": o.mean_violation_s, "loss_fraction": o.loss_fraction}
            for name, o in result.proposed.items()
        },
    )
    session.add(prediction)
    session.flush()
    stale = session.scalars(
        select(Prediction)
        .where(Prediction.job_id == job_id, Prediction.version.is_(None))
        .order_by(Prediction.id.desc())
        .offset(KEPT_UNLINKED)
    ).all()
    for row in stale:
        session.delete(row)
    return prediction


def link(
    session: Session, job_id: int, base_version: int, changes: list[dict[str, Any]], version: int
) -> None:
    """The change stored as ``version`` on ``base_version``: the newest prediction of
    exactly that change, if one was previewed, is now its prediction."""
    candidates = session.scalars(
        select(Prediction)
        .where(
            Prediction.job_id == job_id,
            Prediction.base_version == base_version,
            Prediction.version.is_(None),
        )
        .order_by(Prediction.id.desc())
    ).all()
    match = next((p for p in candidates if p.changes == changes), None)
    if match is not None:
        match.version = version


def check_pending(session: Session) -> int:
    """Check the applied predictions whose version has run for their window; how many.
    One whose version never will (a newer one runs, or the job has ended) is closed
    without figures, so it does not hold the queue."""
    pending = session.scalars(
        select(Prediction)
        .where(Prediction.version.is_not(None), Prediction.checked_at.is_(None))
        .order_by(Prediction.id)
        .limit(CHECKS_PER_PREVIEW)
    ).all()
    checked = 0
    for prediction in pending:
        assert prediction.version is not None
        samples = _samples_of_version(session, prediction.job_id, prediction.version)
        window = _first_window(samples, prediction.window_s)
        if window is not None:
            prediction.errors = _errors(prediction.predicted, window)
            checked += 1
        elif _run_out(session, prediction.job_id, prediction.version):
            prediction.errors = {}
        else:
            continue
        prediction.checked_at = utcnow()
    return checked


def track_record(session: Session, kind: str) -> TrackRecord | None:
    """How far off the checked predictions of ``kind`` were, over every job; None before
    the first is checked."""
    closed = session.scalars(
        select(Prediction).where(Prediction.kind == kind, Prediction.checked_at.is_not(None))
    ).all()
    rows = [row for row in closed if row.errors]  # not those closed without figures
    if not rows:
        return None
    errors = [e for row in rows for e in (row.errors or {}).values()]
    violation = [abs(e["violation_s"]) for e in errors if e["violation_s"] is not None]
    loss = [abs(e["loss"]) for e in errors if e["loss"] is not None]
    return TrackRecord(
        kind=kind,
        changes=len(rows),
        violation_error_s=statistics.mean(violation) if violation else None,
        loss_error=statistics.mean(loss) if loss else None,
        figures=len(violation) + len(loss),
    )


def _run_out(session: Session, job_id: int, version: int) -> bool:
    """Will the job never run ``version`` any longer: has a newer one reported samples,
    or has the job ended?"""
    newer = session.scalar(
        select(MetricSampleRow.id)
        .where(MetricSampleRow.job_id == job_id, MetricSampleRow.config_version > version)
        .limit(1)
    )
    job = session.get(Job, job_id)
    return newer is not None or job is None or job.state in TERMINAL


def _samples_of_version(session: Session, job_id: int, version: int) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(MetricSampleRow)
        .where(MetricSampleRow.job_id == job_id, MetricSampleRow.config_version == version)
        .order_by(MetricSampleRow.t)
    ).all()
    return [MetricSample.model_validate(r, from_attributes=True).model_dump() for r in rows]


def _first_window(
    samples: Sequence[dict[str, Any]], window_s: float
) -> list[dict[str, Any]] | None:
    """The samples of the first ``window_s`` seconds of them, or None if they cover less
    (the version has not run that long yet, or never will)."""
    if not samples:
        return None
    start = min(float(s["t"]) - float(s["period_s"]) for s in samples)
    if max(float(s["t"]) for s in samples) - start < window_s - 1e-6:
        return None
    return [s for s in samples if float(s["t"]) <= start + window_s + 1e-6]


def _errors(
    predicted: Mapping[str, Mapping[str, Any]], window: Sequence[Mapping[str, Any]]
) -> dict[str, dict[str, float | None]]:
    out: dict[str, dict[str, float | None]] = {}
    for name, figures in predicted.items():
        mine = [s for s in window if s["class_name"] == name]
        if not mine:
            continue
        guess = ClassOutcome(figures["mean_violation_s"], figures["loss_fraction"], None)
        error = prediction_error(guess, measured_outcome(mine))
        out[name] = {"violation_s": error.violation_s, "loss": error.loss}
    return out

"""Live tuning: every change is a new, validated, audited configuration version.

Operators PATCH a job (or a class, which reaches every live job running it); the job
long-polls for a version newer than the one it runs, applies it at its next control
period and acknowledges it; the API shows which versions are pending and which applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio.to_thread
from sqlalchemy.orm import Session

from backend.bell import bell, config_key
from backend.db import after_commit, utcnow
from backend.errors import Conflict, NotFound
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.jobs.states import TERMINAL
from backend.metrics.repository import MetricRepository
from backend.metrics.schemas import MAX_LIMIT
from backend.tuning import predictions
from backend.tuning.models import ConfigVersion
from backend.tuning.previews import Previews, Replay
from backend.tuning.repository import ConfigVersionRepository
from backend.tuning.schemas import (
    ClassPrediction,
    ClassWhatIf,
    ConfigAtVersion,
    JobConfigRead,
    TrackRecord,
    VersionRead,
    WhatIfRead,
)
from spark_runner.contract.control import LiveConfig
from spark_runner.contract.samples import MetricSample
from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.core.class_settings import SETTING_NAMES
from spark_runner.scenario.snapshots import job_scenario
from spark_runner.sim.whatif import REPLAY_MAX_S, WhatIf


def record_initial(session: Session, job: Job, config: LiveConfig, created_by: str | None) -> None:
    """Version 0: the configuration the job is launched with."""
    config.validate_rules()
    ConfigVersionRepository(session).add(
        ConfigVersion(
            job_id=job.id,
            version=0,
            config=config.model_dump(mode="json"),
            changes=[],
            created_by=created_by,
        )
    )


def launch_config(session: Session, job_id: int) -> LiveConfig:
    """Version 0: what the job started with."""
    first = ConfigVersionRepository(session).at(job_id, 0)
    if first is None:
        raise NotFound(f"job {job_id} has no launch configuration")
    return LiveConfig.model_validate(first.config)


def latest_config(session: Session, job_id: int) -> LiveConfig:
    latest = ConfigVersionRepository(session).latest(job_id)
    if latest is None:
        raise NotFound(f"job {job_id} has no configuration")
    return LiveConfig.model_validate(latest.config)


def targets_by_version(session: Session, job_id: int) -> dict[int, dict[str, float]]:
    """Each stored configuration version of the job: its classes' delay targets."""
    return {
        v.version: LiveConfig.model_validate(v.config).targets()
        for v in ConfigVersionRepository(session).for_job(job_id)
    }


def propose(
    session: Session, job_id: int, changes: dict[str, Any], created_by: str | None
) -> ConfigVersion:
    """Store ``changes`` as the next version of a live job's configuration."""
    job = JobRepository(session).require(job_id, for_update=True)
    if job.state in TERMINAL:
        raise Conflict(f"status={job.status!r}: a stopped or failed job takes no new configuration")
    current = latest_config(session, job_id)
    new = current.merged(changes, current.version + 1)
    new.validate_rules()
    new.check_launch(launch_config(session, job_id))
    diff = _changes(current, new)
    if not diff:
        raise Conflict("the change leaves the configuration as it is: no new version stored")
    stored = ConfigVersionRepository(session).add(
        ConfigVersion(
            job_id=job_id,
            version=new.version,
            config=new.model_dump(mode="json"),
            changes=diff,
            created_by=created_by,
        )
    )
    predictions.link(session, job_id, current.version, diff, new.version)
    after_commit(session, lambda: bell.ring(config_key(job_id)))  # wakes the job's long poll
    return stored


def propagate_class_change(
    session: Session, class_name: str, changes: dict[str, Any], created_by: str | None
) -> list[int]:
    """A class's live fields changed: give every live job running it a new version."""
    live_fields = {k: v for k, v in changes.items() if k in SETTING_NAMES}
    if not live_fields:
        return []
    touched: list[int] = []
    for job_id in JobRepository(session).live_ids():
        current = latest_config(session, job_id)
        if class_name in current.classes:
            try:
                propose(session, job_id, {"classes": {class_name: live_fields}}, created_by)
            except Conflict:
                continue  # Already at these values.
            touched.append(job_id)
    return touched


async def preview(
    previews: Previews,
    session: Session,
    write_gate: AbstractAsyncContextManager[Any],
    username: str,
    job_id: int,
    changes: dict[str, Any],
) -> WhatIfRead:
    """What ``changes`` would do, predicted by replaying the job's last minutes (its
    samples) through the simulator under the newest configuration and under the change
    (``spark_runner.sim.whatif``), in a worker process within ``previews``' bounds.
    Validated like a change. The prediction is kept (``predictions``): applied as
    previewed, the change is later checked against it, and the answer says how far off
    this kind of change's checked predictions were."""
    result = await previews.run(username, lambda: _replay_of(session, job_id, changes))
    async with write_gate:
        kind, record = await anyio.to_thread.run_sync(
            lambda: _kept(session, job_id, changes, result)
        )
    return WhatIfRead(
        job_id=job_id,
        window_s=result.window_s,
        kind=kind,
        track_record=record,
        classes={
            name: ClassWhatIf(
                measured=ClassPrediction(**vars(result.measured[name])),
                current=ClassPrediction(**vars(result.current[name])),
                proposed=ClassPrediction(**vars(result.proposed[name])),
            )
            for name in result.current
            if name in result.measured
        },
    )


def _kept(
    session: Session, job_id: int, changes: dict[str, Any], result: WhatIf
) -> tuple[str, TrackRecord | None]:
    """Keep the prediction, check those whose change has run long enough, and say how far
    off this kind's were (a change that changes nothing keeps none). The request's reads
    end first; the writes commit here, not in the request's unit of work
    (``get_session``), before the write gate is released."""
    session.commit()
    current = latest_config(session, job_id)
    diff = _changes(current, current.merged(changes, current.version + 1))
    kind, record = "", None
    if diff:
        kind = predictions.record(session, job_id, current.version, diff, result).kind
        predictions.check_pending(session)
        record = predictions.track_record(session, kind)
    session.commit()
    return kind, record


def _replay_of(session: Session, job_id: int, changes: dict[str, Any]) -> Replay:
    """The replay's inputs: the job's scenario, its newest samples, the configuration in
    force and the change applied to it (refused here, 422, when it breaks a rule)."""
    job = JobRepository(session).require(job_id)
    current = latest_config(session, job_id)
    proposed = current.merged(changes, current.version + 1)
    proposed.validate_rules()
    snapshot = JobSnapshot.model_validate(job.config)
    document = job_scenario(snapshot)
    repo = MetricRepository(session)
    newest = repo.newest_t(job_id)
    rows = (
        repo.query(job_id, since=newest - REPLAY_MAX_S, limit=MAX_LIMIT)
        if newest is not None
        else []
    )
    samples = [MetricSample.model_validate(r, from_attributes=True).model_dump() for r in rows]
    return Replay(document, samples, current, proposed)


def newer_than(session: Session, job_id: int, version: int) -> LiveConfig | None:
    latest = ConfigVersionRepository(session).latest(job_id)
    if latest is None or latest.version <= version:
        return None
    return LiveConfig.model_validate(latest.config)


def acknowledge(session: Session, job_id: int, version: int) -> int:
    """The job applied ``version``: it and every earlier pending version are now applied."""
    latest = ConfigVersionRepository(session).latest(job_id)
    if latest is None or version > latest.version:
        raise Conflict(f"version={version} does not exist for job {job_id}")
    return ConfigVersionRepository(session).mark_applied(job_id, version, utcnow())


def describe(session: Session, job_id: int) -> JobConfigRead:
    JobRepository(session).require(job_id)
    versions = ConfigVersionRepository(session).for_job(job_id)
    if not versions:
        raise NotFound(f"job {job_id} has no configuration")
    latest = _at_version(versions[-1])
    applied_rows = [v for v in versions if v.applied_at is not None]
    applied = _at_version(applied_rows[-1]) if applied_rows else None
    in_force = applied if applied is not None else _at_version(versions[0])
    return JobConfigRead(
        job_id=job_id,
        latest_version=latest.version,
        applied_version=applied.version if applied else None,
        pending_versions=[v.version for v in versions if v.applied_at is None],
        config=latest.config,
        latest=latest,
        applied=applied,
        in_force=in_force,
        thresholds=in_force.config.usage_thresholds(),
        versions=[VersionRead.model_validate(v) for v in versions],
    )


def _at_version(row: ConfigVersion) -> ConfigAtVersion:
    return ConfigAtVersion(
        version=row.version,
        config=LiveConfig.model_validate(row.config),
        created_by=row.created_by,
        created_at=row.created_at,
        applied_at=row.applied_at,
    )


def _changes(old: LiveConfig, new: LiveConfig) -> list[dict[str, Any]]:
    """What ``new`` changes of ``old``, as a version lists it (JSON values)."""
    return list(_diff(old.model_dump(mode="json"), new.model_dump(mode="json")))


def _diff(old: Any, new: Any, path: str = "") -> Iterator[dict[str, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key == "version":
                continue
            yield from _diff(old.get(key), new.get(key), f"{path}.{key}" if path else key)
    elif old != new:
        yield {"path": path, "old": old, "new": new}

"""Moving a class between two running jobs without moving its state.

The class's event time is split at a switch instant ``B`` on its windows' grid
(:mod:`spark_runner.scenario.handoff`): the origin keeps what it computes up to ``B``,
the target — which holds the class in standby, its queries running on the same Redis
streams but computing nothing — computes it from ``B`` on. Each job is given its range
as a new version of its live configuration (``ranges``); the job writes it into the
offset log with every batch, so a job that crashes and restarts keeps it.

``B`` is chosen far enough ahead that both jobs take their ranges before the first tuple
the target reads (``B`` less its joins' margin) can arrive: each must acknowledge its
version by ``deadline_s`` (one guard of two control periods and a second before it),
else the hand-off fails and each job's range is given back. After ``B`` the origin
still computes the tuples before ``B`` that arrive late; it is done once its watermark
has passed ``B``. :func:`advance` moves the hand-offs through these states (Celery beat,
every second). Each hand-off is a ``move`` in both jobs' action logs (``actions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.errors import Conflict
from backend.handoffs.actions import judge, log_move
from backend.handoffs.models import ACTIVE, HandoffRow
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.jobs.states import TERMINAL, JobStatus
from backend.tuning import service as tuning
from backend.tuning.repository import ConfigVersionRepository
from spark_runner.contract.control import EventRange, LiveConfig
from spark_runner.contract.snapshot import JobSnapshot
from spark_runner.core.errors import ParameterError
from spark_runner.core.migration import switch_instant
from spark_runner.scenario.handoff import movable_issue, stream_margins_s, switch_grid_s
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Scenario
from spark_runner.scenario.snapshots import job_scenario

AUTHOR = "handoff"
"""Who the hand-offs' configuration versions are by."""
DELIVERY_S = 5.0
"""Time allowed for a new version to reach a job and be acknowledged (its long poll is
woken at once; the acknowledgement follows at its next control period)."""


@dataclass(frozen=True)
class Move:
    class_name: str
    origin_job_id: int
    target_job_id: int


def request(
    session: Session, move: Move, now_s: float, created_by: str | None, why: str | None = None
) -> HandoffRow:
    """Plan ``move``, give both jobs their ranges and log it in both jobs' action logs
    (``why``: the asker's reason); ``ParameterError`` naming the field when it cannot
    move, ``Conflict`` when the class is moving already."""
    origin = _running(session, move.origin_job_id, "origin_job_id")
    target = _running(session, move.target_job_id, "target_job_id")
    if origin.id == target.id:
        raise ParameterError("target_job_id", target.id, "must differ from origin_job_id")
    busy = session.scalars(
        select(HandoffRow).where(
            HandoffRow.class_name == move.class_name, HandoffRow.state.in_(ACTIVE)
        )
    ).first()
    if busy is not None:
        raise Conflict(f"class {move.class_name!r} is moving already (hand-off {busy.id})")
    snapshots = (
        JobSnapshot.model_validate(origin.config),
        JobSnapshot.model_validate(target.config),
    )
    scenario = _scenario(snapshots[0])
    configs = (tuning.latest_config(session, origin.id), tuning.latest_config(session, target.id))
    _check(move, snapshots, configs, scenario, now_s)
    margin_s = max(stream_margins_s(scenario, move.class_name).values(), default=0.0)
    guard_s = 2 * max(s.control_period_s for s in snapshots) + 1.0
    lead_ms = round((guard_s + DELIVERY_S + margin_s) * 1000)
    grid_ms = round(switch_grid_s(scenario, move.class_name) * 1000)
    switch_s = switch_instant(round(now_s * 1000), lead_ms, grid_ms) / 1000
    before = {
        role: _range_json(c, move.class_name)
        for role, c in zip(("origin", "target"), configs, strict=True)
    }
    was = configs[0].ranges.get(move.class_name)
    ranges = (
        EventRange(from_s=None if was is None else was.from_s, until_s=switch_s),
        EventRange(from_s=switch_s),
    )
    versions = [
        _give(session, job.id, config, move.class_name, r)
        for job, config, r in zip((origin, target), configs, ranges, strict=True)
    ]
    row = HandoffRow(
        class_name=move.class_name,
        origin_job_id=origin.id,
        target_job_id=target.id,
        requested_s=now_s,
        switch_s=switch_s,
        deadline_s=switch_s - margin_s - guard_s,
        done_after_s=switch_s + snapshots[0].engine.watermark_s + 2 * snapshots[0].control_period_s,
        origin_version=versions[0],
        target_version=versions[1],
        before=before,
        created_by=created_by,
    )
    session.add(row)
    session.flush()
    log_move(session, row, why)
    return row


def _running(session: Session, job_id: int, field: str) -> Job:
    """The job, locked until the commit (two requests for one origin take turns)."""
    job = JobRepository(session).require(job_id, for_update=True)
    if job.state is not JobStatus.RUNNING:
        raise Conflict(f"{field}: job {job_id} is {job.status}: a hand-off needs both jobs running")
    return job


def _scenario(snapshot: JobSnapshot) -> Scenario:
    """The scenario the job runs, its classes' settings in."""
    return scenario_from_dict(job_scenario(snapshot))


def _check(
    move: Move,
    snapshots: tuple[JobSnapshot, JobSnapshot],
    configs: tuple[LiveConfig, LiveConfig],
    scenario: Scenario,
    now_s: float,
) -> None:
    """The rules a move must keep (``ParameterError`` naming the field of the request)."""
    name = move.class_name
    fields = ("origin_job_id", "target_job_id")
    ids = tuple(s.job_id for s in snapshots)
    for job, snapshot, config, field in zip(ids, snapshots, configs, fields, strict=True):
        if name not in config.classes:
            raise ParameterError(field, job, f"job {job} does not run class {name!r}")
        if snapshot.engine.source != "redis":
            raise ParameterError(
                field, job, f"job {job} reads {snapshot.engine.source} streams: both jobs "
                "must read one log (start them with source redis)",
            )  # fmt: skip
    why = movable_issue(scenario, name)
    if why is not None:
        raise ParameterError("class_name", name, f"cannot move between jobs: {why}")
    mine = scenario.query_class(name).model_dump()["queries"]
    if _scenario(snapshots[1]).query_class(name).model_dump()["queries"] != mine:
        raise ParameterError(
            "target_job_id", ids[1], f"runs other queries for {name!r} than job {ids[0]}"
        )
    held = configs[0].ranges.get(name)
    if held is not None and not held.computes_from(now_s):
        raise ParameterError("origin_job_id", ids[0], f"computes no more of class {name!r}")
    standby = configs[1].ranges.get(name)
    if standby is None or standby.computes_from(now_s):
        raise ParameterError(
            "target_job_id",
            ids[1],
            f"computes class {name!r} already: a target holds the class in standby",
        )


def _range_json(config: LiveConfig, name: str) -> dict[str, Any] | None:
    held = config.ranges.get(name)
    return None if held is None else held.model_dump()


def _give(
    session: Session, job_id: int, config: LiveConfig, name: str, held: EventRange | None
) -> int:
    """A new version of the job's configuration with ``held`` as the class's range (None:
    all of it); its version number."""
    ranges = {n: r.model_dump() for n, r in config.ranges.items() if n != name}
    if held is not None:
        ranges[name] = held.model_dump()
    return tuning.propose(session, job_id, {"ranges": ranges}, AUTHOR).version


def advance(session: Session, now_s: float) -> list[HandoffRow]:
    """Move every hand-off in progress on at ``now_s``; the ones whose state changed."""
    rows = session.scalars(
        select(HandoffRow).where(HandoffRow.state.in_(ACTIVE)).with_for_update()
    ).all()
    for row in rows:
        judge(session, row)
    return [row for row in rows if _step(session, row, now_s)]


def _step(session: Session, row: HandoffRow, now_s: float) -> bool:
    jobs = JobRepository(session)
    ids = (row.origin_job_id, row.target_job_id)
    stopped = [j for j in ids if jobs.require(j).state in TERMINAL]
    if stopped:
        return _stopped(session, row, now_s, stopped)
    if row.state == "planned":
        applied = _applied_by(session, row)
        if applied is not None and applied <= row.deadline_s:
            if now_s < row.switch_s:
                return False
            row.state = "switching"
            return True
        if now_s < row.deadline_s:
            return False
        late = "applied its range after" if applied is not None else "had not applied its range by"
        return _fail(session, row, now_s, f"a job {late} the deadline")
    if now_s < row.done_after_s:
        return False
    row.state, row.ended_at_s = "done", now_s
    return True


def _stopped(session: Session, row: HandoffRow, now_s: float, stopped: list[int]) -> bool:
    """A job of the hand-off stopped. Before the switch, or the target after it: the
    hand-off fails and the origin gets its range back (after the switch, what it dropped
    since is lost: the reason says so). The origin after the switch: the target keeps the
    class, but the tuples before the switch that arrive late are computed by neither."""
    if row.state == "planned":
        return _fail(session, row, now_s, f"job {stopped[0]} stopped before the switch")
    if row.target_job_id in stopped:
        return _fail(
            session, row, now_s, f"the target job {row.target_job_id} stopped after the switch: "
            "the class's tuples from the switch until now are not computed",
        )  # fmt: skip
    row.state, row.ended_at_s = "failed", now_s
    row.reason = (
        f"the origin job {row.origin_job_id} stopped before its watermark passed the switch: "
        "tuples before the switch that arrive late are not computed"
    )
    return True


def _applied_by(session: Session, row: HandoffRow) -> float | None:
    """When the later of the two jobs applied its version, epoch s (None: not both)."""
    versions = ConfigVersionRepository(session)
    times = []
    for job_id, version in ((row.origin_job_id, row.origin_version),
                            (row.target_job_id, row.target_version)):  # fmt: skip
        stored = versions.at(job_id, version)
        if stored is None or stored.applied_at is None:
            return None
        times.append(stored.applied_at.timestamp())
    return max(times)


def _fail(session: Session, row: HandoffRow, now_s: float, reason: str) -> bool:
    """End ``row`` as failed; each running job gets its range back."""
    for job_id, role in ((row.origin_job_id, "origin"), (row.target_job_id, "target")):
        before = row.before.get(role)
        held = None if before is None else EventRange.model_validate(before)
        try:
            _give(session, job_id, tuning.latest_config(session, job_id), row.class_name, held)
        except Conflict:  # stopped, or already at that range
            continue
    row.state, row.reason, row.ended_at_s = "failed", reason, now_s
    return True


def listed(session: Session, class_name: str | None, limit: int) -> Sequence[HandoffRow]:
    """The newest ``limit`` hand-offs (of one class), newest first."""
    stmt = select(HandoffRow).order_by(HandoffRow.id.desc()).limit(limit)
    if class_name is not None:
        stmt = stmt.where(HandoffRow.class_name == class_name)
    return session.scalars(stmt).all()

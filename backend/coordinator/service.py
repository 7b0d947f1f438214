"""One round of the cluster coordinator on one master.

A round reads each running elastic job's report (``reports``), steps the master's
:class:`~spark_runner.core.coordinator.Coordinator` (its state kept in
``cluster_coordinators``, whose row the round locks), and makes the allocation in force
each job's live ``elastic.max_executors`` (a new configuration version by
``coordinator``, which the job applies at its next period: above a lowered cap it
releases executors at once, below a raised one its own elastic policy grows into it).
The cap is written whenever the job's differs, so an operator's edit of a coordinated
job's ``max_executors`` lasts until the next round. A change of the allocation is
logged in ``cluster_reallocations`` and, for each job whose allocation changed, as an
``allocate`` action in the job's own action log, judged later like the job's own
(``backend.actions.verdicts``). When executors cannot help a job, a class may move
instead (``moves``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.actions.repository import ActionRepository
from backend.actions.verdicts import judge_pending
from backend.coordinator import AUTHOR
from backend.coordinator.models import CoordinatorState, ReallocationRow
from backend.coordinator.moves import move_a_class
from backend.coordinator.reports import Reported, report_of
from backend.errors import Conflict
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.tuning import service as tuning
from spark_runner.contract.actions import ControlAction
from spark_runner.core.coordinator import Coordinator, CoordinatorParams, Reallocation
from spark_runner.core.errors import ParameterError


def run_round(
    session: Session,
    master: str,
    executors: int,
    now_s: float,
    params: CoordinatorParams | None = None,
) -> ReallocationRow | None:
    """One round on ``master``'s ``executors``; the change it logged, if any."""
    state = _locked_state(session, master)
    jobs = coordinated_jobs(session, master)
    reported = {str(job.id): report_of(session, job, now_s) for job in jobs}
    coordinator = Coordinator(
        params or CoordinatorParams(),
        dict(state.allocation),
        -math.inf if state.last_change_s is None else state.last_change_s,
        state.short_since_s,
    )
    state.round_at_s = now_s
    try:
        change = coordinator.step(now_s, [r.report for r in reported.values()], executors)
    except ParameterError as problem:
        state.problem = str(problem)
        return None
    state.problem = None
    state.allocation = dict(coordinator.allocation)
    last = coordinator.last_change_s
    state.last_change_s = None if last == -math.inf else last
    state.short_since_s = coordinator.short_since_s
    _cap(session, coordinator.allocation)
    move_a_class(
        session, jobs, reported, coordinator.allocation, executors, now_s, coordinator.params
    )
    row = None
    if change is not None:
        row = _log(session, master, executors, change, reported, coordinator.params)
    judge_pending(session, (job.id for job in jobs), AUTHOR)
    return row


def coordinated_jobs(session: Session, master: str) -> list[Job]:
    """The running jobs on ``master`` whose live configuration is elastic."""
    return [
        job
        for job in JobRepository(session).running_on(master)
        if tuning.latest_config(session, job.id).elastic is not None
    ]


def _locked_state(session: Session, master: str) -> CoordinatorState:
    """``master``'s coordinator state, its row locked until the round's commit."""
    state = session.get(CoordinatorState, master, with_for_update=True)
    if state is not None:
        return state
    try:
        with session.begin_nested():
            session.add(CoordinatorState(master=master, allocation={}))
    except IntegrityError:  # another round made it first
        pass
    state = session.get(CoordinatorState, master, with_for_update=True, populate_existing=True)
    assert state is not None
    return state


def _cap(session: Session, allocation: Mapping[str, int]) -> None:
    """Make each job's live ``max_executors`` its allocation."""
    for job, executors in allocation.items():
        elastic = tuning.latest_config(session, int(job)).elastic or {}
        if elastic.get("max_executors") == executors:
            continue
        try:
            tuning.propose(session, int(job), {"elastic": {"max_executors": executors}}, AUTHOR)
        except Conflict:  # it stopped meanwhile
            continue


def _log(
    session: Session,
    master: str,
    executors: int,
    change: Reallocation,
    reported: Mapping[str, Reported],
    params: CoordinatorParams,
) -> ReallocationRow:
    """The change in the cluster's log and in the action log of each job it changed."""
    row = ReallocationRow(
        master=master,
        at_s=change.at_s,
        executors=executors,
        trigger_job_id=None if change.trigger is None else int(change.trigger),
        usage=change.usage,
        held_s=change.held_s,
        before=dict(change.before),
        after=dict(change.after),
        reports={
            job: {c.name: [c.priority, round(c.load, 4)] for c in r.report.classes}
            for job, r in reported.items()
        },
    )
    session.add(row)
    session.flush()
    why = trigger_words(change, params)
    actions = [
        {"job_id": int(job), **_action(row.id, change, job, reported[job], why, params)}
        for job, after in change.after.items()
        if change.before.get(job) != after
    ]
    ActionRepository(session).upsert_many(actions)
    return row


def _action(
    seq: int, change: Reallocation, job: str, reported: Reported, why: str, p: CoordinatorParams
) -> dict[str, object]:
    """A job's ``allocate`` action for ``change`` (its number: the change's in the log)."""
    triggered = change.trigger == job
    return ControlAction(
        seq=seq,
        at_s=change.at_s,
        kind="allocate",
        origin="coordinator",
        trigger=why,
        usage=round(change.usage if triggered else reported.usage, 4),
        threshold=p.short_usage if triggered else None,
        held_s=round(change.held_s, 3) if triggered else None,
        executors_before=change.before.get(job),
        executors_after=change.after[job],
        shed_before=round(reported.shed, 4),
        shed_after=round(reported.shed, 4),
    ).model_dump(mode="json")


def trigger_words(change: Reallocation, params: CoordinatorParams) -> str:
    """Why the allocation changed, in words."""
    if change.trigger is None:
        started = sorted(set(change.after) - set(change.before), key=int)
        ended = sorted(set(change.before) - set(change.after), key=int)
        parts = [f"job {j} started" for j in started] + [f"job {j} ended" for j in ended]
        return "the cluster's jobs changed: " + (", ".join(parts) or "none")
    return (
        f"job {change.trigger} short: its classes use {change.usage:.2f} of its "
        f"{change.before.get(change.trigger)} executors (>= {params.short_usage:g}) for "
        f"{change.held_s:.0f} s"
    )

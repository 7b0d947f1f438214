"""The wire format of a job's control actions: what it changed, why, and whether it helped.

``POST {api_url}/api/v1/jobs/{job_id}/actions`` with body ``{"actions": [ControlAction...]}``.
A job posts an action when it takes it (``verdict`` None) and again once its verdict is
in; ``seq`` (the action's number within the job) makes the second post replace the first,
so a retried post is stored once.

Kinds: ``scale_out`` and ``scale_in`` (the elastic policy resized the pool; ``usage`` is
the job's u, ``threshold`` the τ it crossed, ``held_s`` for how long), ``shed_more`` and
``shed_less`` (a class's shed fraction moved by a step worth noting; ``usage`` is the
class's u, ``manager_state`` what its manager saw). Shed fractions before and after are
the job's, load-weighted, for a scaling action and the class's for a shedding one.

``allocate`` is the cluster coordinator's, never a job's (``origin`` ``coordinator``;
``backend.coordinator``): it changed how many executors the job may hold
(``executors_before`` → ``executors_after``); ``trigger`` says why, ``usage`` is the short
job's use of its allocation, ``threshold`` the usage that made it short, ``held_s`` for
how long. ``move`` is a hand-off's (``origin`` ``handoff``; ``backend.handoffs``), in
both jobs' logs: ``class_name`` moves between this job and another at a switch instant,
``trigger`` says which job, when and who asked, ``usage`` is the job's u and the shed
fractions the class's when it was asked; its number is the hand-off's. A job's post of
any of these is refused.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from spark_runner.contract.samples import INT32_MAX
from spark_runner.core.elastic import MAX_EXECUTORS

ActionKind = Literal["scale_out", "scale_in", "shed_more", "shed_less", "allocate", "move"]
ACTION_KINDS: tuple[ActionKind, ...] = get_args(ActionKind)
SCALING_KINDS: tuple[ActionKind, ...] = ("scale_out", "scale_in")
PLANE_KINDS: tuple[ActionKind, ...] = ("allocate", "move")
"""The control plane's kinds, never a job's."""
ActionOrigin = Literal["job", "coordinator", "handoff"]
Outcome = Literal["improved", "unchanged", "worse"]
MAX_BATCH_ACTIONS = 1_000
"""Most actions one post carries."""


class Verdict(BaseModel):
    """Violation and loss over the periods before an action against those after it.

    ``violation_*_s`` is the mean over the periods of the worst response time's excess over
    the delay target (the job's: the sum over its classes; a class's own for a shedding
    action); ``loss_*`` the shed tuples over the arrived ones. ``outcome`` is ``worse``
    when either grew beyond its tolerance, ``improved`` when either fell beyond it and
    neither grew, ``unchanged`` otherwise.
    """

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    periods: int = Field(ge=1, le=INT32_MAX, description="Periods in each window.")
    violation_before_s: float = Field(ge=0, allow_inf_nan=False)
    violation_after_s: float = Field(ge=0, allow_inf_nan=False)
    loss_before: float = Field(ge=0, le=1, allow_inf_nan=False)
    loss_after: float = Field(ge=0, le=1, allow_inf_nan=False)


WINDOW = 5
"""Periods on each side of an action that its verdict compares."""
VIOLATION_TOLERANCE_S = 0.05
"""Violation must move more than this (and 10 % of the earlier value) to count, s."""
LOSS_TOLERANCE = 0.02
"""Loss must move more than this (a fraction of the arrived tuples) to count."""


def judge(before: tuple[float, float], after: tuple[float, float], periods: int) -> Verdict:
    """The verdict on (violation s, loss) before and after an action (see ``Verdict``)."""
    (v0, l0), (v1, l1) = before, after
    tol_v = max(VIOLATION_TOLERANCE_S, 0.1 * v0)
    worse = v1 > v0 + tol_v or l1 > l0 + LOSS_TOLERANCE
    better = v1 < v0 - tol_v or l1 < l0 - LOSS_TOLERANCE
    outcome: Outcome = "worse" if worse else "improved" if better else "unchanged"
    return Verdict(
        outcome=outcome,
        periods=periods,
        violation_before_s=_six_digits(v0),
        violation_after_s=_six_digits(v1),
        loss_before=min(_six_digits(l0), 1.0),
        loss_after=min(_six_digits(l1), 1.0),
    )


def _six_digits(value: float) -> float:
    """``value`` to 6 significant digits (0 where it is not finite)."""
    return float(f"{value:.6g}") if math.isfinite(value) else 0.0


class ControlAction(BaseModel):
    """One control action of a job, with its trigger, its effect and its verdict."""

    model_config = ConfigDict(frozen=True)

    seq: int = Field(ge=0, le=INT32_MAX, description="The action's number within the job.")
    at_s: float = Field(
        ge=0, allow_inf_nan=False, description="When it was taken: epoch s (simulated s)."
    )
    kind: ActionKind
    class_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="The class (shedding and moves only).",
    )
    usage: float = Field(ge=0, allow_inf_nan=False, description="u = L / L_C when taken.")
    threshold: float | None = Field(
        default=None, gt=0, le=1, description="The τ the job's u crossed (scaling only)."
    )
    held_s: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="How long u stayed past it, s."
    )
    manager_state: str | None = Field(
        default=None, max_length=20, description="The class manager's state (shedding only)."
    )
    executors_before: int | None = Field(default=None, ge=0, le=MAX_EXECUTORS)
    executors_after: int | None = Field(
        default=None, ge=0, le=MAX_EXECUTORS, description="The size asked (None: not elastic)."
    )
    shed_before: float = Field(ge=0, le=1, allow_inf_nan=False)
    shed_after: float = Field(ge=0, le=1, allow_inf_nan=False)
    verdict: Verdict | None = Field(default=None, description="None until it is in.")
    origin: ActionOrigin = Field(
        default="job",
        description="Who took it: the job's own controller, or the cluster coordinator "
        "(whose actions are numbered apart: seq is unique per job and origin).",
    )
    trigger: str | None = Field(
        default=None, max_length=200, description="Why the control plane acted (its actions only)."
    )


class ActionBatch(BaseModel):
    """Actions as a job posts them: its own (origin ``job``, never ``allocate`` or
    ``move``)."""

    actions: list[ControlAction] = Field(min_length=1, max_length=MAX_BATCH_ACTIONS)

    @field_validator("actions")
    @classmethod
    def _the_jobs_own(cls, actions: list[ControlAction]) -> list[ControlAction]:
        for action in actions:
            if action.origin != "job" or action.kind in PLANE_KINDS or action.trigger:
                raise ValueError(
                    f"action seq {action.seq}: a job posts its own actions only (origin "
                    "'job', no trigger, kind not 'allocate' or 'move': those are the "
                    "control plane's)"
                )
        return actions


def trigger_text(action: ControlAction) -> str:
    """Why the action was taken, in words (the CLI's and the dashboard's)."""
    if action.trigger is not None:
        return action.trigger
    if action.threshold is not None and action.held_s is not None:
        return f"u {action.usage:.2f} past τ {action.threshold:g} for {action.held_s:.0f} s"
    state = f"{action.manager_state}, " if action.manager_state else ""
    return f"{state}u {action.usage:.2f}"


def effect_text(action: ControlAction) -> str:
    """What the action changed: the pool's size and the shed fraction, before -> after
    (the coordinator's: the executors the job may hold)."""
    if action.kind == "allocate":
        before = "-" if action.executors_before is None else action.executors_before
        return f"may hold {before} -> {action.executors_after} executors"
    pool = (
        f"executors {action.executors_before} -> {action.executors_after}, "
        if action.executors_before is not None and action.executors_before != action.executors_after
        else ""
    )
    return f"{pool}shed {action.shed_before:.0%} -> {action.shed_after:.0%}"


def verdict_text(verdict: Verdict | None) -> str:
    """The verdict in words ("pending" until it is in)."""
    if verdict is None:
        return "pending"
    return (
        f"{verdict.outcome}: violation {verdict.violation_before_s:.2f} -> "
        f"{verdict.violation_after_s:.2f} s, loss {verdict.loss_before:.0%} -> "
        f"{verdict.loss_after:.0%} ({verdict.periods} periods each side)"
    )


def action_line(action: ControlAction, since_s: float = 0.0) -> str:
    """One line for a log: when (from ``since_s``), what, why, effect and verdict."""
    who = f" {action.class_name}" if action.class_name else ""
    return (
        f"{action.at_s - since_s:8.1f} s  {action.kind}{who}: {trigger_text(action)}; "
        f"{effect_text(action)}; {verdict_text(action.verdict)}"
    )

"""The log of a job's control actions and their verdicts, the same for both engines.

Every period each engine hands over what its classes did (:class:`ClassPeriod`), what the
control step saw (:class:`PeriodOutcome`), the shed fractions it applies and its pool's
size. :class:`ActionLog` records

- every resize the elastic policy asked (``scale_out``, ``scale_in``), with its trigger;
- every change of a class's shed fraction worth noting: by at least :data:`SHED_STEP`
  from the fraction last noted, or down to zero (``shed_more``, ``shed_less``);

and, some periods later, a verdict: violation and loss over the :data:`WINDOW` periods up
to the action against the :data:`WINDOW` periods after it has taken effect (a scale-out
once the size asked serves and its executors have warmed up, or :data:`SETTLE_MAX`
periods later if it never does; any other action at the next period). A period's
violation is its worst response time's excess over the class's target; its loss the
shed tuples over the arrived ones.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from spark_runner.contract.actions import WINDOW, ActionKind, ControlAction, judge
from spark_runner.control.period import ClassPeriod, PeriodOutcome, rounded
from spark_runner.core.elastic import ScalingAction

SHED_STEP = 0.1
"""A class's shed fraction must move this much from the one last noted to be recorded."""
SETTLE_MAX = 30
"""Periods a scale-out may take to serve before its verdict is taken anyway."""
MAX_KEPT = 5_000
"""The log keeps the newest actions up to this many (a run's results stay bounded)."""


@dataclass(frozen=True)
class Managed:
    """What the control step saw of each class: its load L (s/s), its usage u = L / L_C
    and its manager's state."""

    loads: Mapping[str, float]
    usage: Mapping[str, float]
    states: Mapping[str, str]

    @classmethod
    def of(cls, outcome: PeriodOutcome) -> Managed:
        result = outcome.result
        loads = {n: o.load for n, o in outcome.observations.items()}
        usage = {n: load / h if (h := result.headrooms[n]) else 0.0 for n, load in loads.items()}
        states = {n: str(d.state)[:20] for n, d in result.decisions.items()}
        return cls(loads, usage, states)


@dataclass(frozen=True)
class _Quality:
    """One period's violation (s) and shed and arrived tuples, per class."""

    violation_s: Mapping[str, float]
    shed: Mapping[str, int]
    arrived: Mapping[str, int]


@dataclass
class _Open:
    """An action waiting for its verdict."""

    action: ControlAction
    before: list[_Quality]
    effective: bool
    waited: int = 0
    serving_at: float | None = None
    after: list[_Quality] | None = None


class ActionLog:
    """The actions of one run (see module): ``observe`` once per period. ``targets`` are
    the classes' delay targets: the engine's own mapping, so a live change shows;
    ``warmup_s`` how long a scale-out's executors take to serve at speed once they serve
    (the elastic settings' ``warmup_s``); ``numbers`` the first action's number and the
    step to the next (a job whose queries each keep a log numbers them apart)."""

    def __init__(
        self,
        targets: Mapping[str, float],
        warmup_s: float = 0.0,
        numbers: tuple[int, int] = (0, 1),
    ) -> None:
        self.targets = targets
        self.warmup_s = warmup_s
        self.actions: deque[ControlAction] = deque(maxlen=MAX_KEPT)
        self._history: deque[_Quality] = deque(maxlen=WINDOW)
        self._open: list[_Open] = []
        self._noted_shed = dict.fromkeys(targets, 0.0)
        self._shed_in_force = dict.fromkeys(targets, 0.0)
        self._seq, self._seq_step = numbers

    def observe(
        self,
        t_s: float,
        periods: Mapping[str, ClassPeriod],
        managed: Managed,
        applied: Mapping[str, float],
        executors: int | None,
        scaling: ScalingAction | None,
    ) -> list[ControlAction]:
        """One period: what the classes did (``periods``) and what their managers saw
        (``managed``); ``applied`` the shed fractions the engine applies from now,
        ``executors`` the pool serving (None: not elastic), ``scaling`` the resize the
        policy asked this period. Returns the actions taken or judged this period."""
        quality = _Quality(
            violation_s={n: self._violation(n, p) for n, p in periods.items()},
            shed={n: p.shed for n, p in periods.items()},
            arrived={n: p.arrived for n, p in periods.items()},
        )
        self._history.append(quality)
        changed = self._judge(t_s, quality, executors)
        new: list[ControlAction] = []
        if scaling is not None:
            new.append(
                self._new(
                    t_s,
                    scaling.rule,
                    usage=scaling.utilization,
                    threshold=scaling.threshold,
                    held_s=scaling.held_s,
                    executors_before=scaling.executors_before,
                    executors_after=scaling.executors_after,
                    shed_before=_job_shed(self._shed_in_force, managed.loads),
                    shed_after=_job_shed(applied, managed.loads),
                )
            )
        for name, fraction in applied.items():
            noted = self._noted_shed[name]
            if abs(fraction - noted) < SHED_STEP and not (fraction == 0.0 < noted):
                continue
            self._noted_shed[name] = fraction
            new.append(
                self._new(
                    t_s,
                    "shed_more" if fraction > noted else "shed_less",
                    class_name=name,
                    usage=managed.usage[name],
                    manager_state=managed.states[name],
                    executors_before=executors,
                    executors_after=executors,
                    shed_before=noted,
                    shed_after=fraction,
                )
            )
        self._shed_in_force = dict(applied)
        for action in new:
            self.actions.append(action)
            effective = action.kind != "scale_out"
            self._open.append(_Open(action, list(self._history), effective))
        return [*changed, *new]

    def _violation(self, name: str, period: ClassPeriod) -> float:
        if not period.outputs:
            return 0.0
        return max(0.0, period.response_max_s - self.targets[name])

    def _new(self, t_s: float, kind: ActionKind, **fields: object) -> ControlAction:
        action = ControlAction.model_validate(
            {
                "seq": self._seq,
                "at_s": t_s,
                "kind": kind,
                **{
                    k: rounded(v) if isinstance(v, float) else v
                    for k, v in fields.items()
                    if v is not None
                },
            }
        )
        self._seq += self._seq_step
        return action

    def _judge(self, t_s: float, quality: _Quality, executors: int | None) -> list[ControlAction]:
        """Advance every open action by this period; return those judged now."""
        judged: list[ControlAction] = []
        still: list[_Open] = []
        for item in self._open:
            if item.after is not None:
                item.after.append(quality)
            elif item.effective:
                item.after = []  # the period it took effect in is not counted
            else:
                item.waited += 1
                asked = item.action.executors_after
                serving = executors is not None and asked is not None and executors >= asked
                if serving and item.serving_at is None:
                    item.serving_at = t_s
                warm = item.serving_at is not None and t_s >= item.serving_at + self.warmup_s
                item.effective = warm or item.waited >= SETTLE_MAX
                if item.effective:
                    item.after = []  # the first period on the new size is not counted
            if item.after is not None and len(item.after) >= WINDOW:
                judged.append(self._with_verdict(item))
            else:
                still.append(item)
        self._open = still
        return judged

    def _with_verdict(self, item: _Open) -> ControlAction:
        action = item.action
        assert item.after is not None
        names = [action.class_name] if action.class_name is not None else list(self.targets)
        verdict = judge(_summary(item.before, names), _summary(item.after, names), WINDOW)
        judged = action.model_copy(update={"verdict": verdict})
        for i, kept in enumerate(self.actions):
            if kept.seq == action.seq:
                self.actions[i] = judged
                break
        return judged


def _summary(window: Iterable[_Quality], names: list[str]) -> tuple[float, float]:
    """Mean violation per period (summed over ``names``) and loss over a window."""
    periods = list(window)
    violation = sum(sum(q.violation_s[n] for n in names) for q in periods)
    shed = sum(q.shed[n] for q in periods for n in names)
    arrived = sum(q.arrived[n] for q in periods for n in names)
    return violation / max(len(periods), 1), shed / arrived if arrived else 0.0


def _job_shed(fractions: Mapping[str, float], loads: Mapping[str, float]) -> float:
    """The job's shed fraction: the classes', weighted by their load."""
    total = sum(loads.values())
    if not total > 0:
        return 0.0
    return min(sum(fractions.get(n, 0.0) * load for n, load in loads.items()) / total, 1.0)

"""The one interface every load manager implements, and the arithmetic they share.

A load manager answers "when and how much to shed" for one class (001 §3.3.1). Each
control period the caller hands it an :class:`Observation` of the period that ended and
applies the returned :class:`Decision`'s ``shed_fraction`` during the next period. A
manager keeps only its own state; it never reads a clock or global state.

Shed amounts compose multiplicatively on the kept fraction (spec §3.4): adding ``d`` to a
shed fraction ``s`` gives ``1 − (1 − s)(1 − d)``; removing ``d`` is the exact inverse.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar, Generic, TypeVar

from spark_runner.core.observation import Decision, LoadState, Observation
from spark_runner.core.params import (
    ParamValue,
    Rule,
    build_params,
    check_rules,
    params_as_dict,
    require_positive,
)

DEFAULT_DELAY_TARGET_S = 2.0
"""Delay target used when none is given: D = 2 s, as in 001 §4.3.1."""
DEFAULT_MAX_SHED = 0.95
"""Largest shed fraction a manager may return (spec §3.4; the thesis runs use 0.99)."""
DEFAULT_HEADROOM = 0.8
"""Initial (or fixed) headroom H in s/s (spec §3.4: ALoMa starts at 0.8)."""
MIN_HEADROOM = 1e-9
"""Floor for any headroom estimate, s/s, so ratios stay defined."""


@dataclass(frozen=True)
class ManagerParams:
    """Parameters every manager has.

    Attributes:
        delay_target_s: delay target D of the class, s (> 0).
        max_shed: largest shed fraction returned, in [0, 1).
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {
        "delay_target_s": (Rule.positive(" seconds"),),
        "max_shed": (Rule.half_open(0.0, 1.0),),
    }
    """Each field's rules (subclasses declare their own fields'; see ``param_rules``)."""

    delay_target_s: float = DEFAULT_DELAY_TARGET_S
    max_shed: float = DEFAULT_MAX_SHED

    def __post_init__(self) -> None:
        check_rules(self)


@dataclass(frozen=True)
class FixedHeadroomParams(ManagerParams):
    """Parameters of a manager whose headroom is set by hand (see :class:`FixedHeadroomManager`).

    Attributes:
        headroom: the fixed headroom H, s/s (> 0) [0.8].
    """

    RULES: ClassVar[Mapping[str, tuple[Rule, ...]]] = {"headroom": (Rule.positive(" s/s"),)}

    headroom: float = DEFAULT_HEADROOM


P_co = TypeVar("P_co", bound=ManagerParams, covariant=True)
FP_co = TypeVar("FP_co", bound=FixedHeadroomParams, covariant=True)


def clamp_shed(shed_fraction: float, max_shed: float) -> float:
    """Clip a shed fraction into ``[0, max_shed]`` (NaN becomes 0)."""
    if not shed_fraction > 0:
        return 0.0
    return min(shed_fraction, max_shed)


def add_shed(shed_fraction: float, extra: float) -> float:
    """Shed ``extra`` (a fraction of what is admitted now) more: ``1 − (1 − s)(1 − d)``."""
    return 1.0 - (1.0 - shed_fraction) * (1.0 - min(max(extra, 0.0), 1.0))


def remove_shed(shed_fraction: float, less: float) -> float:
    """Shed ``less`` less; the inverse of :func:`add_shed`. Never below 0."""
    if less <= 0.0:
        return shed_fraction
    less = min(less, 1.0 - 1e-12)
    return min(shed_fraction, max(0.0, 1.0 - (1.0 - shed_fraction) / (1.0 - less)))


def shed_load_more(shed_fraction: float, admitted_load: float, amount: float) -> float:
    """Shed ``amount`` s/s more when ``admitted_load`` s/s is admitted now."""
    if admitted_load <= 0 or amount <= 0:
        return shed_fraction
    return add_shed(shed_fraction, amount / admitted_load)


def shed_load_less(shed_fraction: float, admitted_load: float, amount: float) -> float:
    """Admit ``amount`` s/s more than the ``admitted_load`` admitted now (less shedding)."""
    if amount <= 0:
        return shed_fraction
    if admitted_load <= 0:
        return 0.0
    return max(0.0, 1.0 - (1.0 - shed_fraction) * (admitted_load + amount) / admitted_load)


def worst_response_time(obs: Observation) -> float | None:
    """The period's largest output response time, or ``None`` without output."""
    return obs.response_time.max_s if obs.response_time.has_output else None


def display_state(obs: Observation, delay_target_s: float, overloaded: bool) -> LoadState:
    """State for managers without a response-time monitor (see :class:`LoadState`)."""
    worst = worst_response_time(obs)
    if worst is not None and worst > delay_target_s:
        return LoadState.OT
    return LoadState.OVERLOADED if overloaded else LoadState.NORMAL


class LoadManager(ABC, Generic[P_co]):
    """Decides each control period which share of a class's input to shed.

    Invariants: ``0 <= shed_fraction <= params.max_shed`` after every call; parameters
    are validated as a whole on construction and on every update (``ParameterError``),
    and a rejected update leaves the manager unchanged.
    """

    kind: ClassVar[str]
    label: ClassVar[str] = ""
    """A short human name for forms (the kind when empty)."""
    params_type: ClassVar[type[ManagerParams]]
    """The parameters' dataclass: the class's type argument (``LoadManager[P]``)."""
    sheds: ClassVar[bool] = True
    """False for a manager that never sheds (it sheds no stale tuples either)."""

    def __init_subclass__(cls, *, kind: str = "", label: str = "", **kwargs: object) -> None:
        """A concrete manager names its ``kind`` (and ``label``) in its class statement,
        ``class M(LoadManager[MParams], kind="m")``; an intermediate base names none."""
        super().__init_subclass__(**kwargs)
        if kind:
            cls.kind, cls.label, cls.params_type = kind, label, _params_argument(cls)

    def __init__(self, params: P_co | None = None) -> None:
        self._params: P_co = params if params is not None else self.params_type()  # type: ignore[assignment]
        if not isinstance(self._params, self.params_type):
            raise TypeError(f"{type(self).__name__} needs {self.params_type.__name__}")
        self._shed = 0.0
        self.reset()

    @property
    def params(self) -> P_co:
        """The current parameters (a frozen dataclass)."""
        return self._params

    @property
    def shed_fraction(self) -> float:
        """The shed fraction in force (the last decision's)."""
        return self._shed

    @property
    def headroom(self) -> float | None:
        """Current capacity estimate / headroom H in s/s, or ``None`` if the manager has none."""
        return None

    def set_headroom(self, headroom: float) -> None:
        """Replace the capacity estimate (DILoS pushes Eq. 6.1 here). Ignored if none."""
        require_positive("headroom", headroom, " s/s")

    def update(self, **changes: ParamValue) -> None:
        """Apply a live parameter change between steps (validated as a whole)."""
        self.reconfigure(changes)

    def reconfigure(self, changes: Mapping[str, ParamValue]) -> None:
        """Apply a live parameter change given as a mapping (validated as a whole)."""
        old = self._params
        new = build_params(type(old), changes, base=old)
        self._params = new
        self._shed = clamp_shed(self._shed, new.max_shed)
        self._on_reconfigure(old, new)

    def describe(self) -> dict[str, object]:
        """Kind, parameters and headroom, for display and storage."""
        return {"kind": self.kind, "headroom": self.headroom, **params_as_dict(self._params)}

    def impose(
        self,
        obs: Observation,
        shed_fraction: float,
        state: LoadState,
        *,
        action: str,
        details: Mapping[str, float] | None = None,
    ) -> Decision:
        """A decision the controller takes for this class instead of the manager's step
        (an infeasible class, see ``DilosController``); stored as the shed in force."""
        self._on_impose(obs)
        return self._decide(obs, shed_fraction, state, action=action, details=details)

    def admit_more(self, decision: Decision, extra_load: float) -> Decision:
        """``decision`` (this manager's last) amended to admit up to ``extra_load`` s/s of
        what it sheds; a headroom below the new admitted load is raised to it. DILoS hands
        a shedding class the processor time that stood idle (see ``DilosController``)."""
        if decision.load <= 0.0 or extra_load <= 0.0 or decision.shed_fraction <= 0.0:
            return decision
        fewer = decision.shed_fraction - extra_load / decision.load
        shed = clamp_shed(fewer, self._params.max_shed)
        self._shed = shed
        admitted = decision.load * (1.0 - shed)
        headroom = self.headroom
        if headroom is not None and admitted > headroom:
            self.set_headroom(admitted)
        return replace(
            decision,
            shed_fraction=shed,
            admitted_load=admitted,
            headroom=self.headroom,
            action=f"{decision.action}+admit_idle",
        )

    @abstractmethod
    def step(self, obs: Observation) -> Decision:
        """Take the observation of the period that ended; return the next period's decision."""

    @abstractmethod
    def reset(self) -> None:
        """Forget all learnt state (keep parameters)."""

    def _on_reconfigure(self, old: ManagerParams, new: ManagerParams) -> None:
        """Hook for managers whose state depends on a parameter."""

    def _on_impose(self, obs: Observation) -> None:
        """Hook for managers that learn from a period even when its decision is imposed."""

    def _decide(
        self,
        obs: Observation,
        shed_fraction: float,
        state: LoadState,
        *,
        action: str,
        estimated_delay_s: float | None = None,
        details: Mapping[str, float] | None = None,
    ) -> Decision:
        """Clamp, store and package a decision."""
        shed = clamp_shed(shed_fraction, self._params.max_shed)
        self._shed = shed
        return Decision(
            kind=self.kind,
            shed_fraction=shed,
            state=state,
            headroom=self.headroom,
            load=obs.load,
            admitted_load=obs.load * (1.0 - shed),
            estimated_delay_s=estimated_delay_s,
            details=dict(details) if details else {},
            action=action,
        )


def _params_argument(cls: type) -> type[ManagerParams]:
    """The parameters dataclass ``cls`` gives its generic base (``Base[MParams]``)."""
    for base in getattr(cls, "__orig_bases__", ()):
        for arg in getattr(base, "__args__", ()):
            if isinstance(arg, type) and issubclass(arg, ManagerParams):
                return arg
    raise TypeError(f"{cls.__name__} names no ManagerParams type argument")


class FixedHeadroomManager(LoadManager[FP_co]):
    """A manager whose headroom is its ``headroom`` parameter: it learns none, and a new
    headroom (``set_headroom``) is a parameter change."""

    def reset(self) -> None:
        self._shed = 0.0

    @property
    def headroom(self) -> float:
        return self._params.headroom

    def set_headroom(self, headroom: float) -> None:
        self.update(headroom=max(headroom, MIN_HEADROOM))

    def _open_loop(
        self, obs: Observation, shed: float, action: str, details: Mapping[str, float]
    ) -> Decision:
        """The decision of a rule that reads the load alone: ``shed``, named ``action``
        while it sheds and ``admit_all`` otherwise, in the state the display shows."""
        state = display_state(obs, self._params.delay_target_s, shed > 0)
        return self._decide(
            obs, shed, state, action=action if shed > 0 else "admit_all", details=details
        )


class LearntHeadroomManager(LoadManager[P_co]):
    """A manager that learns its headroom: ``_headroom`` (set by ``reset``) is the estimate,
    and ``set_headroom`` replaces it."""

    _headroom: float

    @property
    def headroom(self) -> float:
        return self._headroom

    def set_headroom(self, headroom: float) -> None:
        super().set_headroom(headroom)
        self._headroom = max(headroom, MIN_HEADROOM)

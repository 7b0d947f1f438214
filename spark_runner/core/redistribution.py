"""DILoS capacity redistribution (001 §6.1.3, spec §4), as a pure function of class shares.

Everything is in *quota units*: a class's quota ``q_k = T_k / T`` is its share of the
control period; its capacity is ``L_Ck = ρ_k × q_k`` with ``ρ_k`` the capacity one unit of
quota buys it (its manager's headroom over its quota). A class's *need* ``n_k = L_k / ρ_k
= u_k × q_k`` is the quota that would process its whole load without shedding. With the
original share ``q0_k = P_k / Σ P × Σ q`` the thesis's rules become, for reserve ``r_k``::

    demand_k = (u_k − 1) × q_k = n_k − q_k                       if u_k > 1, else 0
    supply_k = (1 − u_k) × q_k − r_k × q0_k = q_k − n_k − r_k q0_k   if positive, else 0
    budget   = Σ supply_k

(multiply by ``ρ_k`` to get the thesis's capacity units; the spec's corrected demand
condition ``u_k > 1`` is used). New quotas give new capacities ``L_Ck' = ρ_k q_k'``, i.e.
``T_k' = L_Ck' / L_Ck × T_k``, and the caller resets each headroom ``H_k' = T_k'/T_k × H_k``
(Eq. 6.1). The sum of quotas never changes.

Policies:

- ``relative`` (the thesis): suppliers give their supply into the budget; (2) demands are
  served from it highest priority first; (1) a class whose demand is still unmet and that
  sits below its original share takes capacity back, up to its original share, from
  classes above their original share (lowest priority first); (3) leftover budget returns
  to classes below their original share, highest priority first; any rest goes back to
  the suppliers pro rata. After this every class has its demand met or at least its
  original share (unless it lent below it and nobody holds its capacity).
- ``absolute``: classes are served in priority order, each up to its need plus reserve,
  from everything above the other classes' floors; what is left is shared by priority
  weight (001 §6.3, "absolute priority" with the hybrid remainder).
- ``strict``: ``relative``, then quota moves from lower to higher classes until no higher
  class expects to lose a larger fraction than a lower one (expected loss
  ``λ_k = max(0, 1 − q_k'/n_k)``), by pool-adjacent-violators over the priority order
  (ties by name). Exceptions: no class goes below its floor, so a lower class left with
  only its floor (0 by default) cannot give more even if the higher one still loses more.

Floors: ``max(min_share, 1 − max_lend_k) × q0_k``: no class lends below it (``max_lend``
caps how much of a critical class's capacity may be lent, 001 §6.2.3.2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from spark_runner.core.class_settings import default_of
from spark_runner.core.errors import ParameterError

POLICIES = ("relative", "absolute", "strict")
DEFAULT_POLICY: Final = "absolute"
"""The product's promise: high classes lose nothing while low classes absorb the overload.

The thesis's ``relative`` keeps every class at least its original share, so a top class
whose own load passes its share sheds while the classes below keep theirs."""
_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class ClassShare:
    """One class as the redistribution sees it (quota units, see module).

    Attributes:
        name: class name.
        priority: P_k (> 0).
        quota: current quota q_k (>= 0).
        original: original share q0_k (>= 0).
        need: quota that would process the class's whole load unshed, n_k (>= 0).
        reserve: fraction of the original share a supplier keeps spare (the class's
            ``reserve_fraction``).
        max_lend: largest fraction of its original share the class may lend (its
            ``max_lend_fraction``).
    """

    name: str
    priority: float
    quota: float
    original: float
    need: float
    reserve: float = default_of("reserve_fraction")
    max_lend: float = default_of("max_lend_fraction")

    def __post_init__(self) -> None:
        for field_name in ("quota", "original", "need"):
            value = getattr(self, field_name)
            if not (math.isfinite(value) and value >= 0):
                raise ParameterError(f"{self.name}.{field_name}", value, "must be finite and >= 0")
        if not self.priority > 0:
            raise ParameterError(f"{self.name}.priority", self.priority, "must be > 0")

    @property
    def usage(self) -> float:
        """u_k = need / quota (``inf`` with need but no quota)."""
        if self.quota > 0:
            return self.need / self.quota
        return math.inf if self.need > 0 else 0.0

    def floor(self, min_share: float) -> float:
        return quota_floor(self.original, self.max_lend, min_share)

    def demand(self) -> float:
        return max(0.0, self.need - self.quota)

    def supply(self, min_share: float) -> float:
        spare = self.quota - self.need - self.reserve * self.original
        return max(0.0, min(spare, self.quota - self.floor(min_share)))


@dataclass(frozen=True)
class Redistribution:
    """Result: new quotas (same sum) and the demand/supply/budget that led to them."""

    policy: str
    quotas: Mapping[str, float]
    demand: Mapping[str, float]
    supply: Mapping[str, float]
    budget: float


def priority_order(shares: Sequence[ClassShare]) -> list[ClassShare]:
    """Highest priority first; ties by name."""
    return sorted(shares, key=lambda s: (-s.priority, s.name))


def redistribute(
    shares: Sequence[ClassShare], policy: str = DEFAULT_POLICY, min_share: float = 0.0
) -> Redistribution:
    """New quotas for ``shares`` under ``policy`` (see module). Sum of quotas preserved."""
    if policy not in POLICIES:
        raise ParameterError("policy", policy, f"must be one of {', '.join(POLICIES)}")
    names = [s.name for s in shares]
    if len(set(names)) != len(names):
        raise ParameterError("classes", names, "class names must be unique")
    order = priority_order(shares)
    demand = {s.name: s.demand() for s in order}
    supply = {s.name: s.supply(min_share) for s in order}
    budget = sum(supply.values())
    if policy == "absolute":
        new = _absolute(order, min_share)
    else:
        new = _relative(order, demand, supply)
        if policy == "strict":
            new = _strict(order, new, min_share)
    return Redistribution(
        policy=policy,
        quotas=MappingProxyType(new),
        demand=MappingProxyType(demand),
        supply=MappingProxyType(supply),
        budget=budget,
    )


def _relative(
    order: Sequence[ClassShare], demand: Mapping[str, float], supply: Mapping[str, float]
) -> dict[str, float]:
    new = {s.name: s.quota - supply[s.name] for s in order}
    budget = sum(supply.values())
    unmet = dict(demand)
    for s in order:  # rule (2): highest priority first
        give = min(unmet[s.name], budget)
        if give > 0:
            new[s.name] += give
            unmet[s.name] -= give
            budget -= give
    for s in order:  # rule (1): back up to the original share, from those above theirs
        want = min(unmet[s.name], s.original - new[s.name])
        for j in reversed(order):
            if want <= _EPS:
                break
            excess = new[j.name] - j.original
            if j.name == s.name or excess <= _EPS:
                continue
            take = min(want, excess)
            new[j.name] -= take
            new[s.name] += take
            unmet[s.name] -= take
            want -= take
    for s in order:  # rule (3): leftover budget to classes below their original share
        if budget <= _EPS:
            break
        give = min(s.original - new[s.name], budget)
        if give > 0:
            new[s.name] += give
            budget -= give
    total_supply = sum(supply.values())
    if budget > 0 and total_supply > 0:  # nobody wants it: suppliers keep it
        for s in order:
            new[s.name] += budget * supply[s.name] / total_supply
    return new


def _absolute(order: Sequence[ClassShare], min_share: float) -> dict[str, float]:
    total = sum(s.quota for s in order)
    floors = {s.name: s.floor(min_share) for s in order}
    remaining = total - sum(floors.values())
    if remaining < 0:  # floors alone exceed the total: scale them down
        scale = total / (total - remaining) if total - remaining > 0 else 0.0
        return {s.name: floors[s.name] * scale for s in order}
    new = dict(floors)
    for s in order:
        want = max(0.0, s.need + s.reserve * s.original - floors[s.name])
        give = min(want, remaining)
        new[s.name] += give
        remaining -= give
    weight = sum(s.priority for s in order)
    for s in order:
        new[s.name] += remaining * s.priority / weight
    return new


def quota_floor(original: float, max_lend: float, min_share: float) -> float:
    """The least quota a class keeps: ``max(min_share, 1 − max_lend) × q0`` (module)."""
    return max(min_share, 1.0 - max_lend) * original


def expected_loss(quota: float, need: float) -> float:
    """Share of the load a class expects to shed with ``quota``: ``max(0, 1 − q/n)``.

    A need below 1e-12 of the period is no load at all (and no loss).
    """
    if need <= _EPS:
        return 0.0
    return max(0.0, 1.0 - quota / need)


def _strict(
    order: Sequence[ClassShare], quotas: Mapping[str, float], min_share: float
) -> dict[str, float]:
    # Pool adjacent violators: blocks of consecutive classes (priority order) sharing one
    # expected loss; merge while an earlier (higher) block expects to lose more.
    blocks: list[list[int]] = []
    q_sum: list[float] = []
    n_sum: list[float] = []
    for i, s in enumerate(order):
        blocks.append([i])
        q_sum.append(quotas[s.name])
        n_sum.append(s.need)
        while len(blocks) > 1 and (
            expected_loss(q_sum[-2], n_sum[-2]) > expected_loss(q_sum[-1], n_sum[-1]) + 1e-12
        ):
            members, q_last, n_last = blocks.pop(), q_sum.pop(), n_sum.pop()
            blocks[-1].extend(members)
            q_sum[-1] += q_last
            n_sum[-1] += n_last
    new = dict(quotas)
    for members, q_total, n_total in zip(blocks, q_sum, n_sum, strict=True):
        if len(members) == 1:
            continue
        loss = expected_loss(q_total, n_total)
        if loss > 0:
            for i in members:
                new[order[i].name] = (1.0 - loss) * order[i].need
        else:
            slack = q_total - n_total
            old_slack = [max(0.0, quotas[order[i].name] - order[i].need) for i in members]
            total_old = sum(old_slack)
            for i, old in zip(members, old_slack, strict=True):
                share = old / total_old if total_old > 0 else 1.0 / len(members)
                new[order[i].name] = order[i].need + slack * share
    return _lift_to_floors(order, new, min_share)


def _lift_to_floors(
    order: Sequence[ClassShare], quotas: dict[str, float], min_share: float
) -> dict[str, float]:
    floors = {s.name: s.floor(min_share) for s in order}
    deficit = sum(max(0.0, floors[n] - q) for n, q in quotas.items())
    if deficit <= _EPS:
        return quotas
    surplus = {n: q - floors[n] for n, q in quotas.items() if q > floors[n]}
    total = sum(surplus.values())
    if total <= 0:
        return quotas
    take = min(1.0, deficit / total)
    return {n: max(q, floors[n]) - surplus.get(n, 0.0) * take for n, q in quotas.items()}

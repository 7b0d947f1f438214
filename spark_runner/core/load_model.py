"""Load estimation (001 §3.3, spec §2): load coefficients, class loads, queued load.

Load coefficient of the branch rooted at operator ``o`` (Eq. 3.2, recursive over every
downstream path for fan-out plans)::

    coef(o) = c_o + sel_o × Σ_{d downstream of o} coef(d)

which for a flat path 1..n is ``Σ_j c_j × Π_{m<j} sel_m``. The class load (Eq. 3.1) is
``L_k = Σ_i r_i × coef_i`` over the class's input streams, with ``r_i`` the arrival rate
*before the class's own shedding*. With inter-class sharing (module :mod:`sharing`) a class
sees only the operators it owns: its input streams are the flows into its shedding points,
and the coefficient of such a point stops where the class's ownership ends. Queued load
(Eq. 4.1): ``qL_k = Σ_{o owned by k} queue_length(o) × coef(branch rooted at o)``.

Units: costs in s/tuple, selectivities in output tuples per input tuple (may exceed 1 for
joins), rates in tuples/s, loads in s/s, queued load in s of work.

Measured statistics change every period. :meth:`LoadModel.update` takes whatever changed;
:meth:`LoadModel.snapshot` recomputes only what depends on it: coefficients when costs or
selectivities changed (one reverse pass), flows when rates or shed fractions changed (one
forward pass); the per-class sums are one more pass — each O(operators + edges).

Transients: each operator keeps a running average of its cost (exponential, weight
``cost_smoothing`` on the newest sample). A cost above ``transient_factor ×`` the average
(reference code: 1.5×) is flagged as transient and, unless ``trust_transients``, the
average from before that sample is used instead: noted, not trusted. The sample still
enters the average, so a lasting change of cost is trusted after a few periods.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from spark_runner.core.errors import ParameterError
from spark_runner.core.operator_graph import OperatorGraph
from spark_runner.core.params import (
    ParamValue,
    build_params,
    require_greater,
    require_in_closed,
)
from spark_runner.core.sharing import SharingPlan


@dataclass(frozen=True)
class LoadModelParams:
    """Attributes:
    transient_factor: a cost above this multiple of its running average is a
        transient (> 1) [1.5].
    cost_smoothing: weight of the newest cost sample in the running average, (0, 1] [0.2].
    trust_transients: use a transient cost as measured instead of the average [False].
    """

    transient_factor: float = 1.5
    cost_smoothing: float = 0.2
    trust_transients: bool = False

    def __post_init__(self) -> None:
        require_greater("transient_factor", self.transient_factor, 1.0)
        require_in_closed("cost_smoothing", self.cost_smoothing, 0.0, 1.0)
        if self.cost_smoothing == 0:
            raise ParameterError("cost_smoothing", 0.0, "must be > 0")


@dataclass(frozen=True, slots=True)
class ClassLoad:
    """The load picture of one class for one period.

    Attributes:
        load: L_k before the class's own shedding (Eq. 3.1), s/s.
        admitted_load: ``(1 − s_k) × L_k``, s/s.
        arrival_rate_per_s: tuples/s reaching the class's shedding points, before shedding.
        queued_load_s: qL_k (Eq. 4.1), s of work.
        queue_length: tuples waiting in the class's operators' queues.
        cost_per_tuple_s: ``L_k / arrival rate`` (0 without arrivals), s/tuple.
        transient_operators: owned operators whose cost is flagged transient.
    """

    name: str
    load: float
    admitted_load: float
    arrival_rate_per_s: float
    queued_load_s: float
    queue_length: float
    cost_per_tuple_s: float
    transient_operators: tuple[str, ...]

    @property
    def transient(self) -> bool:
        return bool(self.transient_operators)


class LoadModel:
    """Per-operator statistics of one operator graph, and the loads they imply."""

    def __init__(
        self,
        graph: OperatorGraph,
        priorities: Mapping[str, float] | None = None,
        params: LoadModelParams | None = None,
    ) -> None:
        self.graph = graph
        self._params = params or LoadModelParams()
        n = len(graph)
        self._cost = [0.0] * n  # latest measured cost, s/tuple
        self._avg = [0.0] * n  # running average cost
        self._held = [0.0] * n  # the average before a transient sample: used instead of it
        self._seen = [False] * n
        self._transient = [False] * n
        self._sel = [1.0] * n
        self._queue = [0.0] * n
        self._rate = [0.0] * n  # arrival rate of the stream entering each source
        self._coef = [0.0] * n
        self._own_coef = [0.0] * n
        self._entry_rate = [0.0] * n
        self._shed: dict[str, float] = {}
        self._set_plan(priorities or {})

    # --- configuration ---------------------------------------------------------------

    @property
    def params(self) -> LoadModelParams:
        return self._params

    @property
    def plan(self) -> SharingPlan:
        return self._plan

    def reconfigure(self, changes: Mapping[str, ParamValue]) -> None:
        """Live parameter change (validated as a whole)."""
        self._params = build_params(LoadModelParams, changes, base=self._params)
        self._dirty_coef = True

    def set_priorities(self, priorities: Mapping[str, float]) -> None:
        """Class priorities changed: ownership of shared segments may move."""
        self._set_plan(priorities)

    def _set_plan(self, priorities: Mapping[str, float]) -> None:
        plan = SharingPlan.build(self.graph, priorities)
        self._plan = plan
        self.class_names: tuple[str, ...] = tuple(
            sorted(set(plan.owned) | set(priorities), key=lambda c: (-priorities.get(c, 0.0), c))
        )
        owner = plan.owner
        g = self.graph
        self._same_children = tuple(
            tuple(j for j in g.children[i] if owner[j] == owner[i]) for i in range(len(g))
        )
        self._same_parents = tuple(
            tuple(p for p in g.parents[i] if owner[p] == owner[i]) for i in range(len(g))
        )
        self._foreign_parents = tuple(
            tuple(p for p in g.parents[i] if owner[p] != owner[i]) for i in range(len(g))
        )
        self._dirty_coef = self._dirty_flow = True

    # --- measurements ----------------------------------------------------------------

    def update(
        self,
        *,
        costs: Mapping[str, float] | None = None,
        selectivities: Mapping[str, float] | None = None,
        source_rates: Mapping[str, float] | None = None,
        queue_lengths: Mapping[str, float] | None = None,
        shed_fractions: Mapping[str, float] | None = None,
    ) -> None:
        """Record the statistics that changed this period (by operator id / class name).

        Every value is checked (a known operator, a finite number >= 0) before any is stored.
        """
        cost_items = self._checked("costs", costs)
        sel_items = self._checked("selectivities", selectivities)
        rate_items = self._checked("source_rates", source_rates)
        queue_items = self._checked("queue_lengths", queue_lengths)
        parents = self.graph.parents
        for i, rate in rate_items:
            if parents[i]:
                op_id = self.graph.ids[i]
                raise ParameterError(f"source_rates.{op_id}", rate, "only sources have a rate")
        if cost_items:
            factor, weight = self._params.transient_factor, self._params.cost_smoothing
            seen, avg, held, transient, cur = (
                self._seen,
                self._avg,
                self._held,
                self._transient,
                self._cost,
            )
            for i, cost in cost_items:
                if seen[i]:
                    a = avg[i]
                    transient[i] = cost > factor * a
                    held[i] = a
                    avg[i] = a + weight * (cost - a)
                else:
                    avg[i], seen[i], transient[i] = cost, True, False
                cur[i] = cost
            self._dirty_coef = True
        if sel_items:
            sel = self._sel
            for i, value in sel_items:
                sel[i] = value
            self._dirty_coef = True
        if rate_items:
            rate_of = self._rate
            for i, value in rate_items:
                rate_of[i] = value
            self._dirty_flow = True
        queue = self._queue
        for i, value in queue_items:
            queue[i] = value
        if shed_fractions:
            for name, s in shed_fractions.items():
                if not (math.isfinite(s) and 0.0 <= s <= 1.0):
                    raise ParameterError(f"shed_fractions.{name}", s, "must be within [0, 1]")
                self._shed[name] = s
            self._dirty_flow = True

    def _checked(self, field: str, values: Mapping[str, float] | None) -> list[tuple[int, float]]:
        """``(index, value)`` pairs, or ``ParameterError`` for an unknown id or a bad value."""
        if not values:
            return []
        index = self.graph.index_map
        out: list[tuple[int, float]] = []
        for op_id, value in values.items():
            i = index.get(op_id)
            if i is None:
                raise ParameterError(
                    f"{field}.{op_id}", value, "must name an operator of the graph"
                )
            if not 0.0 <= value < math.inf:  # also rejects NaN
                raise ParameterError(f"{field}.{op_id}", value, "must be a finite number >= 0")
            out.append((i, value))
        return out

    # --- results ---------------------------------------------------------------------

    def effective_cost(self, op_id: str) -> float:
        """Cost used in the coefficients (the average while transient), s/tuple."""
        i = self.graph.index(op_id)
        return self._effective_cost(i)

    def _effective_cost(self, i: int) -> float:
        if self._transient[i] and not self._params.trust_transients:
            return self._held[i]
        return self._cost[i]

    def transient_operators(self) -> tuple[str, ...]:
        return tuple(self.graph.ids[i] for i, t in enumerate(self._transient) if t)

    def coefficient(self, op_id: str) -> float:
        """Eq. 3.2: load coefficient of the whole branch rooted at ``op_id``, s/tuple."""
        self._refresh_coefficients()
        return self._coef[self.graph.index(op_id)]

    def class_coefficient(self, op_id: str) -> float:
        """Eq. 3.2 restricted to the operators the owner of ``op_id`` owns, s/tuple."""
        self._refresh_coefficients()
        return self._own_coef[self.graph.index(op_id)]

    def total_load(self) -> float:
        """Eq. 3.1 over the whole graph: ``Σ_sources r_i × coef_i`` with no shedding, s/s."""
        self._refresh_coefficients()
        return sum(self._rate[i] * self._coef[i] for i in self.graph.sources)

    def snapshot(self) -> Mapping[str, ClassLoad]:
        """Every class's load picture (recomputing only what changed)."""
        self._refresh_coefficients()
        if self._dirty_flow:
            self._propagate_flows()
        g, owner = self.graph, self._plan.owner
        idx = {name: k for k, name in enumerate(self.class_names)}
        m = len(self.class_names)
        load, rate, qload, qlen = [0.0] * m, [0.0] * m, [0.0] * m, [0.0] * m
        own_coef, entry, queue = self._own_coef, self._entry_rate, self._queue
        for i in range(len(g)):
            k = idx[owner[i]]
            e = entry[i]
            if e:
                load[k] += e * own_coef[i]
                rate[k] += e
            q = queue[i]
            if q:
                qload[k] += q * own_coef[i]
                qlen[k] += q
        transient = [i for i, t in enumerate(self._transient) if t]
        out: dict[str, ClassLoad] = {}
        for name, k in idx.items():
            keep = 1.0 - self._shed.get(name, 0.0)
            out[name] = ClassLoad(
                name=name,
                load=load[k],
                admitted_load=load[k] * keep,
                arrival_rate_per_s=rate[k],
                queued_load_s=qload[k],
                queue_length=qlen[k],
                cost_per_tuple_s=load[k] / rate[k] if rate[k] > 0 else 0.0,
                transient_operators=tuple(g.ids[i] for i in transient if owner[i] == name),
            )
        return MappingProxyType(out)

    def _refresh_coefficients(self) -> None:
        if not self._dirty_coef:
            return
        children, same_children = self.graph.children, self._same_children
        coef, own, sel = self._coef, self._own_coef, self._sel
        for i in reversed(self.graph.order):
            c = self._effective_cost(i)
            s = sel[i]
            coef[i] = c + s * sum(coef[j] for j in children[i]) if children[i] else c
            same = same_children[i]
            own[i] = c + s * sum(own[j] for j in same) if same else c
        self._dirty_coef = False
        self._dirty_flow = True  # class loads use the coefficients

    def _propagate_flows(self) -> None:
        """Forward pass: the rate entering each operator from outside its owner class."""
        owner, sel, rate = self._plan.owner, self._sel, self._rate
        out_rate = [0.0] * len(self.graph)
        entry = self._entry_rate
        shed = self._shed
        same_parents, foreign_parents = self._same_parents, self._foreign_parents
        for i in self.graph.order:
            foreign = rate[i] + sum(out_rate[p] for p in foreign_parents[i])
            internal = sum(out_rate[p] for p in same_parents[i])
            entry[i] = foreign
            keep = 1.0 - shed.get(owner[i], 0.0) if foreign else 1.0
            out_rate[i] = (internal + foreign * keep) * sel[i]
        self._dirty_flow = False

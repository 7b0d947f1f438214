"""Random workloads nobody tuned for: seeded scenario documents for property tests and
``bench/bench_robustness.py``.

``random_workload(seed)`` draws one scenario (a plain document, validated by
:class:`~spark_runner.scenario.models.Scenario`) with:

- 2 to 6 classes with distinct random priorities (1 to 9); a feasible class has a delay
  target of 1 to 4 s (2 to 8 control periods of 0.5 s) and a path of 0.5 to 5 ms per
  tuple; a class is *infeasible* by construction (about one in six, never the first
  class): its four operators together cost 1.5 to 2 times its target (50 to 100 ms) per
  tuple, so no admission can meet it. Operator turns (batches of 4) stay well inside a
  control period, which the simulator's per-period accounting needs (a turn is atomic);
- per class one query of 1 to 4 operators reading its own stream, arriving constant, in a
  step (a surge or a lull), in bursts (bounded Pareto per period) or along a sinusoid
  (steps every control period);
- a total offered load between 0.5 and 2.5 times the processor, split at random;
- sometimes a background job taking 20 to 50 % of the processor for a while, processor
  stalls, and a shared segment owned by the highest class and read by a lower one.

``with_manager(doc, variant)`` sets who controls it: DILoS under each policy, ALoMa per
class, Aurora, CTRL or no manager (:data:`VARIANTS`). The ground truth the promises are
judged on (which classes are infeasible, the original shares) is in :class:`Workload`.
Deterministic: the same seed gives the same document.
"""

from __future__ import annotations

import copy
import math
import random
from dataclasses import dataclass
from typing import Any

from spark_runner.core.class_settings import default_of
from spark_runner.core.redistribution import quota_floor
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.models import Control, Scenario

PERIOD_S = 0.5
DURATION_S = 80.0
BATCH_SIZE = 4
REDISTRIBUTION_EVERY = 8
ARRIVALS = ("constant", "step", "bursty", "sinusoid")
VARIANTS: dict[str, dict[str, Any]] = {
    "dilos-relative": {"mode": "dilos", "policy": "relative", "manager": "aloma"},
    "dilos-absolute": {"mode": "dilos", "policy": "absolute", "manager": "aloma"},
    "dilos-strict": {"mode": "dilos", "policy": "strict", "manager": "aloma"},
    "aloma": {"mode": "per_class", "manager": "aloma"},
    "aurora": {"mode": "per_class", "manager": "aurora"},
    "ctrl": {"mode": "per_class", "manager": "ctrl"},
    "none": {"mode": "none", "manager": "none"},
}
"""Who controls a workload: the control mode, DILoS's policy and each class's manager."""

MAX_SHED = 0.99
INFEASIBLE_ODDS = 1 / 6
FEASIBLE_PATH_S = (0.0005, 0.005)  # a feasible class's path cost per tuple, s
FEASIBLE_TARGET_S = (1.0, 4.0)
INFEASIBLE_TARGET_S = (0.05, 0.1)
INFEASIBLE_LOAD = 0.1  # at most this much of the processor, so its turns stay short


@dataclass(frozen=True)
class Workload:
    """One generated scenario document and what is true of it by construction."""

    seed: int
    doc: dict[str, Any]
    infeasible: frozenset[str]
    priorities: dict[str, float]

    def scenario(self, variant: str) -> Scenario:
        """The validated scenario under ``variant`` (a key of :data:`VARIANTS`)."""
        return scenario_from_dict(with_manager(self.doc, variant), source=self.doc["name"])

    def original_share(self, name: str) -> float:
        """The class's share of the processor by priority (DILoS's q0)."""
        return self.priorities[name] / sum(self.priorities.values())

    def guaranteed_share(self, name: str, policy: str) -> float:
        """The share of the processor the class keeps while a class above it sheds, under
        DILoS ``policy`` (``""``: a mode without redistribution, fixed quotas): its
        original share (``relative``, fixed quotas), its quota's floor (``absolute``) or
        none (``strict``); as :meth:`~spark_runner.core.dilos.DilosController.
        guaranteed_shares`."""
        if policy in ("relative", ""):
            return self.original_share(name)
        if policy == "strict":
            return 0.0
        [cls] = [c for c in self.doc["classes"] if c["name"] == name]
        max_lend = cls.get("max_lend_fraction", default_of("max_lend_fraction"))
        min_share = self.doc["control"].get("min_share", Control.model_fields["min_share"].default)
        return quota_floor(self.original_share(name), max_lend, min_share)


def random_workload(seed: int) -> Workload:
    rng = random.Random(f"workload:{seed}")
    n = rng.randint(2, 6)
    priorities = rng.sample(range(1, 10), n)
    names = [f"c{i + 1}" for i in range(n)]
    # c1 is always feasible, so a workload never has only infeasible classes
    infeasible = {name for name in names[1:] if rng.random() < INFEASIBLE_ODDS}
    total_load = rng.uniform(0.5, 2.5)
    parts = [rng.uniform(0.2, 1.0) for _ in names]
    streams: list[dict[str, Any]] = []
    classes: list[dict[str, Any]] = []
    for name, priority, part in zip(names, priorities, parts, strict=True):
        load = total_load * part / sum(parts)
        if name in infeasible:
            # four operators, so a turn (BATCH_SIZE tuples) stays well inside a period
            target = round(rng.uniform(*INFEASIBLE_TARGET_S), 3)
            costs = [target * rng.uniform(1.5, 2.0) / 4] * 4
            load = min(load, INFEASIBLE_LOAD)
        else:
            target = round(rng.uniform(*FEASIBLE_TARGET_S), 3)
            n_ops = rng.randint(1, 4)
            costs = [rng.uniform(*FEASIBLE_PATH_S) / n_ops] * n_ops
        rate = load / sum(costs)
        streams.append({"name": f"s_{name}", "arrival": _arrival(rng, rate)})
        classes.append(
            {
                "name": name,
                "priority": priority,
                "delay_target_s": target,
                "queries": [
                    {
                        "name": "q",
                        "source": f"s_{name}",
                        "operators": [_operator(cost) for cost in costs],
                    }
                ],
            }
        )
    doc = _document(f"random-{seed}", seed, streams, classes)
    if rng.random() < 0.3:
        start = rng.uniform(5.0, DURATION_S / 2)
        doc["background"] = [
            {
                "start_s": round(start, 3),
                "end_s": round(start + rng.uniform(5.0, 20.0), 3),
                "share": round(rng.uniform(0.2, 0.5), 3),
            }
        ]
    if rng.random() < 0.3:
        doc["engine"].update(stall_rate_per_s=rng.uniform(0.05, 0.5), stall_mean_s=0.2)
    if rng.random() < 0.3:
        _share_a_segment(rng, doc, priorities, infeasible)
    return Workload(
        seed=seed,
        doc=doc,
        infeasible=frozenset(infeasible),
        priorities=dict(zip(names, map(float, priorities), strict=True)),
    )


def turbulent_workload(seed: int) -> Workload:
    """The shape every disturbance at once: 3 feasible classes whose arrivals are bursty
    around a sinusoid (a bounded Pareto per period whose range follows the sinusoid), a
    total offered load of 0.8 to 2 times the processor, a background job that comes and
    goes (two to four spells of 3 to 12 s taking 20 to 50 % of the processor) and
    processor stalls. Deterministic like :func:`random_workload`."""
    rng = random.Random(f"turbulent:{seed}")
    names = ["c1", "c2", "c3"]
    priorities = rng.sample(range(1, 10), len(names))
    total_load = rng.uniform(0.8, 2.0)
    parts = [rng.uniform(0.2, 1.0) for _ in names]
    streams, classes = [], []
    for name, priority, part in zip(names, priorities, parts, strict=True):
        n_ops = rng.randint(1, 4)
        costs = [rng.uniform(*FEASIBLE_PATH_S) / n_ops] * n_ops
        rate = total_load * part / sum(parts) / sum(costs)
        streams.append({"name": f"s_{name}", "arrival": _bursty_sinusoid(rng, rate)})
        classes.append(
            {
                "name": name,
                "priority": priority,
                "delay_target_s": round(rng.uniform(*FEASIBLE_TARGET_S), 3),
                "queries": [
                    {"name": "q", "source": f"s_{name}", "operators": list(map(_operator, costs))}
                ],
            }
        )
    spells, t = [], rng.uniform(3.0, 10.0)
    for _ in range(rng.randint(2, 4)):
        end = min(t + rng.uniform(3.0, 12.0), DURATION_S)
        spells.append(
            {
                "start_s": round(t, 3),
                "end_s": round(end, 3),
                "share": round(rng.uniform(0.2, 0.5), 3),
            }
        )
        t = end + rng.uniform(3.0, 12.0)
        if t >= DURATION_S - 3.0:
            break
    doc = _document(f"turbulent-{seed}", seed, streams, classes)
    doc["engine"].update(stall_rate_per_s=rng.uniform(0.1, 0.5), stall_mean_s=0.2)
    doc["background"] = spells
    return Workload(seed, doc, frozenset(), dict(zip(names, map(float, priorities), strict=True)))


def with_manager(doc: dict[str, Any], variant: str) -> dict[str, Any]:
    """``doc`` controlled by ``variant`` (a key of :data:`VARIANTS`)."""
    setting = VARIANTS[variant]
    out = copy.deepcopy(doc)
    out["control"]["mode"] = setting["mode"]
    if "policy" in setting:
        out["control"]["policy"] = setting["policy"]
    params: dict[str, Any] = {"max_shed": MAX_SHED} if setting["manager"] != "none" else {}
    for cls in out["classes"]:
        cls["manager"] = {"kind": setting["manager"], "params": params}
    return out


def _document(
    name: str, seed: int, streams: list[dict[str, Any]], classes: list[dict[str, Any]]
) -> dict[str, Any]:
    """A workload's scenario document with the settings every workload shares."""
    return {
        "version": 1,
        "name": name,
        "seed": seed,
        "duration_s": DURATION_S,
        "control": {"period_s": PERIOD_S, "redistribution_every": REDISTRIBUTION_EVERY},
        "engine": {"batch_size": BATCH_SIZE, "batch_overhead_s": 0.0001},
        "streams": streams,
        "classes": classes,
    }


def _operator(cost_s: float) -> dict[str, Any]:
    return {"kind": "project", "columns": ["key", "value"], "sim": {"cost_per_tuple_s": cost_s}}


def _arrival(rng: random.Random, rate: float) -> dict[str, Any]:
    kind = rng.choice(ARRIVALS)
    if kind == "constant":
        return {"kind": "constant", "rate_per_s": round(rate, 3)}
    if kind == "step":
        at = round(rng.uniform(10.0, DURATION_S - 10.0), 3)
        factor = rng.choice((0.2, 0.5, 2.0, 3.0))
        return {
            "kind": "step",
            "steps": [
                {"at_s": 0.0, "rate_per_s": round(rate, 3)},
                {"at_s": at, "rate_per_s": round(rate * factor, 3)},
            ],
        }
    if kind == "bursty":
        low = max(rate / 3, 0.001)
        return {
            "kind": "pareto",
            "ranges": [{"from_s": 0.0, "min_rate_per_s": low, "max_rate_per_s": rate * 4}],
        }
    cycle = rng.uniform(10.0, 30.0)
    depth = rng.uniform(0.3, 0.9)
    steps = []
    t = 0.0
    while t < DURATION_S:
        level = rate * (1.0 + depth * math.sin(2 * math.pi * t / cycle))
        steps.append({"at_s": round(t, 3), "rate_per_s": round(max(level, 0.0), 3)})
        t += PERIOD_S * 4
    return {"kind": "step", "steps": steps}


def _bursty_sinusoid(rng: random.Random, rate: float) -> dict[str, Any]:
    """Bursts (a bounded Pareto per period, as ``bursty``) whose range follows a sinusoid
    of 10 to 30 s around ``rate``, changing every four control periods."""
    cycle, depth = rng.uniform(10.0, 30.0), rng.uniform(0.3, 0.9)
    ranges = []
    for k in range(math.ceil(DURATION_S / (4 * PERIOD_S))):
        t = 4 * PERIOD_S * k
        level = max(rate * (1.0 + depth * math.sin(2 * math.pi * t / cycle)), 0.003)
        ranges.append(
            {"from_s": round(t, 3), "min_rate_per_s": level / 3, "max_rate_per_s": level * 4}
        )
    return {"kind": "pareto", "ranges": ranges}


def _share_a_segment(
    rng: random.Random, doc: dict[str, Any], priorities: list[int], infeasible: set[str]
) -> None:
    """The highest class's first operator becomes a segment a lower feasible class reads
    too (the lower class sheds after it)."""
    classes = doc["classes"]
    order = sorted(range(len(classes)), key=lambda i: -priorities[i])
    top = classes[order[0]]
    lower = [classes[i] for i in order[1:] if classes[i]["name"] not in infeasible]
    if not lower or top["name"] in infeasible:
        return
    reader = rng.choice(lower)
    query = top["queries"][0]
    first, *rest = query["operators"]
    doc["shared_segments"] = [{"name": "shared", "source": query["source"], "operators": [first]}]
    query["source"] = "shared"
    query["operators"] = rest or [_operator(first["sim"]["cost_per_tuple_s"] / 10)]
    reader_query = reader["queries"][0]
    reader["queries"].append(
        {"name": "q_shared", "source": "shared", "operators": [reader_query["operators"][-1]]}
    )

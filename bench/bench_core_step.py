"""How long one DILoS control step takes: 50 classes, 500 operators, ALoMa per class.

Each period: new measured costs, selectivities, queue lengths and source rates for all 500
operators go into the load model (with inter-class sharing: pairs of classes share a source
and a select), the model recomputes every class's load and queued load, 50 observations are
built, and the DILoS controller steps every class's ALoMa (redistributing every 10th
period). The budget is 5 ms per step. Wall time is shown per part; the full period is also
shown as this thread's CPU time, which other processes on a shared machine cannot inflate.
Run: ``python -m bench.bench_core_step``.
"""

from __future__ import annotations

import random
import statistics
import time

from spark_runner.core.dilos import ClassSpec, DilosController, DilosParams
from spark_runner.core.load_model import LoadModel
from spark_runner.core.observation import Observation, ResponseTimeStats
from spark_runner.core.operator_graph import Operator, OperatorGraph

CLASSES = 50
OPS_PER_PAIR = 20  # 2 shared + 9 own per class
PERIOD_S = 0.15
STEPS = 2000
BUDGET_MS = 5.0


def build_graph() -> OperatorGraph:
    ops: list[Operator] = []
    for pair in range(CLASSES // 2):
        a, b = f"c{2 * pair}", f"c{2 * pair + 1}"
        src, sel = f"p{pair}_src", f"p{pair}_sel"
        ops.append(Operator(src, (sel,), frozenset({a, b})))
        ops.append(Operator(sel, (f"{a}_o1", f"{b}_o1"), frozenset({a, b})))
        for c in (a, b):
            own = {
                "o1": ("o2",),
                "o2": ("o3",),
                "o3": ("o4", "o7"),
                "o4": ("o5",),
                "o5": ("o6",),
                "o6": (),
                "o7": ("o8",),
                "o8": ("o9",),
                "o9": (),
            }
            for name, down in own.items():
                ops.append(Operator(f"{c}_{name}", tuple(f"{c}_{d}" for d in down), frozenset({c})))
    assert len(ops) == CLASSES // 2 * OPS_PER_PAIR == 500
    return OperatorGraph(ops)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    rng = random.Random(7)
    graph = build_graph()
    priorities = {f"c{k}": float(1 + k % 7) for k in range(CLASSES)}
    model = LoadModel(graph)
    controller = DilosController(
        [ClassSpec(name, p, 0.5) for name, p in priorities.items()],
        DilosParams(redistribution_every=10),
        load_model=model,
    )
    sources = graph.source_ids
    shed: dict[str, float] = {}
    t_model: list[float] = []
    t_obs: list[float] = []
    t_step: list[float] = []
    t_step_redis: list[float] = []
    t_total: list[float] = []
    cpu_total: list[float] = []  # this thread's CPU time: immune to other processes
    for _ in range(STEPS):
        costs = {op: 0.00002 * (1 + 0.2 * rng.random()) for op in graph.ids}
        sels = {op: 0.5 + 0.5 * rng.random() for op in graph.ids}
        queues = {op: 50 * rng.random() for op in graph.ids}
        rates = {src: 800 + 400 * rng.random() for src in sources}
        c0 = time.thread_time()
        t0 = time.perf_counter()
        model.update(
            costs=costs,
            selectivities=sels,
            queue_lengths=queues,
            source_rates=rates,
            shed_fractions=shed,
        )
        loads = model.snapshot()
        t1 = time.perf_counter()
        observations = {}
        for name in priorities:
            cl = loads[name]
            rt = 0.2 + 0.4 * rng.random()
            observations[name] = Observation(
                period_s=PERIOD_S,
                load=cl.load,
                arrival_rate_per_s=cl.arrival_rate_per_s,
                response_time=ResponseTimeStats(rt * 0.8, rt, 100),
                queue_length=cl.queue_length,
                queued_load_s=cl.queued_load_s,
                cost_per_tuple_s=cl.cost_per_tuple_s,
                transient=cl.transient,
            )
        t2 = time.perf_counter()
        result = controller.step(observations)
        t3 = time.perf_counter()
        c3 = time.thread_time()
        shed = result.shed_fractions
        t_model.append((t1 - t0) * 1e3)
        t_obs.append((t2 - t1) * 1e3)
        (t_step_redis if result.event else t_step).append((t3 - t2) * 1e3)
        t_total.append((t3 - t0) * 1e3)
        cpu_total.append((c3 - c0) * 1e3)

    rows = [
        ("load model: update 500 ops + snapshot", t_model),
        ("build 50 observations", t_obs),
        ("DILoS step, no redistribution", t_step),
        ("DILoS step with redistribution", t_step_redis),
        ("full period (all of the above)", t_total),
        ("full period, CPU time of this thread", cpu_total),
    ]
    print(f"DILoS core step: {CLASSES} classes, {len(graph)} operators, {STEPS} periods")
    print(f"{'part':<42}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}")
    for label, values in rows:
        print(
            f"{label:<42}{statistics.median(values):>11.3f}"
            f"{percentile(values, 0.95):>9.3f}{max(values):>9.3f}"
        )
    for label, values in (("wall", t_total), ("CPU", cpu_total)):
        p95 = percentile(values, 0.95)
        verdict = "within" if p95 <= BUDGET_MS else "OVER"
        print(
            f"p95 of a full period ({label}): {p95:.3f} ms, {verdict} the {BUDGET_MS:.0f} ms budget"
        )
    print("(wall time includes preemption by other processes on a shared machine)")


if __name__ == "__main__":
    main()

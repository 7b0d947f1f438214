"""The top class under overload: every class in one streaming query against a query per
priority tier (``headroom run --queries tier``), beside the top class alone (issue 43,
item 2).

    python -m bench.bench_spark_tiers [--configs alone,one,tier] [--rounds 1]
        [--warmup 20] [--duration 40] [--network stateful_overload] [--rates 440,566,880]

Networks: ``stateful_overload`` (``scenarios/stateful_overload.yaml``: three stateful
classes, 1 ms calibrated maps, 1.6 s of CPU asked per second of two cores) or
``windows-joins`` (the overload benchmark's: three classes, each a filter → 200 µs map →
2 s tumbling count per key and a tenth of its tuples joined with its stream within 1 s,
:func:`bench.bench_spark_common.three_classes`, at ``--rates`` tuples/s: give 0.35 /
0.45 / 0.70 of the capacity ``bench_spark_overload`` prints for this machine, its 1.5×
overload). Each configuration is ``headroom run`` in a process and JVM of its own
(``local[2]``), A B C per round:

- *alone*: the top class's query by itself: its unloaded response, the yardstick of
  item 2 (its mean under overload at most 1.2× this);
- *one*: every class in one streaming query (``--queries one``, the default);
- *tier*: a streaming query per priority tier on one SparkSession, the top tier's tasks
  first on a free slot (``--queries tier``).

Per class, from the run's results document (after the warm-up): the mean and p95
response time, the top class's mean over its mean alone, the share shed, the mean
violation of the target, and the share of periods flagged infeasible.
"""

from __future__ import annotations

import argparse
from typing import Any

import yaml

from bench.bench_spark_common import ROOT, load_average, render_table, run_spark, three_classes
from bench.latency_workload import COST_S, NETWORK_CLASSES, NETWORK_PERIOD_S

CONFIGS = ("alone", "one", "tier")
NETWORKS = ("stateful_overload", "windows-joins")
RATES = (440.0, 566.0, 880.0)
"""windows-joins' default rates: 0.35 / 0.45 / 0.70 of a capacity of 1,257 tuples/s."""


def network_doc(network: str, rates: tuple[float, ...]) -> dict[str, Any]:
    if network == "stateful_overload":
        return dict(yaml.safe_load((ROOT / "scenarios" / "stateful_overload.yaml").read_text()))
    targets = [c.target_s for c in NETWORK_CLASSES]
    return three_classes(rates, targets, cost_s=COST_S, period_s=NETWORK_PERIOD_S, stateful=True)


def top_alone(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as its top tier's query runs it alone: the top class, the streams and
    segments it reads, no background load
    (:func:`spark_runner.engine.dataflow.tiers.tier_scenario`)."""
    from spark_runner.engine.dataflow.tiers import tier_classes, tier_scenario
    from spark_runner.scenario.loader import scenario_from_dict

    scenario = scenario_from_dict(doc)
    alone = tier_scenario(scenario, tier_classes(scenario)[0], top=False)
    return dict(alone.model_dump(mode="json"))


def measure(config: str, doc: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The results document of ``config``'s run."""
    extra = ["--queries", "tier"] if config == "tier" else []
    return run_spark(
        top_alone(doc) if config == "alone" else doc,
        duration_s=args.duration,
        warmup_s=args.warmup,
        extra=extra,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=20.0, help="s before measuring")
    parser.add_argument("--duration", type=float, default=40.0, help="s measured")
    parser.add_argument("--network", choices=NETWORKS, default=NETWORKS[0])
    parser.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES))
    args = parser.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {sorted(CONFIGS)}")
    doc = network_doc(args.network, tuple(float(r) for r in args.rates.split(",")))
    top = max(doc["classes"], key=lambda c: c["priority"])["name"]
    rows = []
    for round_ in range(1, args.rounds + 1):
        alone: float | None = None
        for config in configs:
            classes = measure(config, doc, args)["classes"]
            if config == "alone":
                alone = classes[top]["mean_response_time_s"]
            for name, c in classes.items():
                rows.append(row(round_, config, name, c, alone if name == top else None))
    print(f"{args.network}, local[2], {load_average()}")
    headers = ["round", "configuration", "class", "mean s", "p95 s", "mean / alone", "shed"]
    print(render_table([*headers, "viol mean s", "infeasible"], rows))


def row(round_: int, config: str, name: str, c: dict[str, Any], alone: float | None) -> list[str]:
    def sec(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    mean = c["mean_response_time_s"]
    return [
        str(round_),
        config,
        name,
        sec(mean),
        sec(c["p95_response_time_s"]),
        f"{mean / alone:.2f}" if alone and mean is not None else "-",
        f"{c['shed_fraction']:.1%}",
        sec(c["mean_violation_s"]),
        f"{c['infeasible_fraction']:.0%}",
    ]


if __name__ == "__main__":
    main()

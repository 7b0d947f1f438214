"""Where the top class's time goes under overload: one streaming query for every class
against a query per priority tier, Spark's FIFO and FAIR schedulers (issue 43, item 2).

    python -m bench.bench_spark_tiers [--configs alone,one,tiers-fifo,tiers-fair]
        [--rounds 1] [--warmup 20] [--duration 40] [--network stateful_overload]
        [--rates 440,566,880]

Networks: ``stateful_overload`` (``scenarios/stateful_overload.yaml``: three stateful
classes, 1 ms calibrated maps, 1.6 s of CPU asked per second of two cores) or
``windows-joins`` (the overload benchmark's: three classes, each a filter → 200 µs map →
2 s tumbling count per key and a tenth of its tuples joined with its stream within 1 s,
:func:`bench.bench_spark_common.three_classes`, at ``--rates`` tuples/s: give 0.35 /
0.45 / 0.70 of the capacity ``bench_spark_overload`` prints for this machine, its 1.5×
overload). Each configuration runs in a Spark application of its own (``local[2]``),
A B C D per round:

- *alone*: the top class's query by itself: its unloaded response, the yardstick of
  item 2 (its mean under overload at most 1.2× this);
- *one*: headroom as it runs: every class in one streaming query, one controller;
- *tiers-fifo*: the top class in a streaming query of its own, the two lower classes in
  another, on the same SparkSession, Spark's default FIFO scheduler;
- *tiers-fair*: the same with ``spark.scheduler.mode=FAIR``, each query in a pool of its
  own (a free task slot goes to the pool with the fewest running tasks).

In the tier configurations each query has a controller of its own that knows only its
own classes: the lower tier's capacity is whatever its batches measure beside the top
tier's. This is a measurement of what a query per tier gives the top class, not a
product configuration: the lower classes' figures there show what an uncoordinated
controller costs them. Per class: the mean response time (answer-weighted over the
measured periods), the median of the periods' p95, the share shed, the periods and
those flagged infeasible.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.bench_spark_common import ROOT, load_average, median, render_table, three_classes

CONFIGS = ("alone", "one", "tiers-fifo", "tiers-fair")
NETWORKS = ("stateful_overload", "windows-joins")
RATES = (440.0, 566.0, 880.0)
"""windows-joins' default rates: 0.35 / 0.45 / 0.70 of a capacity of 1,257 tuples/s."""


def network_doc(network: str, rates: tuple[float, ...]) -> dict[str, Any]:
    if network == "stateful_overload":
        return dict(yaml.safe_load((ROOT / "scenarios" / "stateful_overload.yaml").read_text()))
    return three_classes(rates, (1.5, 2.0, 3.0), cost_s=0.0002, period_s=0.6, stateful=True)


def query_classes(config: str, doc: dict[str, Any]) -> list[list[str]]:
    """The classes of each of ``config``'s streaming queries: the top class alone, every
    class in one, or the top class's and the others'."""
    names = [c["name"] for c in sorted(doc["classes"], key=lambda c: -c["priority"])]
    if config == "alone":
        return [names[:1]]
    return [names] if config == "one" else [names[:1], names[1:]]


def sub_scenario(doc: dict[str, Any], names: list[str]) -> Any:
    """The scenario of ``doc`` with only the classes ``names`` and the streams they read."""
    from spark_runner.scenario.loader import scenario_from_dict

    classes = [c for c in doc["classes"] if c["name"] in names]
    sources = {q["source"] for c in classes for q in c["queries"]}
    streams = [s for s in doc["streams"] if s["name"] in sources]
    return scenario_from_dict({**doc, "classes": classes, "streams": streams})


def run_config(config: str, doc: dict[str, Any], warmup_s: float, duration_s: float) -> Any:
    """One configuration of ``doc`` in this process (its own Spark application): per
    class, the samples' figures after ``warmup_s``."""
    from spark_runner.contract.snapshot import ClassSnapshot, JobSnapshot
    from spark_runner.job.session import start_spark
    from tests.spark_runner.spark_helpers import Run

    scratch = Path(tempfile.mkdtemp(prefix="bench-tiers-"))
    snapshot = JobSnapshot(
        job_id=0,
        api_url="",
        spark_master="local[2]",
        checkpoint_dir=str(scratch / "unused"),
        classes=(ClassSnapshot(name="x", priority=1, delay_target_s=1),),
    )
    handle = start_spark(snapshot)
    runs: list[Run] = []
    try:
        for i, names in enumerate(query_classes(config, doc)):
            if config == "tiers-fair":  # the query's thread inherits its pool
                handle.spark.sparkContext.setLocalProperty("spark.scheduler.pool", f"tier{i}")
            runs.append(Run(handle.spark, sub_scenario(doc, names), scratch / f"tier{i}").start())
        started = time.time()
        time.sleep(warmup_s + duration_s)
        failures = [failure for run in runs if (failure := run.failed()) is not None]
        if failures:
            raise RuntimeError(f"{config}: {failures}")
    finally:
        for run in runs:  # between two batches, as a job stops
            run.stop()
        handle.stop()
    samples = [s for run in runs for s in run.samples if s.t > started + warmup_s]
    return class_figures(samples)


def class_figures(samples: list[Any]) -> dict[str, Any]:
    figures = {}
    for name in sorted({s.class_name for s in samples}):
        mine = [s for s in samples if s.class_name == name]
        answered = [s for s in mine if s.output_count and s.response_time_mean_s is not None]
        outputs = sum(s.output_count for s in answered)
        arrived = sum(s.arrived_count for s in mine)
        figures[name] = {
            "mean_s": sum(s.response_time_mean_s * s.output_count for s in answered) / outputs
            if outputs
            else None,
            "p95_s": median([s.response_time_p95_s for s in answered if s.response_time_p95_s])
            if answered
            else None,
            "shed": sum(s.shed_count or 0 for s in mine) / arrived if arrived else 0.0,
            "periods": len(mine),
            "flagged": sum(1 for s in mine if s.manager_state == "infeasible"),
        }
    return figures


def measure(config: str, args: argparse.Namespace) -> dict[str, Any]:
    """``config`` in a fresh Python process and JVM; FAIR set through a Spark conf dir."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="bench-tiers-conf-") as conf:
        if config == "tiers-fair":
            Path(conf, "spark-defaults.conf").write_text("spark.scheduler.mode FAIR\n")
            env["SPARK_CONF_DIR"] = conf
        out = Path(conf, "figures.json")
        child = ["--one", config, "--out", str(out), "--network", args.network]
        child += ["--rates", args.rates, "--warmup", str(args.warmup)]
        child += ["--duration", str(args.duration)]
        subprocess.run(
            [sys.executable, "-m", "bench.bench_spark_tiers", *child], cwd=ROOT, env=env, check=True
        )
        return dict(json.loads(out.read_text()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=20.0, help="s before measuring")
    parser.add_argument("--duration", type=float, default=40.0, help="s measured")
    parser.add_argument("--network", choices=NETWORKS, default=NETWORKS[0])
    parser.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES))
    parser.add_argument("--one", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # the child process of one configuration
        doc = network_doc(args.network, tuple(float(r) for r in args.rates.split(",")))
        figures = run_config(args.one, doc, args.warmup, args.duration)
        args.out.write_text(json.dumps(figures))
        return
    configs = [c for c in args.configs.split(",") if c]
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"--configs: unknown {unknown}; choose from {sorted(CONFIGS)}")
    rows = []
    for round_ in range(1, args.rounds + 1):
        for config in configs:
            for name, f in measure(config, args).items():
                rows.append(row(round_, config, name, f))
    print(f"{args.network}, local[2], {load_average()}")
    headers = ["round", "configuration", "class", "mean s", "median p95 s", "shed", "periods"]
    print(render_table([*headers, "flagged"], rows))


def row(round_: int, config: str, name: str, f: dict[str, Any]) -> list[str]:
    def sec(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    return [
        str(round_),
        config,
        name,
        sec(f["mean_s"]),
        sec(f["p95_s"]),
        f"{f['shed']:.1%}",
        str(f["periods"]),
        str(f["flagged"]),
    ]


if __name__ == "__main__":
    main()

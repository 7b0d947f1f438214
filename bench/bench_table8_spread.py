"""How much Table 8's class-3 loss moves when the arrival rate moves by a fraction of a
percent: a single run of the thesis's scenario is one point of a sensitive system.

    python -m bench.bench_table8_spread [--jobs 2]

Runs the Table 8 scenarios (QN-A, SD_c, DILoS with and without sharing) with every
stream at 947 … 953 tuples/s (950 is the table's) and prints class 3's loss at each rate,
its mean and its range: compare a controller change on the mean, not on the 950 point.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from spark_runner.control.report import render_table
from spark_runner.scenario import load_scenario
from spark_runner.sim import simulate

ROOT = Path(__file__).resolve().parents[1]

RATES = (947.0, 948.5, 949.5, 950.0, 950.5, 951.5, 953.0)
SCENARIOS = ("qn_a_sdc.yaml", "qn_a_sdc_sharing.yaml")
STREAMS = 3
CLASS = "class3"


def class_loss(case: tuple[str, float]) -> float:
    """Class 3's shed share of its arrivals in ``case`` (scenario file, rate)."""
    name, rate = case
    overrides = [f"streams[{k}].arrival.rate_per_s={rate}" for k in range(STREAMS)]
    scenario = load_scenario(ROOT / "scenarios" / "thesis" / name, overrides)
    totals = simulate(scenario).totals[CLASS]
    return totals.shed / totals.arrived if totals.arrived else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Table 8's class-3 loss across rates")
    parser.add_argument("--jobs", type=int, default=2, help="parallel simulations [2]")
    args = parser.parse_args(argv)
    cases = [(name, rate) for name in SCENARIOS for rate in RATES]
    with ProcessPoolExecutor(args.jobs) as pool:
        losses = dict(zip(cases, pool.map(class_loss, cases), strict=True))
    rows = []
    for name in SCENARIOS:
        xs = [100 * losses[(name, rate)] for rate in RATES]
        mean, spread = f"{sum(xs) / len(xs):.1f}", f"{min(xs):.1f}–{max(xs):.1f}"
        rows.append([name, *(f"{x:.1f}" for x in xs), mean, spread])
    header = ["scenario", *(f"{r:g}/s" for r in RATES), "mean %", "range %"]
    print(f"Table 8: {CLASS}'s loss, % of its arrivals, by every stream's rate")
    print(render_table(header, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

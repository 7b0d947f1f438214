"""How fast the simulator runs: 400 simulated seconds of three classes must take <= 20 s.

    python -m bench.bench_sim_speed [--repeat 1]

Runs the Table 8 scenario (QN-A, SD_c, three classes, 400 s) in every control mode and
the SD_p scenario, and prints wall time, the simulated-to-wall ratio and the cost of one
operator turn. The budget applies per run on this 2-core machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spark_runner.control.report import render_table
from spark_runner.scenario import load_scenario
from spark_runner.sim import simulate

ROOT = Path(__file__).resolve().parents[1]

BUDGET_S = 20.0
CASES = (
    ("qn_a_sdc.yaml", ("control.mode=none",)),
    ("qn_a_sdc.yaml", ("control.mode=common",)),
    ("qn_a_sdc.yaml", ("control.mode=per_class",)),
    ("qn_a_sdc.yaml", ()),
    ("qn_a_sdc_sharing.yaml", ()),
    ("qn_a_sdp.yaml", ()),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="simulator speed")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the best counts")
    args = parser.parse_args(argv)
    rows = []
    worst = 0.0
    for name, overrides in CASES:
        scenario = load_scenario(ROOT / "scenarios" / "thesis" / name, overrides)
        best = float("inf")
        turns = 0
        for _ in range(args.repeat):
            started = time.perf_counter()
            out = simulate(scenario)
            best = min(best, time.perf_counter() - started)
            turns = out.turns
        worst = max(worst, best)
        rows.append(
            [
                name,
                scenario.control.mode,
                f"{len(scenario.classes)}",
                f"{scenario.duration_s:g}",
                f"{best:.2f}",
                f"{scenario.duration_s / best:.0f}x",
                f"{turns:,}",
                f"{1e6 * best / max(turns, 1):.2f}",
                "ok" if best <= BUDGET_S else "OVER",
            ]
        )
    print(
        render_table(
            [
                "scenario",
                "mode",
                "classes",
                "simulated s",
                "wall s",
                "speed",
                "operator turns",
                "us/turn",
                f"<= {BUDGET_S:g} s",
            ],
            rows,
        )
    )
    print(f"slowest: {worst:.2f} s for 400 simulated seconds (budget {BUDGET_S:g} s)")
    return 0 if worst <= BUDGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())

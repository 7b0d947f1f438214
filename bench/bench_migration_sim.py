"""Moving a windowed query between two simulated jobs: window recreation (UniMiCo) against
state transfer (StreamCloud's state recreation), each against the uninterrupted run.

    python -m bench.bench_migration_sim

1. The thesis's experiment (001 §7.3.2): Q1, a 10 s window join of S and T on a key;
   Q2, a 5 s window sum; Q3, a sum over Q1's pairs; each moved at t = 10 s (slide 1 s:
   our windows are time-based, the thesis's Q2 and Q3 count rows). Per query and mode:
   results missing, duplicated and wrong against the run without migration, and the
   response time of the results whose window ends within 2 s of the hand-off (its
   span: from the command to the origin's last window) with and without it.
2. StreamCloud's figure 19 (002 §VI): a window sum at 1, 5 and 10 s windows over 1,000
   to 50,000 keys: completion time and bytes moved per mode, and which one the choice
   rule (:func:`~spark_runner.core.migration.prefer_state_transfer`) takes.

The model (:mod:`spark_runner.sim.migration`) is tuple by tuple in simulated time; its
state-transfer costs (bandwidth, entry sizes, the start-up batch) are assumptions its
``Jobs`` names, not Spark measurements of a transfer.
"""

from __future__ import annotations

import argparse

import numpy as np

from bench.common import print_table
from spark_runner.core.migration import prefer_state_transfer
from spark_runner.sim.migration import Jobs, Mode, Query, Workload, migrate

MODES: tuple[Mode, ...] = ("window_recreation", "state_transfer")
COMMAND_MS = 10_300
SLACK_S = 8.0  # the moved class's slack in the choice rule
THESIS = {
    "Q1 join 10 s": (Query("join", 10_000, 1_000), Workload(200, 50, 40)),
    "Q2 sum 5 s": (Query("aggregate", 5_000, 1_000), Workload(1_000, 50, 40)),
    "Q3 sum of join 10 s": (Query("join_aggregate", 10_000, 1_000), Workload(200, 50, 40)),
}


def _spread(values: np.ndarray) -> str:
    return f"{values.mean():.3f} ± {values.std():.3f}"


def thesis_rows(jobs: Jobs) -> list[list[object]]:
    rows: list[list[object]] = []
    for name, (query, workload) in THESIS.items():
        for mode in MODES:
            out = migrate(workload, query, jobs, COMMAND_MS, mode)
            near, near_ref = out.near_handoff(2.0)
            rows.append(
                [
                    name,
                    mode,
                    out.results,
                    out.missing,
                    out.duplicated,
                    out.wrong,
                    out.read_twice,
                    _spread(out.rt_uninterrupted_s[near_ref]),
                    _spread(out.rt_s[near]),
                    out.completion_s,
                ]
            )
    return rows


def streamcloud_rows(jobs: Jobs, keys: list[int]) -> list[list[object]]:
    """Two tuples per key and window on average: the state holds about ``keys`` windows
    per slide of the window."""
    rows: list[list[object]] = []
    for window_s in (1, 5, 10):
        for k in keys:
            query = Query("aggregate", window_s * 1_000, 1_000)
            workload = Workload(2.0 * k / window_s, k, COMMAND_MS / 1000 + window_s + 2)
            wr = migrate(workload, query, jobs, COMMAND_MS, "window_recreation")
            st = migrate(workload, query, jobs, COMMAND_MS, "state_transfer")
            transfer = prefer_state_transfer(window_s, st.completion_s, SLACK_S)
            rows.append(
                [
                    window_s,
                    k,
                    wr.completion_s,
                    wr.bytes_moved,
                    st.completion_s,
                    st.bytes_moved,
                    wr.missing + wr.duplicated + wr.wrong,
                    st.missing + st.duplicated + st.wrong,
                    "transfer" if transfer else "recreate",
                ]
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="query migration in the simulator")
    parser.add_argument("--keys", default="1000,10000,50000", help="key counts, comma-separated")
    args = parser.parse_args(argv)
    jobs = Jobs()
    print_table(
        f"The thesis's migration experiment (7.3.2): moved at {COMMAND_MS / 1000:g} s; "
        "response times of the results ending within 2 s of the hand-off, s",
        ["query", "mode", "results", "missing", "dup", "wrong", "read twice",
         "rt without", "rt with", "completion s"],
        thesis_rows(jobs),
    )  # fmt: skip
    print_table(
        f"StreamCloud's figure 19: a window sum moved at 10.3 s, jobs at 10 µs a tuple; "
        f"the rule's choice at {SLACK_S:g} s slack",
        ["window s", "keys", "WR s", "WR bytes", "ST s", "ST bytes", "WR errors", "ST errors",
         "choice"],
        streamcloud_rows(Jobs(cost_per_tuple_s=1e-5), [int(k) for k in args.keys.split(",")]),
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

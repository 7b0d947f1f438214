"""Reproduce the thesis's tables (001 ch. 4–6) in the simulator, our numbers beside theirs.

    python -m bench.bench_thesis_tables [--jobs 2] [--only table8] [--strict]

Every table runs the scenarios under ``scenarios/thesis/`` (variants by ``--set``-style
overrides), prints our numbers next to the thesis's, and checks the outcome the issue asks
for (PASS/FAIL). Absolute numbers differ — the thesis measured AQSIOS on its hardware and
the LBL trace; we simulate a smaller engine on a generated trace — the *effects* are what
must match. ``--strict`` exits with 1 when an outcome fails.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from spark_runner.control.report import render_table
from spark_runner.scenario import load_scenario
from spark_runner.sim import run_scenario

ROOT = Path(__file__).resolve().parents[1]

THESIS = ROOT / "scenarios" / "thesis"
Run = tuple[str, tuple[str, ...]]  # (scenario file name, overrides)


def simulate(run: Run) -> dict[str, Any]:
    name, overrides = run
    return run_scenario(load_scenario(THESIS / name, overrides))


class Runner:
    """Runs scenario variants once each (in parallel), memoised."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.cache: dict[Run, dict[str, Any]] = {}
        self.runs = 0

    def run_all(self, runs: Sequence[Run]) -> list[dict[str, Any]]:
        todo = list(dict.fromkeys(r for r in runs if r not in self.cache))
        if todo:
            self.runs += len(todo)
            if self.jobs > 1 and len(todo) > 1:
                with ProcessPoolExecutor(max_workers=self.jobs) as pool:
                    for run, result in zip(todo, pool.map(simulate, todo), strict=True):
                        self.cache[run] = result
            else:
                for run in todo:
                    self.cache[run] = simulate(run)
        return [self.cache[r] for r in runs]

    def run(self, name: str, *overrides: str) -> dict[str, Any]:
        return self.run_all([(name, tuple(overrides))])[0]


@dataclass
class Outcome:
    table: str
    claim: str
    ok: bool
    detail: str


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def check(self, table: str, claim: str, ok: bool, detail: str) -> None:
        self.outcomes.append(Outcome(table, claim, ok, detail))
        print(f"  [{'PASS' if ok else 'FAIL'}] {claim} — {detail}")


# --- helpers ------------------------------------------------------------------------------


def manager(kind: str, **params: float) -> tuple[str, str]:
    body = ", ".join(f"{k}: {v}" for k, v in {"max_shed": 0.99, **params}.items())
    return ("classes[0].manager.kind=" + kind, "classes[0].manager.params={" + body + "}")


def cls(results: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    classes = results["classes"]
    return classes[name] if name else next(iter(classes.values()))


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def sec(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def ms(x: float | None) -> str:
    return "-" if x is None else f"{1000 * x:.1f}"


def series_of(results: dict[str, Any], field_name: str, name: str | None = None) -> list[float]:
    key = name or next(iter(results["classes"]))
    return [
        v if (v := s["classes"][key][field_name]) is not None else math.nan
        for s in results["series"]
    ]


def window_mean(values: Sequence[float], times: Sequence[float], t0: float, t1: float) -> float:
    picked = [v for v, t in zip(values, times, strict=True) if t0 <= t < t1 and not math.isnan(v)]
    return sum(picked) / len(picked) if picked else math.nan


def times_of(results: dict[str, Any]) -> list[float]:
    return [s["t_s"] for s in results["series"]]


# --- CTRL's hand tuning (001 §4.3.1) ------------------------------------------------------


def tune_ctrl(runner: Runner) -> tuple[float, list[tuple[float, float, float]]]:
    """The thesis's method: run CTRL with several H on QN-flat/S_c and keep the H whose
    estimated delay (Eq. 3.3) best matches the measured response time in overload."""
    coarse = [round(0.80 + 0.02 * i, 2) for i in range(16)]

    def gaps(hs: Sequence[float]) -> list[tuple[float, float, float]]:
        results = runner.run_all([("qn_flat_sc.yaml", manager("ctrl", headroom=h)) for h in hs])
        out = []
        for h, r in zip(hs, results, strict=True):
            t = times_of(r)
            est = window_mean(series_of(r, "estimated_delay_s"), t, 50, 400)
            real = window_mean(series_of(r, "mean_response_time_s"), t, 50, 400)
            out.append((h, est, real))
        return out

    table = gaps(coarse)
    best = min(table, key=lambda row: abs(row[1] - row[2]))[0]
    fine = [round(best + 0.01 * d, 2) for d in (-1, 1)]
    table += gaps(fine)
    best = min(table, key=lambda row: abs(row[1] - row[2]))[0]
    return best, sorted(table)


# --- the tables ---------------------------------------------------------------------------


def table1(runner: Runner, report: Report) -> None:
    print("\nTable 1 — Aurora, headroom sweep, QN-flat, S_c (D = 2 s)")
    hs = [0.89, 0.94, 0.99, 1.04]
    thesis = {0.89: (0.00, 45.44), 0.94: (0.00, 41.89), 0.99: (4.60, 38.80), 1.04: (17.48, 36.90)}
    results = runner.run_all([("qn_flat_sc.yaml", manager("aurora", headroom=h)) for h in hs])
    rows, growth = [], {}
    for h, r in zip(hs, results, strict=True):
        c = cls(r)
        t = times_of(r)
        rt = series_of(r, "max_response_time_s")
        mid = window_mean(rt, t, 150, 200)
        last = window_mean(rt, t, 350, 400)
        growth[h] = (mid, last)
        rows.append(
            [
                f"{h:.2f}",
                sec(thesis[h][0]),
                f"{thesis[h][1]:.2f}",
                sec(c["mean_violation_s"]),
                pct(c["loss_fraction"]),
                sec(mid),
                sec(last),
            ]
        )
    print(
        render_table(
            [
                "H",
                "thesis viol s",
                "thesis loss %",
                "viol s",
                "loss %",
                "rt@150-200s",
                "rt@350-400s",
            ],
            rows,
            "  ",
        )
    )
    losses = [cls(r)["loss_fraction"] for r in results]
    viols = [cls(r)["mean_violation_s"] for r in results]
    report.check(
        "Table 1",
        "higher H -> less loss",
        all(a > b for a, b in pairwise(losses)),
        "loss % " + " > ".join(pct(x) for x in losses),
    )
    report.check(
        "Table 1",
        "higher H -> more violation",
        all(a <= b + 1e-9 for a, b in pairwise(viols)),
        "violation s " + " <= ".join(sec(x) for x in viols),
    )
    unbounded = [h for h in hs if growth[h][1] > 1.5 * growth[h][0] and growth[h][1] > 4.0]
    bounded = [h for h in hs if h not in unbounded]
    report.check(
        "Table 1",
        "past the true capacity, violation grows without bound",
        bool(unbounded)
        and all(h > max(bounded, default=0) for h in unbounded)
        and all(
            cls(r)["mean_violation_s"] < 0.05
            for h, r in zip(hs, results, strict=True)
            if h in bounded
        ),
        f"response time still rising at the end for H in {unbounded}; bounded for {bounded}",
    )


def table2(runner: Runner, report: Report, tuned: float) -> None:
    print(f"\nTable 2 — CTRL, headroom around the hand-tuned H = {tuned:.2f}, QN-flat, S_c")
    factors = [
        ("20% lower", 0.8),
        ("5% lower", 0.95),
        ("correct", 1.0),
        ("5% higher", 1.05),
        ("20% higher", 1.2),
    ]
    thesis = {
        "20% lower": (0.00, 40.11),
        "5% lower": (0.00, 40.03),
        "correct": (0.00, 39.99),
        "5% higher": (0.03, 39.96),
        "20% higher": (0.47, 39.91),
    }
    results = runner.run_all(
        [("qn_flat_sc.yaml", manager("ctrl", headroom=round(tuned * f, 4))) for _, f in factors]
    )
    rows = []
    for (label, f), r in zip(factors, results, strict=True):
        c = cls(r)
        rows.append(
            [
                label,
                f"{tuned * f:.3f}",
                sec(thesis[label][0]),
                f"{thesis[label][1]:.2f}",
                sec(c["mean_violation_s"], 3),
                pct(c["loss_fraction"]),
            ]
        )
    print(
        render_table(
            ["H", "value", "thesis viol s", "thesis loss %", "viol s", "loss %"], rows, "  "
        )
    )
    losses = [cls(r)["loss_fraction"] for r in results]
    viols = [cls(r)["mean_violation_s"] for r in results]
    report.check(
        "Table 2",
        "CTRL's loss barely depends on H (spread <= 1 pp)",
        max(losses) - min(losses) <= 0.01,
        f"spread {100 * (max(losses) - min(losses)):.2f} pp",
    )
    report.check(
        "Table 2",
        "CTRL's violation grows with H above the tuned value",
        all(a <= b + 1e-9 for a, b in pairwise(viols)) and viols[-1] > viols[2],
        "violation s " + " <= ".join(sec(x, 3) for x in viols),
    )


def table4(runner: Runner, report: Report, tuned: float) -> None:
    print(f"\nTable 4 — ALoMa (no tuning) vs CTRL (H = {tuned:.2f}), QN-flat, S_r (D = 2 s)")
    aloma, ctrl = runner.run_all(
        [
            ("qn_flat_sr.yaml", ()),
            ("qn_flat_sr.yaml", manager("ctrl", headroom=tuned)),
        ]
    )
    thesis = {"ALoMa": (0.05, 0.62, 21.36), "CTRL": (0.01, 0.35, 21.41)}
    rows = []
    for label, r in (("ALoMa", aloma), ("CTRL", ctrl)):
        c = cls(r)
        th = thesis[label]
        rows.append(
            [
                label,
                sec(th[0]),
                sec(th[1]),
                f"{th[2]:.2f}",
                sec(c["mean_violation_s"], 3),
                sec(c["max_violation_s"]),
                pct(c["loss_fraction"]),
            ]
        )
    print(
        render_table(
            [
                "",
                "thesis avg viol s",
                "thesis max viol s",
                "thesis loss %",
                "avg viol s",
                "max viol s",
                "loss %",
            ],
            rows,
            "  ",
        )
    )
    a, c = cls(aloma), cls(ctrl)
    gap = abs(a["loss_fraction"] - c["loss_fraction"])
    report.check(
        "Table 4",
        "ALoMa and hand-tuned CTRL within 1 pp of loss",
        gap <= 0.01,
        f"{pct(a['loss_fraction'])} % vs {pct(c['loss_fraction'])} % ({100 * gap:.2f} pp)",
    )
    report.check(
        "Table 4",
        "ALoMa's mean violation <= 5 % of D",
        a["mean_violation_s"] <= 0.05 * a["delay_target_s"],
        f"{a['mean_violation_s']:.3f} s = "
        f"{100 * a['mean_violation_s'] / a['delay_target_s']:.1f} % of {a['delay_target_s']:g} s",
    )


def recovery_periods(results: dict[str, Any], change_s: float) -> tuple[int | None, float]:
    """Periods from ``change_s`` until the per-period max response time is back at or below
    D after exceeding it (0 if it never exceeded; None if it never came back)."""
    target = cls(results)["delay_target_s"]
    t = times_of(results)
    rt = series_of(results, "max_response_time_s")
    after = [(ti, v) for ti, v in zip(t, rt, strict=True) if ti > change_s and not math.isnan(v)]
    peak = max((v for _, v in after), default=0.0)
    exceeded = False
    for i, (_, v) in enumerate(after):
        if v > target:
            exceeded = True
        elif exceeded:
            return i, peak
    return (None if exceeded else 0), peak


def background(runner: Runner, report: Report, tuned: float) -> None:
    print(
        f"\n§5.3.2.2 — background job takes half the processor at 100 s, QN-flat, S_c "
        f"(CTRL H = {tuned:.2f})"
    )
    aloma, ctrl = runner.run_all(
        [
            ("qn_flat_background.yaml", ()),
            ("qn_flat_background.yaml", manager("ctrl", headroom=tuned)),
        ]
    )
    rows = []
    recov: dict[str, tuple[int | None, float]] = {}
    late: dict[str, float] = {}
    for label, r in (("ALoMa", aloma), ("CTRL", ctrl)):
        c = cls(r)
        t = times_of(r)
        recov[label] = recovery_periods(r, 100.0)
        late[label] = window_mean(series_of(r, "max_response_time_s"), t, 150, 400)
        pre = window_mean(series_of(r, "max_response_time_s"), t, 30, 100)
        periods, peak = recov[label]
        rows.append(
            [
                label,
                pct(c["loss_fraction"]),
                sec(pre),
                sec(peak),
                "never" if periods is None else str(periods),
                sec(late[label]),
                sec(c["mean_violation_s"], 3),
            ]
        )
    print(
        render_table(
            [
                "",
                "loss %",
                "rt before s",
                "peak rt after s",
                "periods back to D",
                "rt 150-400 s",
                "avg viol s",
            ],
            rows,
            "  ",
        )
    )
    print(
        "  thesis: ALoMa re-learns H within seconds and holds D; CTRL overshoots to about 2 x D;"
        " loss 62.98 % (ALoMa) vs 62.69 % (CTRL)"
    )
    periods = recov["ALoMa"][0]
    report.check(
        "§5.3.2.2",
        "ALoMa meets the target again within 10 control periods",
        periods is not None and periods <= 10,
        f"{'never' if periods is None else periods} periods (peak {recov['ALoMa'][1]:.2f} s)",
    )
    target = cls(ctrl)["delay_target_s"]
    report.check(
        "§5.3.2.2",
        "CTRL with its fixed H keeps violating",
        late["CTRL"] > 1.2 * target,
        f"CTRL's per-period max response time over 150-400 s averages {late['CTRL']:.2f} s"
        f" (D = {target:g} s)",
    )


def table5(runner: Runner, report: Report) -> None:
    print("\nTable 5 — QN-complex (shared operators), S_r (D = 2 s)")
    hs = [0.86, 0.88, 0.90, 0.92, 0.94]
    variants = [
        ("with processor stalls (scenario as shipped)", ()),
        ("without stalls (engine.stall_rate_per_s=0)", ("engine.stall_rate_per_s=0",)),
    ]
    thesis_rows = [
        ["ALoMa", "auto", "0.75", "0.06", "32.41"],
        ["CTRL", "0.99", "41.10", "23.33", "0.00"],
        ["Aurora", "0.92", "1.16", "0.09", "37.59"],
        ["Aurora", "0.93", "1.80", "0.19", "36.82"],
    ]
    print(render_table(["thesis", "H", "max viol s", "avg viol s", "loss %"], thesis_rows, "  "))
    for vi, (label, extra) in enumerate(variants):
        runs: list[Run] = [
            ("qn_complex_sr.yaml", extra),
            ("qn_complex_sr.yaml", (*extra, *manager("ctrl", headroom=0.99))),
        ]
        runs += [("qn_complex_sr.yaml", (*extra, *manager("aurora", headroom=h))) for h in hs]
        results = runner.run_all(runs)
        aloma, ctrl, auroras = results[0], results[1], results[2:]
        rows = [
            [
                "ALoMa",
                "auto",
                sec(cls(aloma)["max_violation_s"]),
                sec(cls(aloma)["mean_violation_s"], 3),
                pct(cls(aloma)["loss_fraction"]),
            ],
            [
                "CTRL",
                "0.99",
                sec(cls(ctrl)["max_violation_s"]),
                sec(cls(ctrl)["mean_violation_s"], 3),
                pct(cls(ctrl)["loss_fraction"]),
            ],
        ]
        rows += [
            [
                "Aurora",
                f"{h:.2f}",
                sec(cls(r)["max_violation_s"]),
                sec(cls(r)["mean_violation_s"], 3),
                pct(cls(r)["loss_fraction"]),
            ]
            for h, r in zip(hs, auroras, strict=True)
        ]
        print(f"  ours, {label}:")
        print(render_table(["", "H", "max viol s", "avg viol s", "loss %"], rows, "    "))
        if vi > 0:
            a = cls(aloma)
            same = [
                (h, cls(r))
                for h, r in zip(hs, auroras, strict=True)
                if cls(r)["mean_violation_s"] <= a["mean_violation_s"]
            ]
            beaten = [h for h, c in same if c["loss_fraction"] <= a["loss_fraction"]]
            print(
                f"  (sensitivity, not checked) without stalls, Aurora H in {beaten} reaches "
                f"ALoMa's violation with no more loss"
            )
            continue
        a, c = cls(aloma), cls(ctrl)
        report.check(
            "Table 5",
            "CTRL fails to control delay (sheds ~nothing, violation >> D)",
            c["mean_violation_s"] > c["delay_target_s"] and c["loss_fraction"] < 0.02,
            f"avg violation {c['mean_violation_s']:.2f} s, loss {pct(c['loss_fraction'])} %",
        )
        report.check(
            "Table 5",
            "ALoMa's mean violation <= 5 % of D",
            a["mean_violation_s"] <= 0.05 * a["delay_target_s"],
            f"{a['mean_violation_s']:.3f} s",
        )
        same = [
            (h, cls(r))
            for h, r in zip(hs, auroras, strict=True)
            if cls(r)["mean_violation_s"] <= a["mean_violation_s"]
        ]
        report.check(
            "Table 5",
            "ALoMa loses less than any Aurora H that reaches its violation",
            bool(same) and all(cc["loss_fraction"] > a["loss_fraction"] for _, cc in same),
            "Aurora H with violation <= ALoMa's: "
            + (", ".join(f"{h:.2f} ({pct(cc['loss_fraction'])} %)" for h, cc in same) or "none")
            + f"; ALoMa {pct(a['loss_fraction'])} %",
        )


def table6(runner: Runner, report: Report) -> None:
    print(
        "\nTable 6 — one manager under a weighted round-robin scheduler (priorities 3 and 2), "
        "QN-complex, S_c (D = 2 s)"
    )
    aloma, seamless = runner.run_all(
        [
            ("qn_complex_wrr_sc.yaml", ()),
            ("qn_complex_wrr_sc.yaml", ("control.common_manager.kind=seamless",)),
        ]
    )
    thesis = {"ALoMa": (0.16, 0.0, 33.92), "SEaMLeSS": (2.12, 0.0, 32.80)}
    rows = []
    for label, r in (("ALoMa", aloma), ("SEaMLeSS", seamless)):
        th = thesis[label]
        rows.append(
            [
                label,
                sec(th[0]),
                sec(th[1]),
                f"{th[2]:.2f}",
                sec(cls(r, "low")["mean_violation_s"], 3),
                sec(cls(r, "high")["mean_violation_s"], 3),
                pct(cls(r, "low")["loss_fraction"]),
            ]
        )
    print(
        render_table(
            [
                "",
                "thesis viol low s",
                "thesis viol high s",
                "thesis loss %",
                "viol low s",
                "viol high s",
                "loss %",
            ],
            rows,
            "  ",
        )
    )
    s_low, a_low = cls(seamless, "low"), cls(aloma, "low")
    d = s_low["delay_target_s"]
    report.check(
        "Table 6",
        "SEaMLeSS violates the low class's target",
        s_low["mean_violation_s"] > 0.25 * d,
        f"avg violation {s_low['mean_violation_s']:.2f} s (D = {d:g} s)",
    )
    report.check(
        "Table 6",
        "ALoMa does not (avg violation <= 10 % of D)",
        a_low["mean_violation_s"] <= 0.10 * d,
        f"avg violation {a_low['mean_violation_s']:.3f} s",
    )


T8_THESIS = {
    "none": ((5.25, 7.22, 117132.74), (0, 0, 0)),
    "common": ((4.01, 4.74, 513.71), (42.19, 42.15, 42.24)),
    "per_class": ((4.91, 7.21, 492.16), (0, 0, 85.37)),
    "dilos": ((8.90, 34.18, 487.04), (0, 0, 24.43)),
    "dilos+sharing": ((9.05, 36.54, 482.53), (0, 0, 14.70)),
}


def class_rows(
    label: str, r: dict[str, Any], thesis: tuple[tuple[float, ...], tuple[float, ...]]
) -> list[str]:
    names = list(r["classes"])
    rts = [ms(cls(r, n)["mean_response_time_s"]) for n in names]
    losses = [pct(cls(r, n)["loss_fraction"]) for n in names]
    return [
        label,
        " / ".join(f"{x:g}" for x in thesis[0]),
        " / ".join(rts),
        " / ".join(f"{x:g}" for x in thesis[1]),
        " / ".join(losses),
    ]


def table8(runner: Runner, report: Report) -> None:
    print("\nTable 8 — QN-A, SD_c: three classes (priorities 6/3/1, targets 300/400/500 ms)")
    configs: list[tuple[str, Run]] = [
        ("none", ("qn_a_sdc.yaml", ("control.mode=none",))),
        ("common", ("qn_a_sdc.yaml", ("control.mode=common",))),
        ("per_class", ("qn_a_sdc.yaml", ("control.mode=per_class",))),
        ("dilos", ("qn_a_sdc.yaml", ())),
        ("dilos+sharing", ("qn_a_sdc_sharing.yaml", ())),
    ]
    results = dict(
        zip([c for c, _ in configs], runner.run_all([r for _, r in configs]), strict=True)
    )
    rows = [class_rows(label, results[label], T8_THESIS[label]) for label, _ in configs]
    print(
        render_table(
            [
                "configuration",
                "thesis rt ms c1/c2/c3",
                "rt ms c1/c2/c3",
                "thesis loss % c1/c2/c3",
                "loss % c1/c2/c3",
            ],
            rows,
            "  ",
        )
    )
    names = list(results["dilos"]["classes"])
    c1, c2, c3 = names

    def loss(cfg: str, n: str) -> float:
        return float(cls(results[cfg], n)["loss_fraction"])

    none3 = cls(results["none"], c3)
    report.check(
        "Table 8",
        "no manager: class 3's response time is unbounded",
        none3["backlog_age_s"] > 20 * none3["delay_target_s"]
        and none3["max_response_time_s"] > 20 * none3["delay_target_s"],
        f"max {none3['max_response_time_s']:.1f} s, oldest queued tuple "
        f"{none3['backlog_age_s']:.1f} s old at the end",
    )
    common = [loss("common", n) for n in names]
    report.check(
        "Table 8",
        "common manager: equal loss across classes",
        max(common) - min(common) <= 0.005 and min(common) > 0,
        " / ".join(pct(x) for x in common) + " %",
    )
    report.check(
        "Table 8",
        "one ALoMa per class: only class 3 sheds",
        loss("per_class", c1) <= 0.005
        and loss("per_class", c2) <= 0.005
        and loss("per_class", c3) > 0.05,
        " / ".join(pct(loss("per_class", n)) for n in names) + " %",
    )
    report.check(
        "Table 8",
        "DILoS: class 3 loss at most half of per-class ALoMa's",
        loss("dilos", c3) <= 0.5 * loss("per_class", c3),
        f"{pct(loss('dilos', c3))} % vs {pct(loss('per_class', c3))} %",
    )
    report.check(
        "Table 8",
        "DILoS: classes 1 and 2 lose <= 0.5 %",
        loss("dilos", c1) <= 0.005 and loss("dilos", c2) <= 0.005,
        f"{pct(loss('dilos', c1))} % / {pct(loss('dilos', c2))} %",
    )
    report.check(
        "Table 8",
        "DILoS with sharing: class 3 loss lower still",
        loss("dilos+sharing", c3) < loss("dilos", c3),
        f"{pct(loss('dilos+sharing', c3))} % < {pct(loss('dilos', c3))} %",
    )
    within = []
    for cfg in ("dilos", "dilos+sharing"):
        for n in names:
            c = cls(results[cfg], n)
            within.append(
                (
                    cfg,
                    n,
                    c["mean_violation_s"] <= 0.05 * c["delay_target_s"],
                    c["mean_response_time_s"] <= c["delay_target_s"],
                )
            )
    report.check(
        "Table 8",
        "DILoS (both): every class within its target (mean rt <= D, mean violation <= 5 % of D)",
        all(ok and rt_ok for *_, ok, rt_ok in within),
        "; ".join(
            f"{cfg} {n}: viol {cls(results[cfg], n)['mean_violation_s']:.4f} s"
            for cfg, n, *_ in within
            if n == c3
        ),
    )


T9_THESIS = {
    "no synergy": ((5.30, 15.13, 176.37), (0, 0, 8.53)),
    "DILoS": ((6.47, 43.98, 84.21), (0, 0.23, 2.30)),
    "DILoS+sharing": ((5.94, 38.04, 72.73), (0, 0.16, 1.42)),
}


def table9_10(runner: Runner, report: Report) -> None:
    print(
        "\nTables 9–10 — QN-A, SD_p (Pareto rates per period; class 1's range changes every 50 s)"
    )
    configs: list[tuple[str, Run]] = [
        ("no synergy", ("qn_a_sdp.yaml", ("control.mode=per_class",))),
        ("DILoS", ("qn_a_sdp.yaml", ())),
        ("DILoS+sharing", ("qn_a_sdp_sharing.yaml", ())),
    ]
    results = dict(
        zip([c for c, _ in configs], runner.run_all([r for _, r in configs]), strict=True)
    )
    rows = [class_rows(label, results[label], T9_THESIS[label]) for label, _ in configs]
    print(
        render_table(
            [
                "configuration",
                "thesis rt ms c1/c2/c3",
                "rt ms c1/c2/c3",
                "thesis loss % c1/c2/c3",
                "loss % c1/c2/c3",
            ],
            rows,
            "  ",
        )
    )
    names = list(results["DILoS"]["classes"])
    c3 = names[-1]
    base = cls(results["no synergy"], c3)["loss_fraction"]
    for cfg in ("DILoS", "DILoS+sharing"):
        ours = cls(results[cfg], c3)["loss_fraction"]
        report.check(
            "Tables 9-10",
            f"{cfg} reduces class 3 loss against no synergy",
            ours < base,
            f"{pct(ours)} % < {pct(base)} %",
        )
    ordered = []
    for cfg, r in results.items():
        losses = [cls(r, n)["loss_fraction"] for n in names]
        rts = [cls(r, n)["mean_response_time_s"] for n in names]
        ok = all(a <= b + 0.001 for a, b in pairwise(losses)) and all(
            a <= b for a, b in pairwise(rts)
        )
        ordered.append((cfg, ok))
    report.check(
        "Tables 9-10",
        "higher classes keep better QoS (rt) and QoD (loss)",
        all(ok for _, ok in ordered),
        ", ".join(f"{cfg}: {'ordered' if ok else 'NOT ordered'}" for cfg, ok in ordered),
    )


# --- main ---------------------------------------------------------------------------------

TABLES: dict[str, Callable[[Runner, Report, float], None]] = {
    "table1": lambda r, rep, h: table1(r, rep),
    "table2": table2,
    "table4": table4,
    "background": background,
    "table5": lambda r, rep, h: table5(r, rep),
    "table6": lambda r, rep, h: table6(r, rep),
    "table8": lambda r, rep, h: table8(r, rep),
    "table9_10": lambda r, rep, h: table9_10(r, rep),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="parallel simulations [2]")
    parser.add_argument(
        "--only", action="append", choices=sorted(TABLES), help="run only these tables (repeatable)"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 if an outcome fails")
    args = parser.parse_args(argv)
    runner = Runner(args.jobs)
    report = Report()
    started = time.perf_counter()
    selected = args.only or list(TABLES)
    tuned = 0.95
    if any(t in selected for t in ("table2", "table4", "background")):
        tuned, gaps = tune_ctrl(runner)
        print(
            "CTRL hand tuning (001 §4.3.1): QN-flat/S_c, mean estimated vs measured delay, 50-400 s"
        )
        print(
            render_table(
                ["H", "estimated s", "measured s"],
                [[f"{h:.2f}", sec(e), sec(m)] for h, e, m in gaps],
                "  ",
            )
        )
        print(f"  -> tuned H = {tuned:.2f}")
    for name in selected:
        TABLES[name](runner, report, tuned)
    wall = time.perf_counter() - started
    failed = [o for o in report.outcomes if not o.ok]
    print(
        f"\nSummary: {len(report.outcomes) - len(failed)}/{len(report.outcomes)} outcomes "
        f"reproduced; {runner.runs} simulations in {wall:.0f} s wall time"
    )
    for o in failed:
        print(f"  NOT reproduced: {o.table}: {o.claim} ({o.detail})")
    return 1 if (failed and args.strict) else 0


if __name__ == "__main__":
    raise SystemExit(main())

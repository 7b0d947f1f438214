"""Response time of plain Spark Structured Streaming against headroom: the same queries
over the same input rows, side by side in one run.

    python -m bench.bench_spark_latency [--workload trades] [--rate 4000] [--duration 60]
        [--warmup 30] [--rounds 2] [--only plain,headroom,overload,plain-overload]
        [--capacity 0] [--high 120000] [--steps 4] [--probe-duration 30]

The workloads (:mod:`bench.latency_workload`). ``trades`` (the default): one stream
``trades`` of CSV files written every 0.25 s at ``--rate`` rows/s (``account`` uniform
over 0..999, ``amount`` uniform in [0, 1), ``ts`` the instant the file was written, which
is also its modification time),
and three classes, one Spark SQL query each: ``fraud`` (priority 6, target 1.5 s: a 5 s
window per account of the trades over 0.9), ``recs`` (3, 2 s: a 10 s window mean per
account), ``ads`` (1, 3 s: a 10 s window sum). ``windows-joins``: the overload benchmark's
network (three streams at 0.35 / 0.45 / 0.70 of 1.5 × ``--rate``; per class a filter, a
200 µs calibrated map and a 2 s window count, and a join of a tenth of its stream with the
whole stream within 1 s; targets 1.5 / 2 / 3 s). Each configuration runs in its own
process (its own JVM) on a fresh directory fed the same way; each query reads its class's
stream through its own file source on both sides. Configurations, interleaved round by
round (with ``--rounds 2``: A B A B):

- ``plain`` — ``plain Spark`` (:mod:`bench.plain_latency`): what a user would write: one
  application, a query per statement through ``spark.sql`` (``windows-joins``: six), each
  to the ``noop`` sink on the default trigger (batches back to back), the RocksDB state
  store;
- ``headroom`` — ``headroom run --source files`` of the same classes (DILoS, the
  controller on; nothing should be shed at this load);
- ``overload`` — ``headroom 1.5x capacity``: the same at 1.5 × the *capacity*, plain
  Spark's highest sustainable rate on this workload, bisected at the start of the run
  between ``--rate`` and ``--high`` (a probe sustains a rate when every query reads at
  least 95 % of its stream's rate and its mean response in the second half of the probe is at most
  1.25× the first half's; ``--capacity`` gives it instead); after the table, issue 43's
  bars for it: the top class within its target in every round (mean violation at most
  5 % of it) and its mean against plain Spark's unloaded one (1.2), means ordered by
  priority, total admitted against the capacity (0.9);
- ``plain-overload`` — ``plain Spark 1.5x capacity``: plain Spark at that rate, which
  lets every class's latency grow;
- ``tier`` and ``overload-tier`` (not run by default) — ``headroom`` and ``overload``
  with a streaming query per priority tier (``headroom run --queries tier``);
- ``plain-fs`` (not run by default) — plain Spark writing its offset and commit logs
  through headroom job's checkpoint file manager, to tell that setting's share from the
  rest of the difference;
- ``plain-one`` (not run by default) — the same, the three queries unioned into one
  query: headroom's engine runs every class in one query, this tells what that costs.

Response time of an input row = the commit instant of the batch that read it (the
batch's start + ``triggerExecution``) − the row's arrival (its ``ts``, equal to its
file's modification time, which headroom's files source takes as the arrival). Plain
Spark measures it per batch and query with an ``observe`` on the query's input (count,
sum, min, max and 50 quantiles of ``ts``) read from the progress; headroom measures it
the same way inside its engine (``docs/spark-runner.md``). Both sides merge the batches
alike (:class:`spark_runner.engine.measure.digest.RunDigest`): the mean (weighted by rows) and
max are exact, p95 comes from the merged quantiles binned in the simulator's log
histogram (about 12 % resolution, each bin's geometric centre). Batches that started in
the first ``--warmup`` seconds are left out on both sides (headroom's ``--warmup``, which
also discards what waits at its end). The table shows each round's mean and p95, the
spread of the means over the rounds, the max over the rounds, the tuples shed, the
measured batches and the ratios headroom / plain of the mean and p95 (mean over rounds).
A second table gives the cores each configuration's Spark processes (driver, JVM, Python
workers; not the feeder) used over the measured time, the rows a second its classes took
and the CPU per row taken: on a machine both sides keep busy, what one side can take of
what the other does is the inverse ratio of that cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.bench_spark_common import (
    ROOT,
    WITHIN_TARGET,
    RunFailed,
    load_average,
    render_table,
    run_spark,
)
from bench.cpu_meter import TreeCpu
from bench.latency_workload import WORKLOADS, Workload
from spark_runner.engine.measure.digest import RunDigest
from spark_runner.engine.measure.measures import ArrivalSummary, ResponseSample

OVERLOAD = 1.5
PLAIN_START_TIMEOUT_S = 300.0


@dataclass
class ClassResult:
    mean_s: float | None
    p95_s: float | None
    max_s: float | None
    shed: int
    batches: int
    rows: int
    """Rows of its stream it took: headroom's admitted (arrived, not shed nor waiting at
    the end), plain Spark's first query's read."""
    violation_s: float | None = None
    """Mean violation: the mean of max(0, response − target) over its answers, s."""
    read_share: float | None = None
    """Plain Spark: the least share of its stream's rate one of its queries read over the
    measured batches."""
    growth: float | None = None
    """Plain Spark: the most one of its queries' last half's mean response grew over its
    first half's."""


@dataclass
class RunResult:
    classes: dict[str, ClassResult]
    notes: list[str] = field(default_factory=list)
    """Where the time went (batch durations), one line each."""
    cores: float | None = None
    """The cores its Spark process tree used over the measured time (not the feeder's)."""
    rows_per_s: float | None = None
    """Rows a second its classes took (the sum of :attr:`ClassResult.rows`)."""


Run = Callable[[argparse.Namespace, float, Path], RunResult]


@dataclass(frozen=True)
class Config:
    key: str
    label: str
    rate_factor: float
    """Its rate: this many times ``--rate``, or of the capacity with ``of_capacity``."""
    run: Run
    of_capacity: bool = False

    def rate(self, args: argparse.Namespace, capacity: float | None) -> float:
        base = capacity if self.of_capacity and capacity is not None else args.rate
        return base * self.rate_factor


def epoch_s(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


# --- plain Spark -----------------------------------------------------------------------


def plain(
    args: argparse.Namespace,
    rate: float,
    tmp: Path,
    *,
    job_manager: bool,
    one_query: bool = False,
    workload: str | None = None,
) -> RunResult:
    """Run :mod:`bench.plain_latency` on ``workload``; the feeder starts once its queries
    run (as headroom's files source, it then reads no file written while its JVM
    started)."""
    workload = workload or args.workload
    out, ready, log = tmp / "plain.json", tmp / "ready", tmp / "plain.log"
    cmd = [
        sys.executable, "-m", "bench.plain_latency", "--files-dir", str(tmp / "in"),
        "--checkpoint", str(tmp / "checkpoint"), "--duration", str(args.warmup + args.duration),
        "--out", str(out), "--ready", str(ready), "--workload", workload,
    ]  # fmt: skip
    if job_manager:
        cmd.append("--job-checkpoint-manager")
    if one_query:
        cmd.append("--one-query")
    feeder = WORKLOADS[workload].feeder(tmp / "in", rate)
    started = False
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT)
        meter = TreeCpu(proc.pid)
        meter.start()
        try:
            deadline = time.monotonic() + PLAIN_START_TIMEOUT_S
            while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if ready.exists():
                feeder.start()
                started = True
            else:
                proc.kill()
            proc.wait()
        finally:
            meter.stop()
            if started:
                feeder.stop()
    if proc.returncode != 0 or not out.exists():
        raise RunFailed(f"plain Spark exit {proc.returncode}: {log.read_text()[-3000:]}")
    doc = json.loads(out.read_text())
    result = plain_result(doc, args.warmup, WORKLOADS[workload], rate)
    measured_from = doc["started_s"] + args.warmup
    result.cores = meter.cores(measured_from, measured_from + args.duration)
    result.rows_per_s = sum(c.rows for c in result.classes.values()) / args.duration
    return result


@dataclass
class QueryBatches:
    """What one plain query's measured batches read and when they answered."""

    rows: list[int] = field(default_factory=list)
    means: list[float] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)
    durations: dict[str, list[float]] = field(default_factory=dict)

    def read_per_s(self) -> float | None:
        """Rows a second the batches after the first read: what arrived between the first
        batch's start and the last one's (each batch reads every file written by then)."""
        if len(self.starts) < 2 or self.starts[-1] <= self.starts[0]:
            return None
        return sum(self.rows[1:]) / (self.starts[-1] - self.starts[0])

    def growth(self) -> float | None:
        half = len(self.means) // 2
        if not half:
            return None
        return statistics.fmean(self.means[half:]) / statistics.fmean(self.means[:half])


def plain_result(
    doc: dict[str, Any], warmup_s: float, workload: Workload, rate: float
) -> RunResult:
    """Per class: the response times of its queries' batches that started after the
    warm-up, and the least share of its stream's rate a query read."""
    measured_from, origin = doc["started_s"] + warmup_s, doc["origin_s"]
    rates = workload.rates(rate)
    result = RunResult({})
    for c in workload.classes:
        digest = RunDigest()
        queries = [
            plain_batches(batches, digest, c.target_s, measured_from, origin)
            for name, batches in sorted(doc["batches"].items())
            if name.split("/")[0] == c.name
        ]
        reads = [r for q in queries if (r := q.read_per_s()) is not None]
        growths = [g for q in queries if (g := q.growth()) is not None]
        complete = bool(queries) and len(reads) == len(growths) == len(queries)
        result.classes[c.name] = ClassResult(
            digest.mean_s,
            digest.quantile_s(0.95),
            digest.max_s if digest.count else None,
            0,
            sum(len(q.rows) for q in queries),
            sum(queries[0].rows) if queries else 0,
            digest.violation_mean_s if digest.count else None,
            min(reads) / rates[c.stream] if complete else None,
            max(growths) if complete else None,
        )
        for k, q in enumerate(queries):
            parts = ", ".join(
                f"{key} {med(v):.3f}"
                for key, v in sorted(q.durations.items(), key=lambda kv: -med(kv[1]))
                if med(v) >= 0.005
            )
            result.notes.append(
                f"{c.name}/{k}: {len(q.rows)} batches, median {med(q.rows):.0f} rows (last "
                f"{q.rows[-1] if q.rows else 0}); median s: {parts}"
            )
    return result


def plain_batches(
    batches: list[dict[str, Any]],
    digest: RunDigest,
    target_s: float,
    measured_from: float,
    origin: float,
) -> QueryBatches:
    """One query's batches that started from ``measured_from``, added to ``digest``
    (violations against ``target_s``)."""
    q = QueryBatches()
    for b in batches:
        start, ms = epoch_s(b["timestamp"]), b["durations_ms"]
        if start < measured_from or "triggerExecution" not in ms:
            continue
        for key, value in ms.items():
            q.durations.setdefault(key, []).append(value / 1000)
        summary = ArrivalSummary.from_row(b["metrics"] or {})
        if summary is None:
            continue
        sample = ResponseSample()
        sample.add_answers(summary, start + ms["triggerExecution"] / 1000 - origin)
        digest.add(sample, target_s)
        q.rows.append(summary.count)
        q.means.append(sample.sum_s / sample.count if sample.count else 0.0)
        q.starts.append(start)
    return q


# --- headroom --------------------------------------------------------------------------


def run_on_files(
    doc: dict[str, Any],
    args: argparse.Namespace,
    workload: Workload,
    rate: float,
    tmp: Path,
    queries: str = "one",
) -> dict[str, Any]:
    """``headroom run --source files --queries QUERIES`` of the scenario ``doc`` while the
    workload's streams are written at ``rate``: its results document."""
    feeder = workload.feeder(tmp / "in", rate).start()
    try:
        return run_spark(
            doc,
            duration_s=args.duration,
            warmup_s=args.warmup,
            extra=["--source", "files", "--files-dir", str(tmp / "in"), "--queries", queries],
        )
    finally:
        feeder.stop()


def headroom(args: argparse.Namespace, rate: float, tmp: Path, queries: str = "one") -> RunResult:
    workload = WORKLOADS[args.workload]
    doc = workload.scenario(rate, args.duration)
    return headroom_result(run_on_files(doc, args, workload, rate, tmp, queries), workload)


def headroom_tiers(args: argparse.Namespace, rate: float, tmp: Path) -> RunResult:
    return headroom(args, rate, tmp, queries="tier")


def headroom_result(r: dict[str, Any], workload: Workload) -> RunResult:
    classes = workload.classes
    series = r["series"]
    result = RunResult({})
    for c in classes:
        s = r["classes"][c.name]
        result.classes[c.name] = ClassResult(
            s["mean_response_time_s"],
            s["p95_response_time_s"],
            s["max_response_time_s"],
            int(s["shed_tuples"]),
            sum(1 for p in series if p["classes"].get(c.name, {}).get("outputs")),
            int(s["arrived_tuples"] - s["shed_tuples"] - s["backlog_tuples"]),
            s["mean_violation_s"],
        )
    result.cores = r.get("cpu_cores")
    taken = sum(c.rows for c in result.classes.values())
    result.rows_per_s = taken / max(r["scenario"]["duration_s"], 1e-9)
    queries = len(r["engine"].get("tiers", [])) or 1
    top = [p for p in series if classes[0].name in p["classes"]]  # the top class's query
    cycles = [b["t_s"] - a["t_s"] for a, b in pairwise(top)]
    batch_s = [p["batch_s"] for p in top if p.get("batch_s") is not None]
    fixed = [p["fixed_s"] for p in top if p.get("fixed_s") is not None]
    result.notes.append(
        f"{queries} quer{'ies' if queries > 1 else 'y'} for the {len(classes)} classes: "
        f"{len(series)} batches in "
        f"{r['scenario']['duration_s']:.1f} s measured (the warm-up ends with the first batch "
        f"after it); {classes[0].name}'s query: median batch "
        f"{med(batch_s):.3f} s, median cycle {med(cycles):.3f} s, median fixed time "
        f"{med(fixed):.3f} s; {r['wall_s']:.0f} s wall"
    )
    return result


CONFIGS = (
    Config("plain", "plain Spark", 1.0, lambda a, r, t: plain(a, r, t, job_manager=False)),
    Config("headroom", "headroom", 1.0, headroom),
    Config("overload", f"headroom {OVERLOAD:g}x capacity", OVERLOAD, headroom, of_capacity=True),
    Config("tier", "headroom, a query per tier", 1.0, headroom_tiers),
    Config(
        "overload-tier", f"headroom {OVERLOAD:g}x capacity, a query per tier", OVERLOAD,
        headroom_tiers, of_capacity=True,
    ),
    Config(
        "plain-overload", f"plain Spark {OVERLOAD:g}x capacity", OVERLOAD,
        lambda a, r, t: plain(a, r, t, job_manager=False), of_capacity=True,
    ),
    Config(
        "plain-fs", "plain Spark, job's log manager", 1.0,
        lambda a, r, t: plain(a, r, t, job_manager=True),
    ),
    Config(
        "plain-one", "plain Spark, one query", 1.0,
        lambda a, r, t: plain(a, r, t, job_manager=True, one_query=True),
    ),
)  # fmt: skip


# --- capacity ---------------------------------------------------------------------------

SUSTAINED_READ = 0.95
"""Plain Spark keeps up with a rate when every query reads at least this share of it..."""
MAX_GROWTH = 1.25
"""...and its mean response in the measured time's second half is at most this many times
the first half's (a growing queue lengthens it)."""


def sustained(r: RunResult) -> bool:
    return all(
        c.read_share is not None
        and c.read_share >= SUSTAINED_READ
        and c.growth is not None
        and c.growth <= MAX_GROWTH
        for c in r.classes.values()
    )


def bisect_capacity(args: argparse.Namespace) -> float | None:
    """Plain Spark's highest sustainable rate (rows/s of the workload), bisected between
    ``--rate`` and ``--high`` in ``--steps`` probes of ``--probe-duration`` s (None: not
    even ``--rate``); ``--capacity`` skips the search."""
    if args.capacity:
        return float(args.capacity)
    probe_args = argparse.Namespace(**{**vars(args), "duration": args.probe_duration})

    def probe(rate: float) -> bool:
        with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
            try:
                r = plain(probe_args, rate, Path(tmp), job_manager=False)
            except RunFailed as exc:
                print(f"  capacity probe at {rate:.0f} rows/s: FAILED: {exc}", flush=True)
                return False
        ok = sustained(r)
        reads = ", ".join(
            f"{n} reads {fmt(c.read_share)} of its stream, growth {fmt(c.growth)}"
            for n, c in r.classes.items()
        )
        print(f"  capacity probe at {rate:.0f} rows/s: {'sustained' if ok else 'not'} ({reads})")
        return ok

    low, high = float(args.rate), float(args.high)
    if not probe(low):
        return None
    for _ in range(args.steps):
        mid = float(round((low + high) / 2))
        low, high = (mid, high) if probe(mid) else (low, mid)
    return low


def overload_checks(
    key: str,
    configs: list[Config],
    results: dict[str, list[RunResult]],
    capacity: float,
    args: argparse.Namespace,
) -> list[str]:
    """Issue 43's bars for headroom at 1.5× capacity: the top class within its target (its
    mean violation, in every round) at most 1.2× its unloaded plain-Spark mean, means
    ordered by priority, in total at least 0.9× the capacity admitted: the rows the
    classes read from their streams at the capacity (``trades``: three classes read the
    stream, 3 × capacity rows/s)."""
    runs, base = results.get(key, []), results.get("plain", [])
    if not runs or not any(c.key == key for c in configs):
        return []
    workload = WORKLOADS[args.workload]
    classes = workload.classes
    top = classes[0].name
    means = [mean_of(runs, c.name, "mean_s") for c in classes]
    violations = [r.classes[top].violation_s for r in runs]
    within = all(v is not None and v <= WITHIN_TARGET * classes[0].target_s for v in violations)
    known = [m for m in means if m is not None]
    ordered = len(known) == len(means) and known == sorted(known)
    admitted = statistics.fmean(r.rows_per_s or 0.0 for r in runs)
    at_capacity = sum(workload.rates(capacity)[c.stream] for c in classes)
    return [
        f"{key}: top class {top}: mean {fmt(means[0])} s (target {classes[0].target_s:g}), "
        f"{ratio(means[0], mean_of(base, top, 'mean_s'))}x plain Spark's unloaded (bar 1.2); "
        f"mean violation {' '.join(share(v, classes[0].target_s) for v in violations)} % of "
        f"its target by round: {'within' if within else 'NOT within'} "
        f"(bar {100 * WITHIN_TARGET:g} %)",
        f"means by priority {', '.join(fmt(m) for m in means)}: "
        f"{'ordered' if ordered else 'NOT ordered'}",
        f"admitted {admitted:.0f} rows/s = {admitted / at_capacity:.2f}x "
        f"the {at_capacity:.0f} the classes read at the capacity (bar 0.9)",
    ]


# --- the table -------------------------------------------------------------------------


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def mean_of(runs: list[RunResult], cls: str, key: str) -> float | None:
    values = [getattr(r.classes[cls], key) for r in runs]
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def share(violation_s: float | None, target_s: float) -> str:
    """A mean violation as a percentage of the target (the promise: at most ``WITHIN_TARGET``)."""
    return "-" if violation_s is None else f"{100 * violation_s / target_s:.1f}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def table(configs: list[Config], results: dict[str, list[RunResult]], workload: Workload) -> str:
    base = results.get("plain", [])
    rows = []
    for config in configs:
        runs = results[config.key]
        for c in workload.classes:
            if not runs:
                rows.append([config.label, c.name, *["-"] * 10])
                continue
            per = [r.classes[c.name] for r in runs]
            means = [m.mean_s for m in per if m.mean_s is not None]
            same_input = config.key != "plain" and config.rate_factor == 1.0 and base
            rows.append(
                [
                    config.label,
                    c.name,
                    f"{c.target_s:g}",
                    " ".join(fmt(m.mean_s) for m in per),
                    f"{fmt(min(means))}–{fmt(max(means))}" if means else "-",
                    " ".join(fmt(m.p95_s) for m in per),
                    " ".join(share(m.violation_s, c.target_s) for m in per),
                    fmt(max((m.max_s for m in per if m.max_s is not None), default=None)),
                    str(sum(m.shed for m in per)),
                    " ".join(str(m.batches) for m in per),
                    ratio(mean_of(runs, c.name, "mean_s"), mean_of(base, c.name, "mean_s"))
                    if same_input
                    else "-",
                    ratio(mean_of(runs, c.name, "p95_s"), mean_of(base, c.name, "p95_s"))
                    if same_input
                    else "-",
                ]
            )
    headers = [
        "configuration", "class", "D s", "mean s (rounds)", "mean min–max", "p95 s (rounds)",
        "viol %D", "max s", "shed", "batches", "mean /plain", "p95 /plain",
    ]  # fmt: skip
    return render_table(headers, rows)


def cpu_table(configs: list[Config], results: dict[str, list[RunResult]]) -> str:
    """The CPU each configuration's Spark processes used over the measured time, and per
    row its classes took: on a busy machine what it can take is the cores over that."""
    rows = []
    for config in configs:
        runs = results[config.key]
        per_row = [
            f"{1e6 * r.cores / r.rows_per_s:.2f}" if r.cores and r.rows_per_s else "-" for r in runs
        ]
        rows.append(
            [
                config.label,
                " ".join("-" if r.cores is None else f"{r.cores:.2f}" for r in runs),
                " ".join(f"{r.rows_per_s or 0:.0f}" for r in runs),
                " ".join(per_row),
            ]
        )
    headers = ["configuration", "cores (rounds)", "rows/s taken", "CPU µs a row taken"]
    return render_table(headers, rows)


# --- main ------------------------------------------------------------------------------


def attempt(
    config: Config, args: argparse.Namespace, round_: int, capacity: float | None
) -> RunResult | None:
    rate = config.rate(args, capacity)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        try:
            r = config.run(args, rate, Path(tmp))
        except (RunFailed, OSError, ValueError, KeyError) as exc:
            print(f"round {round_ + 1}, {config.label}: FAILED: {exc}", flush=True)
            return None
    summary = "; ".join(
        f"{name} mean {fmt(c.mean_s)} p95 {fmt(c.p95_s)} max {fmt(c.max_s)} shed {c.shed}"
        for name, c in r.classes.items()
    )
    print(
        f"round {round_ + 1}, {config.label} at {rate:.0f} rows/s "
        f"({time.monotonic() - started:.0f} s wall): {summary}",
        flush=True,
    )
    for note in r.notes:
        print(f"    {note}", flush=True)
    return r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("trades", "windows-joins"), default="trades")
    parser.add_argument(
        "--rate", type=float, default=4000.0, help="rows/s of the workload's streams together"
    )
    parser.add_argument("--duration", type=float, default=60.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--capacity", type=float, default=0.0, help="rows/s plain Spark sustains (0: bisect)"
    )
    parser.add_argument("--high", type=float, default=120000.0, help="capacity search's top")
    parser.add_argument("--steps", type=int, default=4, help="capacity search's probes")
    parser.add_argument("--probe-duration", type=float, default=30.0, help="measured s a probe")
    parser.add_argument(
        "--only",
        default="plain,headroom,overload,plain-overload",
        help=f"configurations, in this order per round: {', '.join(c.key for c in CONFIGS)}",
    )
    args = parser.parse_args()
    keys = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = set(keys) - {c.key for c in CONFIGS}
    if unknown:
        parser.error(f"unknown configuration(s): {', '.join(sorted(unknown))}")
    configs = sorted((c for c in CONFIGS if c.key in keys), key=lambda c: keys.index(c.key))
    print(
        f"latency benchmark: {args.workload} at {args.rate:.0f} rows/s, {args.rounds} round(s) of "
        f"{args.warmup:g} s warm-up + {args.duration:g} s measured; {load_average()} at start"
    )
    workload = WORKLOADS[args.workload]
    for c in workload.classes:
        print(f"  {c.name} (priority {c.priority}, target {c.target_s:g} s), {c.stream}:")
        for statement in c.statements:
            print(f"    {statement}")
    capacity = bisect_capacity(args) if any(c.of_capacity for c in configs) else None
    if capacity is not None:
        print(f"capacity (plain Spark's highest sustained rate): {capacity:.0f} rows/s")
    results: dict[str, list[RunResult]] = {c.key: [] for c in configs}
    for round_ in range(args.rounds):
        for config in configs:
            if config.of_capacity and capacity is None:
                continue
            r = attempt(config, args, round_, capacity)
            if r is not None:
                results[config.key].append(r)
    print(table(configs, results, workload))
    print(cpu_table(configs, results))
    for key in ("overload", "overload-tier"):
        for line in overload_checks(key, configs, results, capacity, args) if capacity else []:
            print(line)
    print(f"{load_average()} at end")


if __name__ == "__main__":
    main()

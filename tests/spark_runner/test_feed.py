"""Offsets, admission at the source and partitions, as Spark calls them, without a JVM."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from spark_runner.engine.dataflow.network import compile_network, stream_specs
from spark_runner.engine.sources.feed import (
    FeedPoint,
    FeedSpec,
    GeneratedLog,
    initial_offset,
    next_offset,
    plan_partitions,
)
from spark_runner.engine.sources.offsets import (
    ADMIT_ALL,
    BatchRecord,
    Decision,
    SourceOffset,
    read_decision,
    read_offset_log,
    write_decision,
)
from spark_runner.engine.sources.source import FeedPartition, FeedReader, due
from spark_runner.scenario import Scenario
from spark_runner.scenario.columns import READ_COLUMN

ORIGIN_US = 1_763_700_000_000_000
S = 1_000_000


def feed(scenario: Scenario, tmp_path: Path, partitions: int = 2) -> FeedSpec:
    plan = compile_network(scenario)
    return FeedSpec(
        kind="generator",
        points=tuple(FeedPoint(p.op_id, p.class_name, p.stream) for p in plan.points),
        streams=stream_specs(scenario),
        decision_path=str(tmp_path / "decision.json"),
        partitions=partitions,
    )


def rows_of(spec: FeedSpec, start: SourceOffset, end: SourceOffset) -> dict[str, np.ndarray]:
    log = GeneratedLog(spec, end.origin_us)
    costs = end.decision.costs_s if end.decision else {}
    parts = []
    for group in plan_partitions(spec, start, end, costs):
        for piece in pickle.loads(pickle.dumps(group)):  # Spark pickles partitions
            parts.append(log.rows(piece))
    if not parts:
        return {"point": np.empty(0), "seq": np.empty(0)}
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def test_arrivals_follow_the_schedule_and_are_never_in_the_future(
    two_classes: Scenario, tmp_path: Path
) -> None:
    spec = feed(two_classes, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    end = next_offset(spec, log, start, ADMIT_ALL, ORIGIN_US + 12 * S)
    # stream a: 100/s; stream b: 50/s for 10 s then 200/s
    assert [p.arrived for p in end.points] == [1200, 500 + 400]
    rows = rows_of(spec, start, end)
    assert len(rows["seq"]) == 2100
    assert (rows["arrival_s"] < (ORIGIN_US + 12 * S) / 1e6).all()
    assert (rows["arrival_s"] >= ORIGIN_US / 1e6).all()


def test_a_budget_leaves_tuples_waiting_and_the_decision_is_recorded(
    two_classes: Scenario, tmp_path: Path
) -> None:
    spec = feed(two_classes, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    gold_op, bronze_op = (p.op_id for p in spec.points)
    decision = Decision(
        version=4,
        shed={"gold": 0.0, "bronze": 0.5},
        quotas={"gold": 0.5, "bronze": 0.5},
        budget_s=2.0,
        costs_s={gold_op: 0.001, bronze_op: 0.01},
        admit_all=False,
        order=("gold", "bronze"),
    )
    end = next_offset(spec, log, start, decision, ORIGIN_US + 10 * S)
    gold, bronze = end.points
    assert (gold.arrived, gold.taken, gold.kept, gold.shed) == (1000, 1000, 1000, 0)
    # gold used 1 s; bronze gets the other 1 s = 100 kept tuples, 200 taken
    assert (bronze.taken, bronze.kept, bronze.shed) == (200, 100, 100)
    assert bronze.waiting == 300
    assert end.decision == decision
    # the oldest waiting tuple is tuple 200 of stream b, scheduled at 200 / 50 s
    assert bronze.head_s == pytest.approx(ORIGIN_US / 1e6 + 4.0)
    # the offset survives Spark's JSON round trip
    assert SourceOffset.from_json(json.loads(json.dumps(end.to_json()))) == end
    kept = rows_of(spec, start, end)
    assert np.bincount(kept["point"], minlength=2).tolist() == [1000, 100]
    # bronze's kept tuples are spread over the 200 taken: every second one
    assert kept["seq"][kept["point"] == 1].tolist() == list(range(0, 200, 2))


def test_same_offsets_same_tuples(two_classes: Scenario, tmp_path: Path) -> None:
    """A batch replayed from the offset log reads exactly what it read the first time."""
    spec = feed(two_classes, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    decision = Decision(
        version=1,
        shed={"gold": 0.3, "bronze": 0.7},
        quotas={"gold": 1.0, "bronze": 1.0},
        admit_all=False,
        budget_s=100.0,
        costs_s={},
    )
    end = next_offset(spec, log, start, decision, ORIGIN_US + 5 * S)
    first = rows_of(spec, start, end)
    replayed = rows_of(
        spec, SourceOffset.from_json(start.to_json()), SourceOffset.from_json(end.to_json())
    )
    for column in first:
        assert np.array_equal(first[column], replayed[column])
    # and a log with another origin (a restarted run) regenerates by the offsets' origin
    assert np.array_equal(rows_of(feed(two_classes, tmp_path), start, end)["value"], first["value"])


def test_classes_reading_one_stream_see_the_same_tuples(demo: Scenario, tmp_path: Path) -> None:
    spec = feed(demo, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    end = next_offset(spec, log, start, ADMIT_ALL, ORIGIN_US + 3 * S)
    rows = rows_of(spec, start, end)
    trades = [i for i, p in enumerate(spec.points) if p.stream == "trades"]
    a, b = (rows["point"] == t for t in trades)
    for column in ("seq", "key", "value", "arrival_s"):
        assert np.array_equal(np.sort(rows[column][a]), np.sort(rows[column][b]))


def test_partitions_cover_the_kept_tuples_once_in_similar_work(
    two_classes: Scenario, tmp_path: Path
) -> None:
    spec = feed(two_classes, tmp_path, partitions=3)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    end = next_offset(spec, log, start, ADMIT_ALL, ORIGIN_US + 30 * S)
    costs = {p.op_id: 1.0 for p in spec.points}
    groups = plan_partitions(spec, start, end, costs)
    assert len(groups) == 3
    sizes = [sum(p.j1 - p.j0 for p in g) for g in groups]
    assert max(sizes) - min(sizes) <= 0.2 * max(sizes)
    rows = rows_of(spec, start, end)
    for i, p in enumerate(end.points):
        seqs = np.sort(rows["seq"][rows["point"] == i])
        assert seqs.tolist() == list(range(p.kept))


def test_a_warm_up_discard_takes_everything_waiting_once(
    two_classes: Scenario, tmp_path: Path
) -> None:
    spec = feed(two_classes, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    nothing = Decision(
        version=1,
        quotas={"gold": 0.5, "bronze": 0.5},
        budget_s=0.0,
        costs_s={p.op_id: 1.0 for p in spec.points},
        admit_all=False,
    )
    held = next_offset(spec, log, start, nothing, ORIGIN_US + 5 * S)
    assert all(p.waiting > 0 and p.kept == 0 for p in held.points)
    discard = Decision(version=2, discard=True, admit_all=False)
    after = next_offset(spec, log, held, discard, ORIGIN_US + 6 * S)
    assert all(p.waiting == 0 and p.kept == 0 and p.shed == 0 for p in after.points)
    assert rows_of(spec, held, after)["seq"].size == 0
    # the same decision read again at the next trigger does not discard again
    again = next_offset(spec, log, after, discard, ORIGIN_US + 7 * S)
    assert all(p.kept > 0 for p in again.points)


def test_stale_tuples_beyond_the_limit_are_shed_before_the_newer_ones_are_admitted(
    two_classes: Scenario, tmp_path: Path
) -> None:
    """Nothing is taken for 10 s (500 bronze tuples wait). Then bronze (shedding half)
    may keep 100 kept tuples' worth of backlog, 200 in the log: of the 500 that waited
    since the last batch was planned, the oldest 300 are shed first (counted as stale);
    the other 200 and the 400 that arrived since are admitted as usual, half kept; gold
    has no limit and loses nothing."""
    spec = feed(two_classes, tmp_path)
    log = GeneratedLog(spec, ORIGIN_US)
    start = initial_offset(spec, log, ORIGIN_US)
    gold_op, bronze_op = (p.op_id for p in spec.points)
    costs = {gold_op: 0.001, bronze_op: 0.001}
    quotas = {"gold": 0.5, "bronze": 0.5}
    hold = Decision(version=1, quotas=quotas, budget_s=0.0, costs_s=costs, admit_all=False)
    held = next_offset(spec, log, start, hold, ORIGIN_US + 10 * S)
    assert [p.waiting for p in held.points] == [1000, 500]
    decision = Decision(
        version=2,
        shed={"gold": 0.0, "bronze": 0.5},
        quotas=quotas,
        budget_s=100.0,
        costs_s=costs,
        admit_all=False,
        stale_max={"bronze": 100.0},
    )
    end = next_offset(spec, log, held, decision, ORIGIN_US + 12 * S)
    gold, bronze = end.points
    assert (gold.taken, gold.kept, gold.stale) == (1200, 1200, 0)
    assert (bronze.taken, bronze.kept, bronze.shed, bronze.stale) == (900, 300, 600, 300)
    kept = rows_of(spec, held, end)
    assert np.bincount(kept["point"], minlength=2).tolist() == [1200, 300]
    assert kept["seq"][kept["point"] == 1].tolist() == list(range(300, 900, 2))
    assert SourceOffset.from_json(json.loads(json.dumps(end.to_json()))) == end
    assert end.to_json()["p"][1][-1] == 300  # the stale count is in the offset


def test_decision_file_round_trip_and_default(tmp_path: Path) -> None:
    path = tmp_path / "decision.json"
    assert read_decision(path) == ADMIT_ALL
    decision = Decision(
        version=3,
        shed={"a": 0.25},
        quotas={"a": 1.0},
        budget_s=0.5,
        costs_s={"src:a:s": 1e-4},
        admit_all=False,
        config_version=2,
        stale_max={"a": 120.0},
    )
    write_decision(path, decision)
    assert read_decision(path) == decision
    assert [p.name for p in tmp_path.iterdir()] == ["decision.json"]  # no temporary left


def test_a_held_source_offers_no_new_data(two_classes: Scenario, tmp_path: Path) -> None:
    """A stopping job holds the source: ``latestOffset`` returns the offset Spark passed
    in, so Spark plans no batch after the one in progress; without the hold it moves on."""
    spec = feed(two_classes, tmp_path)
    reader = FeedReader(spec, 0)
    start = reader.initialOffset()
    start = {**start, "t_us": start["t_us"] - 2 * S}  # two seconds of arrivals waiting
    write_decision(spec.decision_path, Decision(version=1, hold=True))
    assert read_decision(spec.decision_path).hold
    assert reader.latestOffset(start, ReadAllAvailable()) == start
    write_decision(spec.decision_path, Decision(version=1))
    moved = SourceOffset.from_json(reader.latestOffset(start, ReadAllAvailable()))
    assert moved.t_us > start["t_us"]


def test_every_points_source_plans_the_same_joint_batch_and_reads_only_its_point(
    two_classes: Scenario, tmp_path: Path
) -> None:
    """One source per point: the first to be asked plans the batch for all (one budget,
    split by the class scheduler), the others read that plan, so every source's offset
    in the log is the same; each reads only its own point's tuples."""
    spec = dataclasses.replace(feed(two_classes, tmp_path), backlog_us=3 * S)
    readers = [FeedReader(spec, i) for i in range(len(spec.points))]
    starts = [r.initialOffset() for r in readers]
    assert all(start == starts[0] for start in starts)
    write_decision(spec.decision_path, Decision(version=1))
    start = {**starts[0], "t_us": starts[0]["t_us"] - 2 * S}  # two seconds waiting
    ends = [r.latestOffset(start, ReadAllAvailable()) for r in readers]
    assert all(end == ends[0] for end in ends)
    end = SourceOffset.from_json(ends[0])
    for i, reader in enumerate(readers):
        parts = [p for p in reader.partitions(start, ends[0]) if isinstance(p, FeedPartition)]
        assert {piece.point for p in parts for piece in p.slices} == {i}
        read = sum(
            len(GeneratedLog(spec, end.origin_us).rows(piece)["seq"])
            for p in parts
            for piece in p.slices
        )
        assert read == end.points[i].kept - SourceOffset.from_json(start).points[i].kept


def test_a_reader_reports_the_time_it_took_on_the_first_row_of_each_batch(
    two_classes: Scenario, tmp_path: Path
) -> None:
    """The reader's rows carry ``read_s``: the time producing each Arrow batch took, on
    its first row (0 on the others), which the dataflow sums per scan: the engine's cost
    model counts a Python reader's work that Spark's executor CPU does not show."""
    spec = dataclasses.replace(feed(two_classes, tmp_path), backlog_us=3 * S)
    reader = FeedReader(spec, 0)
    start = reader.initialOffset()
    write_decision(spec.decision_path, Decision(version=1))
    start = {**start, "t_us": start["t_us"] - 2 * S}
    end = reader.latestOffset(start, ReadAllAvailable())
    began = time.perf_counter()
    batches = [b for p in reader.partitions(start, end) for b in reader.read(p)]
    took = time.perf_counter() - began
    assert batches and sum(b.num_rows for b in batches) > 0
    for batch in batches:
        times = batch.column(READ_COLUMN).to_numpy()
        assert times[0] > 0 and not times[1:].any()
    reported = sum(float(b.column(READ_COLUMN).to_numpy().sum()) for b in batches)
    assert 0 < reported <= took


def test_no_batch_starts_before_its_pace_and_every_source_agrees(
    two_classes: Scenario, tmp_path: Path
) -> None:
    """Until the decision's pace has passed since the last batch started, every source
    returns its start (Spark plans no batch); after it, they return the same plan."""
    now_us = time.time_ns() // 1_000
    spec = dataclasses.replace(feed(two_classes, tmp_path), backlog_us=3 * S)
    readers = [FeedReader(spec, i) for i in range(len(spec.points))]
    initial, _ = (r.initialOffset() for r in readers)
    start = {**initial, "t_us": now_us - S // 10}  # the last batch started 0.1 s ago
    write_decision(spec.decision_path, Decision(version=1, pace_s=60.0))
    assert [r.latestOffset(start, ReadAllAvailable()) for r in readers] == [start, start]
    write_decision(spec.decision_path, Decision(version=1, pace_s=0.5))
    start = {**initial, "t_us": now_us - 2 * S}  # a batch that started 2 s ago
    ends = [r.latestOffset(start, ReadAllAvailable()) for r in readers]
    assert ends[0] == ends[1] != start


def test_every_source_of_a_trigger_follows_the_first_ones_verdict(tmp_path: Path) -> None:
    """Sources of one trigger are asked one after the other, once each: in each round the
    first one decides and the others follow, however late they are asked (a CPU hog
    spread one trigger's calls over more than a tick) and whatever a newer decision's
    pace says."""
    due_us = 10 * S
    # round 0: the first source asked says "not yet"; the others follow, even past the due
    # instant
    assert not due(tmp_path, "k", 0, due_us - 1, due_us)
    assert not due(tmp_path, "k", 0, due_us + 5 * S, due_us)
    assert not due(tmp_path, "k", 0, due_us + 5 * S, due_us)
    # round 1: due; a source that read a longer pace still follows
    assert due(tmp_path, "k", 1, due_us + 1, due_us)
    assert due(tmp_path, "k", 1, due_us + 2, 2 * due_us)
    # another start offset, and a batch another source planned already
    assert not due(tmp_path, "other", 0, due_us - 1, due_us)
    (tmp_path / "other.json").write_text("{}")
    assert due(tmp_path, "other", 0, due_us - 1, due_us)


def test_the_sources_of_one_trigger_plan_one_batch_however_far_apart_they_are_asked(
    two_classes: Scenario, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two readers asked in turn each trigger, 30 ms apart on a busy driver, while the
    due instant passes between them: every trigger's end offsets are the same."""
    start_us = time.time_ns() // 1_000 - 2 * S
    spec = dataclasses.replace(feed(two_classes, tmp_path), backlog_us=3 * S)
    readers = [FeedReader(spec, i) for i in range(len(spec.points))]
    initial, _ = (r.initialOffset() for r in readers)
    start = {**initial, "t_us": start_us}
    write_decision(spec.decision_path, Decision(version=1, pace_s=0.5))
    clock = iter(range(start_us + S // 2 - 70_000, start_us + S, 30_000))
    monkeypatch.setattr("spark_runner.engine.sources.source.now_us", lambda: next(clock))
    triggers: list[list[dict[str, object]]] = []
    while not triggers or triggers[-1][0] == start:
        triggers.append([r.latestOffset(start, ReadAllAvailable()) for r in readers])
    assert all(a == b for a, b in triggers), triggers
    # the second trigger's second call came 20 ms after the due instant and followed the
    # first call's "not yet"; the third trigger planned the batch
    assert len(triggers) == 3


def test_offset_log_entries_are_read_as_spark_writes_them(tmp_path: Path) -> None:
    offset = SourceOffset(ORIGIN_US, ORIGIN_US + S, (), Decision(version=1, admit_all=False))
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "7").write_text(
        'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}\n' + json.dumps(offset.to_json())
    )
    assert read_offset_log(tmp_path, 7) == offset
    record = BatchRecord(7, SourceOffset(ORIGIN_US, ORIGIN_US, ()), offset)
    assert record.window_s == (ORIGIN_US / 1e6, ORIGIN_US / 1e6 + 1.0)
    assert record.decision.version == 1


def test_an_offset_log_entry_whose_sources_disagree_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = SourceOffset(ORIGIN_US, ORIGIN_US + S, (), Decision(version=1, admit_all=False))
    later = SourceOffset(ORIGIN_US, ORIGIN_US + 2 * S, (), Decision(version=1, admit_all=False))
    (tmp_path / "offsets").mkdir()
    lines = [json.dumps(o.to_json()) for o in (first, later, later)]
    (tmp_path / "offsets" / "3").write_text("v1\n{}\n" + "\n".join(lines))
    (tmp_path / "offsets" / "4").write_text("v1\n{}\n" + "\n".join(lines[1:]))
    with caplog.at_level("WARNING", logger="spark_runner.engine.sources.offsets"):
        assert read_offset_log(tmp_path, 4) == later
        assert not caplog.records  # every source agrees
        assert read_offset_log(tmp_path, 3) == first
    assert "batch 3: 2 of its 3 sources hold another offset" in caplog.text


def test_a_stopped_reader_leaves_no_traceback_of_the_closed_connection() -> None:
    """At a query's stop Spark closes the source runner's connection; the runner then
    fails on it (end of file, then a broken pipe reporting that) after stopping the
    reader. What follows the reader's stop prints nothing on the job's log."""
    runner = (
        "from spark_runner.engine.sources.source import FeedReader\n"
        "FeedReader.stop(None)  # the runner stops the reader, then:\n"
        "raise EOFError\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", runner], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode != 0
    assert result.stderr == ""

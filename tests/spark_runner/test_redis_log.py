"""Redis Streams as the sources' log: the producer and the reader, on a real Redis."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import redis
from pyspark.sql.streaming.datasource import ReadAllAvailable

from spark_runner.engine.dataflow.network import stream_specs
from spark_runner.engine.sources import redis_log
from spark_runner.engine.sources.columns import ColumnSpec
from spark_runner.engine.sources.feed import (
    FeedPoint,
    FeedSpec,
    initial_offset,
    next_offset,
    plan_partitions,
)
from spark_runner.engine.sources.offsets import ADMIT_ALL, Decision, SourceOffset
from spark_runner.engine.sources.redis_log import Producer, RedisLog, stream_key
from spark_runner.engine.sources.source import FeedPartition, FeedReader
from spark_runner.engine.sources.streams import StreamSpec
from spark_runner.scenario import Scenario

pytestmark = pytest.mark.services


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    c = redis.Redis.from_url(redis_url)
    yield c
    c.close()


class CountingRedis(redis.Redis):
    """A real client that counts the entries its range reads return."""

    read = 0

    def xrange(self, *args: Any, **kwargs: Any) -> Any:
        entries = super().xrange(*args, **kwargs) or []
        self.read += len(entries)
        return entries

    def xrevrange(self, *args: Any, **kwargs: Any) -> Any:
        entries = super().xrevrange(*args, **kwargs) or []
        self.read += len(entries)
        return entries


@pytest.fixture
def producer(client: redis.Redis, two_classes: Scenario) -> Iterator[Producer]:
    """A producer of the two_classes scenario's streams under a prefix of its own; its
    streams are deleted afterwards."""
    fed = Producer(client, stream_specs(two_classes), f"test-{uuid.uuid4().hex[:8]}")
    yield fed
    client.delete(*fed.keys().values())


def counting_log(spec: FeedSpec, redis_url: str) -> tuple[RedisLog, CountingRedis]:
    """A log reading through a client that counts the entries it reads."""
    counting = CountingRedis(connection_pool=redis.ConnectionPool.from_url(redis_url))
    return RedisLog(spec, counting), counting


def redis_feed(
    producer: Producer, two_classes: Scenario, redis_url: str, tmp_path: Path
) -> FeedSpec:
    """The source's spec for the two_classes scenario, fed by ``producer``."""
    return FeedSpec(
        kind="redis",
        points=(FeedPoint("src:gold:a", "gold", "a"), FeedPoint("src:bronze:b", "bronze", "b")),
        streams=stream_specs(two_classes),
        decision_path=str(tmp_path / "d.json"),
        redis_url=redis_url,
        redis_keys=producer.keys(),
    )


def test_producer_and_reader_agree_on_every_entry(
    producer: Producer, redis_url: str, two_classes: Scenario, tmp_path: Path
) -> None:
    specs = stream_specs(two_classes)
    spec = redis_feed(producer, two_classes, redis_url, tmp_path)
    log, counting = counting_log(spec, redis_url)
    start = initial_offset(spec, log, 1_000)
    assert producer.step(2.0) == 200 + 100  # a: 100/s, b: 50/s
    end = next_offset(spec, log, start, ADMIT_ALL, 2_000)
    assert [p.arrived for p in end.points] == [200, 100]
    assert [p.waiting for p in end.points] == [0, 0]
    rows = [log.rows(piece) for g in plan_partitions(spec, start, end, {}) for piece in g]
    a = next(r for r in rows if r["point"][0] == 0)
    assert a["seq"].tolist() == list(range(200))
    generated = specs["a"].values_of(np.arange(200), a["arrival_s"])
    assert np.array_equal(a["key"], generated["key"])
    assert np.allclose(a["value"], generated["value"])
    # the arrival instant is the append instant from the entry id (ms resolution)
    assert (np.diff(a["arrival_s"]) >= 0).all()
    # a budget leaves entries waiting in the stream, oldest first
    producer.step(4.0)
    half = Decision(
        version=1,
        quotas={"gold": 0.5, "bronze": 0.5},
        budget_s=0.1,
        costs_s={"src:gold:a": 0.001, "src:bronze:b": 0.001},
        admit_all=False,
    )
    later = next_offset(spec, log, end, half, 3_000)
    gold = later.points[0]
    assert gold.arrived == 400 and gold.taken == 250 and gold.waiting == 150
    rows = [log.rows(p) for g in plan_partitions(spec, end, later, half.costs_s) for p in g]
    gold_rows = next(r for r in rows if r["point"][0] == 0)
    assert gold_rows["seq"].tolist() == list(range(200, 250))
    # stale first: gold may keep 50 of the 150 that waited; the oldest 100 are shed
    # unread, and the 100 that arrived since and the 50 kept are read, in order
    producer.step(5.0)
    stale = dataclasses.replace(half, version=2, budget_s=100.0, stale_max={"gold": 50.0})
    after = next_offset(spec, log, later, stale, 4_000)
    gold = after.points[0]
    assert (gold.taken, gold.kept, gold.stale) == (500, 400, 100)
    counting.read = 0
    pieces = [p for g in plan_partitions(spec, later, after, stale.costs_s) for p in g]
    gold_rows = log.rows(next(p for p in pieces if p.point == 0))
    assert gold_rows["seq"].tolist() == list(range(350, 500))
    assert counting.read == 150  # the shed ones are not read at all


def test_the_first_batch_starts_where_it_was_planned(
    producer: Producer, redis_url: str, two_classes: Scenario, tmp_path: Path
) -> None:
    """Spark asks for the initial offset again when it runs batch 0 (nothing committed
    yet). Entries appended between the two calls once moved the second start past the
    first: the batch's range then held fewer entries than its counts said, and reading it
    failed with an IndexError (seen in CI under load)."""
    spec = redis_feed(producer, two_classes, redis_url, tmp_path)
    readers = [FeedReader(spec, i) for i in range(len(spec.points))]
    producer.step(1.0)
    planned = readers[0].initialOffset()
    producer.step(2.0)  # the feeder appends while Spark plans the first batch
    end = readers[0].latestOffset(planned, ReadAllAvailable())
    run = readers[0].initialOffset()  # MicroBatchExecution.runBatch, batch 0
    assert run == planned == readers[1].initialOffset()
    parts = [p for r in readers for p in r.partitions(run, end) if isinstance(p, FeedPartition)]
    rows = sum(len(RedisLog(spec).rows(piece)["seq"]) for p in parts for piece in p.slices)
    assert rows == sum(p.kept for p in SourceOffset.from_json(end).points)


def test_entries_carry_the_streams_own_columns_as_fields_or_as_json(
    client: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """A stream with its own columns: the producer writes them as fields or as one JSON
    object; the reader maps either to the schema (what does not read as its type, e.g. an
    external producer's bad value, is null)."""
    columns = (
        ColumnSpec("account", "long", "zipf", {"n": 20, "s": 1.1}),
        ColumnSpec("amount", "double", "normal", {"mean": 50.0, "sd": 5.0}),
        ColumnSpec("country", "string", "choice", {"values": ["FR", "DE"]}),
        ColumnSpec("flag", "boolean", "choice", {"values": [True, False]}),
        ColumnSpec("ts", "timestamp", "arrival", {"lag_max_s": 1.0}),
    )
    stream = StreamSpec("t", 3, (0.0,), (100.0,), columns, event_time="ts")
    for payload in ("fields", "json"):
        prefix = f"test-{uuid.uuid4().hex[:8]}"
        producer = Producer(client, {"t": stream}, prefix, payload=payload, origin_s=1_800_000_000)
        try:
            spec = FeedSpec(
                kind="redis",
                points=(FeedPoint("src:c:t", "c", "t"),),
                streams={"t": stream},
                decision_path=str(tmp_path / "d.json"),
                redis_url=redis_url,
                redis_keys=producer.keys(),
            )
            log = RedisLog(spec)
            start = initial_offset(spec, log, 1_000)
            producer.step(1.0)
            client.xadd(producer.keys()["t"], {"account": "x", "amount": "1e999", "ts": "?"})
            end = next_offset(spec, log, start, ADMIT_ALL, 2_000)
            (piece,) = [log.rows(p) for g in plan_partitions(spec, start, end, {}) for p in g]
            rows = listed(piece)
            seqs = np.arange(100)
            made = stream.values_of(seqs, stream.arrival_times(seqs) + 1_800_000_000)
            assert rows["seq"][:100].tolist() == list(range(100)), payload
            assert rows["account"][:100] == made["account"].tolist(), payload
            assert np.allclose(rows["amount"][:100], made["amount"]), payload
            assert rows["country"][:100] == made["country"].tolist(), payload
            assert rows["flag"][:100] == made["flag"].tolist(), payload
            assert np.allclose(rows["ts"][:100], made["ts"], atol=1), payload
            assert (rows["account"][100], rows["amount"][100], rows["ts"][100]) == (None,) * 3
            assert rows["seq"][100] > 2**40  # numbered by its entry id
        finally:
            client.delete(stream_key(prefix, "t"))


def listed(columns: dict[str, Any]) -> dict[str, Any]:
    """A piece's Arrow columns as lists (timestamps in epoch microseconds)."""
    out = dict(columns)
    for name, values in columns.items():
        if isinstance(values, pa.Array):
            as_ints = pa.types.is_timestamp(values.type)
            out[name] = (values.cast(pa.int64()) if as_ints else values).to_pylist()
    return out


@pytest.mark.parametrize(("count", "most_read"), [(300, 0), (290, 11), (10, 10)])
def test_take_places_the_cursor_reading_as_few_entries_as_it_can(
    client: redis.Redis,
    producer: Producer,
    redis_url: str,
    two_classes: Scenario,
    tmp_path: Path,
    count: int,
    most_read: int,
) -> None:
    """The cursor after taking ``count`` of 300 waiting entries is the ``count``-th
    entry's id, read from neither end when every waiting entry is taken, else from the
    nearer end."""
    spec = redis_feed(producer, two_classes, redis_url, tmp_path)
    log, counting = counting_log(spec, redis_url)
    start = log.initial(0, 0)
    producer.step(1.0)  # 100 entries: taken before the cursor is placed
    producer.step(4.0)  # 300 more
    entries = client.xrange(producer.keys()["a"], "-", "+") or []
    ids = [i.decode() for i, _ in entries if isinstance(i, bytes)]
    state = dataclasses.replace(start, arrived=100, taken=100, cursor=ids[99])
    assert log.arrived(0, state, 0) == 400
    counting.read = 0
    assert log.take(0, state, count) == ids[99 + count]
    assert counting.read <= most_read


def test_a_job_taking_over_a_class_reads_the_stream_from_its_start_instant(
    producer: Producer,
    redis_url: str,
    two_classes: Scenario,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job launched after a hand-off's switch (``FeedSpec.start_s``) reads back every
    entry appended from that instant on, as waiting arrivals, and none before it (counted
    in chunks of 7 here, of 10,000 in a run)."""
    monkeypatch.setattr(redis_log, "_COUNT_CHUNK", 7)
    producer.step(1.0)  # a: seq 0-99, appended before the start instant
    # Redis stamps each entry's id with its own clock in ms: the start instant must lie
    # in a millisecond of its own between the two batches
    time.sleep(0.01)
    start_s = time.time()
    time.sleep(0.01)
    producer.step(2.0)  # a: seq 100-199, after it
    spec = dataclasses.replace(
        redis_feed(producer, two_classes, redis_url, tmp_path), start_s=start_s
    )
    log, _ = counting_log(spec, redis_url)
    now_us = round(time.time() * 1e6)
    start = initial_offset(spec, log, now_us)
    gold = start.points[0]
    assert start_s <= gold.head_s <= time.time()  # the oldest waiting entry's arrival
    producer.step(3.0)  # and what arrives after the run starts: seq 200-299
    end = next_offset(spec, log, start, ADMIT_ALL, now_us + 1_000)
    assert [p.arrived for p in end.points] == [200, 100]
    rows = [log.rows(piece) for g in plan_partitions(spec, start, end, {}) for piece in g]
    a = next(r for r in rows if r["point"][0] == 0)
    assert a["seq"].tolist() == list(range(100, 300))
    assert (a["arrival_s"] >= start_s - 0.001).all()

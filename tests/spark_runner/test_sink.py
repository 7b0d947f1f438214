"""The sinks' checks, and the Redis sink's batch writer against a real Redis: a batch is
written once, whole, however often it is replayed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
import redis

from spark_runner.engine.dataflow.sink import (
    SinkError,
    batch_marker,
    check_sink,
    write_redis_batch,
)


@pytest.fixture
def stream(redis_url: str) -> Iterator[tuple[redis.Redis, str]]:
    client = redis.Redis.from_url(redis_url)
    key = f"test-sink-{uuid.uuid4().hex[:8]}:out"
    yield client, key
    client.delete(key, batch_marker(key))
    client.close()


def entries(client: redis.Redis, key: str) -> list[tuple[int, dict[str, object]]]:
    written = cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(key))
    return [(int(fields[b"batch_id"]), json.loads(fields[b"json"])) for _, fields in written]


@pytest.mark.services
def test_a_replayed_batch_adds_nothing_and_a_later_one_appends(
    redis_url: str, stream: tuple[redis.Redis, str]
) -> None:
    client, key = stream
    at = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    first = [{"class": "gold", "value": 0.25, "event_time": at, "key": None}, {"class": "x"}]
    assert write_redis_batch(redis_url, key, 0, first)
    assert not write_redis_batch(redis_url, key, 0, first)  # replay after a crash
    assert write_redis_batch(redis_url, key, 1, [{"class": "gold", "value": 1.5}])
    assert not write_redis_batch(redis_url, key, 0, [{"class": "late"}])  # older batch
    assert entries(client, key) == [
        (0, {"class": "gold", "value": 0.25, "event_time": at.isoformat()}),
        (0, {"class": "x"}),
        (1, {"class": "gold", "value": 1.5}),
    ]
    assert client.get(batch_marker(key)) == b"1"


@pytest.mark.services
def test_an_empty_batch_moves_the_marker_only(
    redis_url: str, stream: tuple[redis.Redis, str]
) -> None:
    client, key = stream
    assert write_redis_batch(redis_url, key, 4, [])
    assert entries(client, key) == [] and client.get(batch_marker(key)) == b"4"


@pytest.mark.parametrize(
    ("kind", "path", "url", "message"),
    [
        ("kafka", None, "", "unknown sink 'kafka'"),
        ("json", None, "", "the json sink needs a directory"),
        ("redis", "out", "", "the redis sink needs a Redis URL"),
        ("redis", "bad key!", "redis://x", "stream key (sink_path) 'bad key!' must match"),
        ("redis", None, "redis://x", "stream key (sink_path) None must match"),
    ],
)
def test_a_sink_that_cannot_work_is_named_with_its_rule(
    kind: str, path: str | None, url: str, message: str
) -> None:
    with pytest.raises(SinkError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_sink(kind, path, url)


def test_a_file_sink_makes_its_directory(tmp_path: Path) -> None:
    check_sink("parquet", str(tmp_path / "a" / "b"))
    assert (tmp_path / "a" / "b").is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SinkError, match="cannot create the json sink directory"):
        check_sink("json", str(blocker / "sub"))

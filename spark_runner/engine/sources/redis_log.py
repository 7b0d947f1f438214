"""Redis Streams as the log the sources read, and the producer that fills them (no Spark).

Every scenario stream is one Redis stream (key ``<prefix>:<stream>``). An entry carries the
stream's columns either as fields (one per column, its value as text; a timestamp in epoch
seconds) or as one field ``json`` holding a JSON object; a column missing or unreadable
as its type is null in the row. Its id (``<ms>-<n>``, given by the server when it was
appended) is its arrival instant; its ``seq`` field numbers it (an entry without one gets
its id's number: ``ms × 2^20 + n``). Each class reads a stream through its own cursor kept in
the offsets (no consumer groups): the source takes what the class scheduler admits, the
rest waits in the stream.

Counting needs no scan: ``XINFO STREAM`` reports ``entries-added`` (Redis >= 7), so the
tuples that arrived since the run started are ``entries-added − base``. Entries must not be
trimmed while a run reads them.

:class:`Producer` replays a scenario's streams into Redis in real time, tuple by tuple at
their scheduled instants (``headroom produce``), with the same keys and values as the
generated source.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import redis

from spark_runner.engine.control.admission import kept_positions
from spark_runner.engine.sources.columns import ColumnSpec, column_values
from spark_runner.engine.sources.feed import FeedSpec, Slice
from spark_runner.engine.sources.offsets import PointState
from spark_runner.engine.sources.streams import StreamSpec

DEFAULT_PREFIX = "headroom"


_MAX_SEQ = 2**64 - 1
"""The largest sequence number of an entry id: ``<ms − 1>-_MAX_SEQ`` precedes every entry
appended at ``ms`` or later."""
_COUNT_CHUNK = 10_000


def stream_key(prefix: str, stream: str) -> str:
    return f"{prefix}:{stream}"


def id_seconds(entry_id: str) -> float:
    """The append instant (epoch s) of an entry id ``<ms>-<n>``."""
    return int(entry_id.split("-", 1)[0]) / 1000.0


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


JSON_FIELD = "json"
"""The field of an entry that holds its columns as one JSON object."""


def _fields(raw: Mapping[Any, Any]) -> dict[str, Any]:
    """An entry's columns by name: its fields, or the object in its ``json`` field."""
    fields = {_text(k): v for k, v in raw.items()}
    if JSON_FIELD in fields:
        try:
            document = json.loads(fields[JSON_FIELD])
        except (ValueError, UnicodeDecodeError):
            document = None
        if isinstance(document, dict):
            return {**fields, **{str(k): v for k, v in document.items()}}
    return fields


def _seq(entry_id: str, fields: Mapping[str, Any]) -> int:
    try:
        return int(fields["seq"])
    except (KeyError, TypeError, ValueError):
        ms, n = entry_id.split("-", 1)
        return (int(ms) << 20) + int(n)


class RedisLog:
    """Points reading Redis streams (the :class:`~spark_runner.engine.sources.feed.Log`
    protocol)."""

    def __init__(self, spec: FeedSpec, client: redis.Redis | None = None) -> None:
        self._spec = spec
        self._client = client or redis.Redis.from_url(spec.redis_url)
        self._keys = [spec.redis_keys[p.stream] for p in spec.points]
        self._columns = [spec.streams[p.stream].columns for p in spec.points]
        # per point, the last ``XINFO`` read by ``arrived``: entries added and the id of
        # the last of them, one instant's pair (``take`` places cursors from it)
        self._seen: dict[int, tuple[int, str]] = {}

    def _info(self, key: str) -> tuple[int, str]:
        try:
            info = self._client.xinfo_stream(key)
        except redis.ResponseError:  # no such key yet
            return 0, "0-0"
        return int(info["entries-added"]), _text(info["last-generated-id"])

    def initial(self, point: int, now_us: int) -> PointState:
        """The point's state at the run's start: its cursor at the stream's last entry,
        or, for a job taking over a class (``FeedSpec.start_s``), before the first entry
        appended at ``start_s`` or later, those entries waiting."""
        key = self._keys[point]
        added, last = self._info(key)
        if not self._spec.start_s:
            return PointState(head_s=now_us / 1e6, cursor=last, base=added)
        cursor = f"{round(self._spec.start_s * 1000) - 1}-{_MAX_SEQ}"
        waiting, first = self._count_after(key, cursor, last)
        head_s = id_seconds(first) if first is not None else now_us / 1e6
        return PointState(head_s=head_s, cursor=cursor, base=added - waiting)

    def _count_after(self, key: str, cursor: str, last: str) -> tuple[int, str | None]:
        """How many entries follow ``cursor`` up to ``last``, and the first one's id
        (Redis counts no range: they are read in chunks)."""
        count, first, after = 0, None, cursor
        while True:
            chunk = self._client.xrange(key, f"({after}", last, count=_COUNT_CHUNK) or []
            if not chunk:
                return count, first
            first = first or _text(chunk[0][0])
            count += len(chunk)
            after = _text(chunk[-1][0])
            if len(chunk) < _COUNT_CHUNK:
                return count, first

    def arrived(self, point: int, state: PointState, now_us: int) -> int:
        self._seen[point] = self._info(self._keys[point])
        return max(state.arrived, self._seen[point][0] - state.base)

    def take(self, point: int, state: PointState, count: int) -> str | None:
        """The id of the ``count``-th entry after the cursor. The driver reads as few
        entries as it can: none when ``count`` takes every entry ``arrived`` counted (the
        last one's id came with the count), else the shorter of the two ends."""
        key = self._keys[point]
        added, last = self._seen.get(point, (-1, ""))
        after = added - state.base - state.taken - count  # entries left up to ``last``
        if after == 0:
            return last
        if 0 < after < count:
            back = self._client.xrevrange(key, last, f"({state.cursor}", count=after + 1) or []
            if len(back) == after + 1:
                return _text(back[-1][0])
        entries = self._client.xrange(key, f"({state.cursor}", "+", count=count)
        return _text(entries[-1][0]) if entries else state.cursor

    def head_s(self, point: int, state: PointState, now_us: int) -> float:
        entries = self._client.xrange(self._keys[point], f"({state.cursor}", "+", count=1)
        return id_seconds(_text(entries[0][0])) if entries else now_us / 1e6

    def _taken(self, piece: Slice) -> list[Any]:
        """The entries ``piece`` took, oldest first; the ``skip`` shed as stale before
        them are not read (the taken ones end the range)."""
        key, before = self._keys[piece.point], f"({piece.cursor_before}"
        if piece.skip and piece.cursor_after:
            back = self._client.xrevrange(key, piece.cursor_after, before, count=piece.taken)
            return list(reversed(back or []))
        after = piece.cursor_after or "+"
        entries = self._client.xrange(key, before, after, count=piece.skip + piece.taken)
        return list(entries or [])[piece.skip :]

    def rows(self, piece: Slice) -> dict[str, Any]:
        """The kept entries of ``piece`` as columns (``point, seq, arrival_s`` and the
        stream's)."""
        entries = self._taken(piece)
        keep = kept_positions(len(entries), min(piece.kept, len(entries)), piece.j0, piece.j1)
        chosen = [(_text(i), _fields(f)) for i, f in (entries[int(k)] for k in keep)]
        columns = self._columns[piece.point]
        return {
            "point": np.full(len(chosen), piece.point, dtype=np.int32),
            "seq": np.array([_seq(i, f) for i, f in chosen], dtype=np.int64),
            "arrival_s": np.array([id_seconds(i) for i, _ in chosen], dtype=np.float64),
            **{c.name: column_values(c, [f.get(c.name) for _, f in chosen]) for c in columns},
        }


def _entry_value(column: ColumnSpec, value: Any) -> Any:
    """A generated value as an entry carries it (a timestamp in epoch seconds)."""
    if column.type == "timestamp":
        return int(value) / 1e6
    return value.item() if isinstance(value, np.generic) else value


def _field_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


@dataclass
class ProducerStats:
    """Entries appended per stream."""

    appended: dict[str, int]


class Producer:
    """Appends each stream's tuples to Redis at their scheduled instants, as fields or as
    one JSON object (``payload``); ``origin_s`` (epoch s) dates the ``arrival`` columns.

    ``step(now_s)`` appends every tuple due by ``now_s`` (scenario seconds) in one
    pipeline; ``run`` calls it every ``tick_s`` until ``duration_s`` or ``should_stop``.
    """

    def __init__(
        self,
        client: redis.Redis,
        streams: Mapping[str, StreamSpec],
        prefix: str = DEFAULT_PREFIX,
        max_per_step: int = 50_000,
        payload: str = "fields",
        origin_s: float = 0.0,
    ) -> None:
        if payload not in ("fields", JSON_FIELD):
            raise ValueError(f"payload is {payload!r}; it must be 'fields' or 'json'")
        self._payload = payload
        self._origin_s = origin_s
        self._client = client
        self._streams = dict(streams)
        self._prefix = prefix
        self._max_per_step = max_per_step
        self.appended = {name: 0 for name in streams}

    def keys(self) -> dict[str, str]:
        return {name: stream_key(self._prefix, name) for name in self._streams}

    def step(self, now_s: float) -> int:
        pipe = self._client.pipeline(transaction=False)
        added = 0
        for name, spec in self._streams.items():
            due = min(spec.arrived_before(now_s), self.appended[name] + self._max_per_step)
            if due <= self.appended[name]:
                continue
            seqs = np.arange(self.appended[name], due, dtype=np.int64)
            values = spec.values_of(seqs, spec.arrival_times(seqs) + self._origin_s)
            key = stream_key(self._prefix, name)
            for j, s in enumerate(seqs.tolist()):
                row = {c.name: _entry_value(c, values[c.name][j]) for c in spec.columns}
                if self._payload == JSON_FIELD:
                    pipe.xadd(key, {"seq": s, JSON_FIELD: json.dumps(row)})
                else:
                    pipe.xadd(key, {"seq": s, **{k: _field_text(v) for k, v in row.items()}})
            added += len(seqs)
            self.appended[name] = due
        if added:
            pipe.execute()
        return added

    def run(
        self,
        duration_s: float,
        *,
        tick_s: float = 0.005,
        should_stop: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> ProducerStats:
        started = clock()
        while not should_stop():
            now_s = clock() - started
            if now_s >= duration_s:
                self.step(duration_s)
                break
            self.step(now_s)
            sleep(tick_s)
        return ProducerStats(dict(self.appended))

"""The sources' logic without Spark: next offsets, admission, partitions (no Spark import).

A *feed* is the input of one run: the points (class × stream) and where their tuples
wait — the generated schedule, or a Redis stream. :func:`next_offset` is what
``latestOffset`` does: read how many tuples arrived at every point, apply the newest
decision (:mod:`admission`) and return the end offset of the next batch, carrying the
decision. :func:`plan_partitions` is what ``partitions`` does: cut the batch's kept tuples
into a few slices of about equal work, one group per task.

Arrival instants come from the log: a generated tuple's scheduled instant, a broker
entry's append instant (its id). Nothing here reads a clock; ``now_us`` is handed in.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from spark_runner.engine.control.admission import (
    EdgeDemand,
    PointAdmission,
    PointDemand,
    admit,
    kept_positions,
)
from spark_runner.engine.sources.offsets import Decision, PointState, SourceOffset
from spark_runner.engine.sources.streams import StreamSpec

GENERATOR = "generator"
REDIS = "redis"
FILES = "files"
LOGS = (FILES, REDIS)
"""The sources that keep what arrived: a job can read them back from an instant."""


@dataclass(frozen=True)
class FeedPoint:
    """One point: class ``class_name`` reads ``stream`` through operator ``op_id``."""

    op_id: str
    class_name: str
    stream: str


@dataclass(frozen=True)
class FeedSpec:
    """Everything the source needs, written by the driver as JSON (see ``to_json``).

    Attributes:
        kind: ``generator``, ``redis`` or ``files``.
        backlog_us: generated streams only: how long before the run's first offset they
            start (a job started late), µs; else a stream starts producing when the query
            first asks for an offset, as Spark's rate source does — not when the driver
            started, so the JIT and Python workers' start-up is no backlog.
        points: in ``NetworkPlan.points`` order.
        streams: the generated schedules (also used by the Redis producer).
        decision_path: the file the controller writes its decisions to.
        partitions: tasks per batch (the cluster's cores).
        redis_url, redis_keys: the broker and one stream key per stream.
        files_dir: the files source's directory (a subdirectory per stream).
        edge_classes: ``(class index, name)`` of the classes that shed on an edge inside
            Spark; every row carries each one's shed fraction (column ``shed_<index>``).
        margins_s: per point, how much further than its class's event-time range it
            reads (:func:`~spark_runner.engine.dataflow.handoff.point_margins_s`).
        start_s: logs only (files, Redis): the arrival instant (epoch s) the log is read
            from, for a job that takes over a class at a switch instant; 0: what arrives
            after the run starts.
    """

    kind: str
    points: tuple[FeedPoint, ...]
    streams: Mapping[str, StreamSpec]
    decision_path: str
    partitions: int = 2
    redis_url: str = ""
    redis_keys: Mapping[str, str] = field(default_factory=dict)
    edge_classes: tuple[tuple[int, str], ...] = ()
    files_dir: str = ""
    backlog_us: int = 0
    margins_s: tuple[float, ...] = ()
    start_s: float = 0.0

    def margin_s(self, point: int) -> float:
        return self.margins_s[point] if point < len(self.margins_s) else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "backlog_us": self.backlog_us,
            "points": [[p.op_id, p.class_name, p.stream] for p in self.points],
            "streams": {n: s.to_json() for n, s in self.streams.items()},
            "decision_path": self.decision_path,
            "partitions": self.partitions,
            "redis_url": self.redis_url,
            "redis_keys": dict(self.redis_keys),
            "edge_classes": [list(e) for e in self.edge_classes],
            "files_dir": self.files_dir,
            "margins_s": list(self.margins_s),
            "start_s": self.start_s,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeedSpec:
        return cls(
            kind=str(data["kind"]),
            backlog_us=int(data.get("backlog_us", 0)),
            points=tuple(FeedPoint(str(a), str(b), str(c)) for a, b, c in data["points"]),
            streams={n: StreamSpec.from_json(s) for n, s in dict(data["streams"]).items()},
            decision_path=str(data["decision_path"]),
            partitions=int(data.get("partitions", 2)),
            redis_url=str(data.get("redis_url", "")),
            redis_keys={str(k): str(v) for k, v in dict(data.get("redis_keys", {})).items()},
            edge_classes=tuple((int(i), str(n)) for i, n in data.get("edge_classes", [])),
            files_dir=str(data.get("files_dir", "")),
            margins_s=tuple(float(m) for m in data.get("margins_s", ())),
            start_s=float(data.get("start_s", 0.0)),
        )

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json()), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> FeedSpec:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


class Log(Protocol):
    """Where a point's tuples wait (the generated schedule or a broker stream)."""

    def initial(self, point: int, now_us: int) -> PointState:
        """The counters at the start of a run."""

    def arrived(self, point: int, state: PointState, now_us: int) -> int:
        """Tuples arrived at ``point`` since the run started (cumulative)."""

    def take(self, point: int, state: PointState, count: int) -> str | None:
        """Take the next ``count`` waiting tuples; returns the new cursor (broker only)."""

    def head_s(self, point: int, state: PointState, now_us: int) -> float:
        """Arrival instant (epoch s) of the oldest tuple still waiting at ``state``."""


def origin_at(spec: FeedSpec, now_us: int) -> int:
    """Scenario time 0 of a run whose first offset is asked for at ``now_us``."""
    return now_us - spec.backlog_us


def initial_offset(spec: FeedSpec, log: Log, now_us: int) -> SourceOffset:
    """The run's first offset, asked for at ``now_us`` (``log`` is the log of the origin
    :func:`origin_at` gives)."""
    return SourceOffset(
        origin_us=origin_at(spec, now_us),
        t_us=now_us,
        points=tuple(log.initial(i, now_us) for i in range(len(spec.points))),
    )


def next_offset(
    spec: FeedSpec, log: Log, start: SourceOffset, decision: Decision, now_us: int
) -> SourceOffset:
    """The end offset of the next batch: arrivals up to ``now_us``, admission by ``decision``."""
    t_us = max(now_us, start.t_us)
    arrived = [log.arrived(i, s, t_us) for i, s in enumerate(start.points)]
    repeated = start.decision is not None and start.decision.version == decision.version
    if decision.discard and not repeated:
        return _discard(log, start, decision, arrived, t_us)
    stale = stale_counts(spec, start, decision, arrived)
    demands = [
        dataclasses.replace(d, waiting=d.waiting - stale[i])
        for i, d in enumerate(demands_of(spec, start, decision, arrived))
    ]
    admitted = admit(
        demands,
        decision.quotas,
        decision.budget_s,
        admit_all=decision.admit_all,
        edges=edge_demands(spec, decision),
        order=decision.order,
    )
    points: list[PointState] = []
    for i, (s, admission) in enumerate(zip(start.points, admitted.points, strict=True)):
        # the stale tuples (the oldest) are shed first, then the newer ones are admitted
        a = PointAdmission(
            stale[i] + admission.taken, admission.kept, stale[i] + admission.shed, admission.carry
        )
        cursor = log.take(i, s, a.taken) if a.taken else s.cursor
        moved = _advance(s, a, arrived[i], cursor, stale[i])
        points.append(_with_head(moved, log.head_s(i, moved, t_us)))
    keep = {name: k for name, k in admitted.edge_keep.items() if k < 1.0}
    return SourceOffset(start.origin_us, t_us, tuple(points), decision, keep)


def edge_demands(spec: FeedSpec, decision: Decision) -> list[EdgeDemand]:
    """The decision's edge costs by point index."""
    index = {p.op_id: i for i, p in enumerate(spec.points)}
    return [
        EdgeDemand(
            name,
            decision.shed.get(name, 0.0),
            {index[op_id]: c for op_id, c in costs.items() if op_id in index},
        )
        for name, costs in decision.edge_costs_s.items()
    ]


def stale_counts(
    spec: FeedSpec, start: SourceOffset, decision: Decision, arrived: Sequence[int]
) -> list[int]:
    """Per point, the oldest waiting tuples to shed before anything else: of the backlog
    (what waits beyond the tuples that arrived since the last batch was planned, which
    the floor's trigger wait already covers), what exceeds the class's ``stale_max``,
    shared by the class's points in proportion to their backlog. Tuples waiting in the
    log pass the shedder when taken, so a class shedding ``f`` may keep
    ``stale_max / (1 − f)`` of them."""
    backlog = [
        max(0, min(arrived[i] - s.taken, s.arrived - s.taken)) for i, s in enumerate(start.points)
    ]
    per_class: dict[str, int] = {}
    for p, b in zip(spec.points, backlog, strict=True):
        per_class[p.class_name] = per_class.get(p.class_name, 0) + b
    out = []
    for p, b in zip(spec.points, backlog, strict=True):
        limit = decision.stale_max.get(p.class_name)
        total = per_class[p.class_name]
        if limit is None or not b:
            out.append(0)
            continue
        keep = limit / max(1.0 - decision.shed.get(p.class_name, 0.0), 1e-3)
        out.append(max(0, int(b - keep * b / total)))
    return out


def _discard(
    log: Log, start: SourceOffset, decision: Decision, arrived: Sequence[int], t_us: int
) -> SourceOffset:
    """Take every waiting tuple without keeping or shedding it (end of a warm-up)."""
    points = []
    for i, s in enumerate(start.points):
        count = arrived[i] - s.taken
        cursor = log.take(i, s, count) if count > 0 else s.cursor
        moved = dataclasses.replace(s, arrived=arrived[i], taken=arrived[i], cursor=cursor)
        points.append(_with_head(moved, log.head_s(i, moved, t_us)))
    return SourceOffset(start.origin_us, t_us, tuple(points), decision)


def _advance(
    s: PointState, a: PointAdmission, arrived: int, cursor: str | None, stale: int = 0
) -> PointState:
    return PointState(
        arrived=arrived,
        taken=s.taken + a.taken,
        kept=s.kept + a.kept,
        shed=s.shed + a.shed,
        carry=a.carry,
        head_s=s.head_s,
        cursor=cursor,
        base=s.base,
        stale=s.stale + stale,
    )


def _with_head(s: PointState, head_s: float) -> PointState:
    return dataclasses.replace(s, head_s=head_s)


@dataclass(frozen=True, slots=True)
class Slice:
    """Kept tuples ``j0 .. j1-1`` of the ``kept`` among the ``taken`` that follow ``first``
    at one point: ``first`` is the first taken seq (generator) and the cursor before the
    batch / after it bound a broker range, whose first ``skip`` entries were shed as
    stale (``first`` and ``taken`` leave them out)."""

    point: int
    first: int
    taken: int
    kept: int
    j0: int
    j1: int
    cursor_before: str | None = None
    cursor_after: str | None = None
    skip: int = 0


def plan_partitions(
    spec: FeedSpec, start: SourceOffset, end: SourceOffset, costs_s: Mapping[str, float]
) -> list[list[Slice]]:
    """The batch's kept tuples cut into at most ``spec.partitions`` groups of equal work.

    Generated tuples: the points' kept tuples, one after the other, are cut at every
    ``1/partitions`` of the total work (a group may span points). A broker range is read
    whole by one task (its entry ids in between are unknown); those are packed largest
    first into the least loaded group.
    """
    works: list[tuple[int, PointState, PointState, float]] = []
    for i, (a, b) in enumerate(zip(start.points, end.points, strict=True)):
        kept = b.kept - a.kept
        if kept > 0:
            cost = costs_s.get(spec.points[i].op_id, 0.0) or 1e-6
            works.append((i, a, b, cost))
    if not works:
        return []
    parts = max(1, spec.partitions)
    if spec.kind == REDIS:
        pieces = [
            ((b.kept - a.kept) * cost, _slice(i, a, b, 0, b.kept - a.kept))
            for i, a, b, cost in works
        ]
        bins: list[tuple[float, list[Slice]]] = [(0.0, []) for _ in range(min(parts, len(pieces)))]
        for work, piece in sorted(pieces, key=lambda x: -x[0]):
            k = min(range(len(bins)), key=lambda b: bins[b][0])
            bins[k] = (bins[k][0] + work, [*bins[k][1], piece])
        return [b for _, b in bins if b]
    total = sum((b.kept - a.kept) * cost for _, a, b, cost in works)
    target = total / parts
    groups: list[list[Slice]] = [[]]
    filled = 0.0
    for i, a, b, cost in works:
        kept = b.kept - a.kept
        j = 0
        while j < kept:
            room = target - filled
            take = kept - j if len(groups) == parts else min(kept - j, max(1, round(room / cost)))
            groups[-1].append(_slice(i, a, b, j, j + take))
            filled += take * cost
            j += take
            if filled >= target * (1 - 1e-9) and len(groups) < parts:
                groups.append([])
                filled = 0.0
    return [g for g in groups if g]


def _slice(i: int, a: PointState, b: PointState, j0: int, j1: int) -> Slice:
    skip = b.stale - a.stale
    return Slice(
        i, a.taken + skip, b.taken - a.taken - skip, b.kept - a.kept, j0, j1, a.cursor, b.cursor,
        skip,
    )  # fmt: skip


def demands_of(
    spec: FeedSpec, offset: SourceOffset, decision: Decision, arrived: Sequence[int]
) -> list[PointDemand]:
    """The admission inputs at ``offset`` given the cumulative arrivals per point."""
    return [
        PointDemand(
            p.class_name,
            max(0, arrived[i] - s.taken),
            decision.shed.get(p.class_name, 0.0),
            decision.costs_s.get(p.op_id, 0.0),
            s.carry,
        )
        for i, (p, s) in enumerate(zip(spec.points, offset.points, strict=True))
    ]


ROW_COLUMNS = ("point", "seq", "arrival_s")
"""The columns every row has before its stream's own."""


class GeneratedLog:
    """The generated schedule as a log: tuple ``n`` waits from its scheduled instant on.

    ``origin_us`` is the run's scenario time 0 — the one in the offsets, so a run
    resumed from a checkpoint regenerates the tuples of its first run.
    """

    def __init__(self, spec: FeedSpec, origin_us: int) -> None:
        self._spec = spec
        self._origin_us = origin_us
        self._origin_s = self._origin_us / 1e6
        self._streams = [spec.streams[p.stream] for p in spec.points]

    def initial(self, point: int, now_us: int) -> PointState:
        return PointState(head_s=self._origin_s)

    def arrived(self, point: int, state: PointState, now_us: int) -> int:
        return self._streams[point].arrived_before((now_us - self._origin_us) / 1e6)

    def take(self, point: int, state: PointState, count: int) -> str | None:
        return None

    def head_s(self, point: int, state: PointState, now_us: int) -> float:
        if state.taken >= state.arrived:
            return now_us / 1e6
        first = self._streams[point].arrival_times(np.array([state.taken]))
        return self._origin_s + float(first[0])

    def rows(self, piece: Slice) -> dict[str, np.ndarray]:
        """The kept tuples of ``piece`` as columns (``ROW_COLUMNS``, then the stream's)."""
        stream = self._streams[piece.point]
        seqs = piece.first + kept_positions(piece.taken, piece.kept, piece.j0, piece.j1)
        arrival_s = self._origin_s + stream.arrival_times(seqs)
        return {
            "point": np.full(len(seqs), piece.point, dtype=np.int32),
            "seq": seqs,
            "arrival_s": arrival_s,
            **stream.values_of(seqs, arrival_s),
        }

"""What the sources write into Spark's offset log, and the decisions they apply (no Spark).

The end offset of every micro-batch records, per point, cumulative counters — tuples
arrived, taken from the log, kept (processed) and shed, the shed carry, the log cursor —
and the :class:`Decision` that applied to the batch. Spark writes the offset to its
write-ahead offset log before the batch runs, so:

- a batch replayed after a failure reads exactly the same tuples and drops exactly the
  same ones (the partitions follow from the start and end offsets alone);
- the driver learns the batch's exact counts by reading the two offsets
  (:func:`read_offset_log`), with no extra Spark job.

The driver hands decisions to the source through a small JSON file, replaced atomically
(:func:`write_decision` / :func:`read_decision`); the source reads it at every
``latestOffset`` (when Spark plans the next batch).
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decision:
    """What the class scheduler and the shedders apply to the next batch.

    Attributes:
        version: increases with every controller step (0: before the first step).
        shed: per class, the fraction of taken tuples to drop (after recommend-only).
        quotas: per class, the share of the batch budget (sum 1).
        budget_s: seconds of work one batch may take.
        costs_s: per point op id, work per kept tuple (s) over the operators its class
            owns.
        edge_costs_s: per class that sheds on an edge (after a higher class's shared
            segment), per point op id of the owner, that class's work per tuple kept at
            the point, before its shed fraction (s; see :class:`admission.EdgeDemand`).
        admit_all: take every waiting tuple (no class scheduler: the "plain" engine).
        config_version: live configuration version in force.
        discard: drop every tuple waiting now without processing it, once (the end of a
            warm-up: what arrived while the JVM and the workers warmed up is not part of
            the measured run).
        stale_max: per class, the most tuples that may wait at its points (stale first,
            DILoS's ``StaleRule``); the oldest beyond it are shed before anything else.
        hold: plan no new batch (the job is stopping): the source offers no new data, so
            Spark runs no batch after the one in progress and the query can stop between
            triggers.
        after_us: the end instant (``SourceOffset.t_us``) of the batch the controller had
            accounted for when it decided; the source plans the next batch with it (it
            waits briefly for the step of the batch that just ended, see ``source``).
        pace_s: the least time between the starts of two batches, s (:mod:`pacing`);
            0: a batch may start at every trigger.
        order: the classes, highest priority first: budget no class's quota needs goes
            to them in this order (:func:`admission.water_fill`).
        ranges: per class moving between jobs, the event time ``[from, until)`` this job
            computes for it (epoch s, None: open; ``LiveConfig.ranges``): the sources
            drop its other tuples as they read them.
    """

    version: int = 0
    shed: Mapping[str, float] = field(default_factory=dict)
    quotas: Mapping[str, float] = field(default_factory=dict)
    budget_s: float = 0.0
    costs_s: Mapping[str, float] = field(default_factory=dict)
    edge_costs_s: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    admit_all: bool = True
    config_version: int = 0
    discard: bool = False
    stale_max: Mapping[str, float] = field(default_factory=dict)
    hold: bool = False
    after_us: int = 0
    pace_s: float = 0.0
    order: tuple[str, ...] = ()
    ranges: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "v": self.version,
            "f": {k: round(v, 9) for k, v in self.shed.items()},
            "q": {k: round(v, 9) for k, v in self.quotas.items()},
            "B": round(self.budget_s, 9),
            "c": _significant(self.costs_s),
            **(
                {"e": {k: _significant(v) for k, v in self.edge_costs_s.items()}}
                if self.edge_costs_s
                else {}
            ),
            "all": self.admit_all,
            "cv": self.config_version,
            **({"x": True} if self.discard else {}),
            **({"s": _rounded(self.stale_max, 3)} if self.stale_max else {}),
            **({"h": True} if self.hold else {}),
            **({"a": self.after_us} if self.after_us else {}),
            **({"p": round(self.pace_s, 6)} if self.pace_s else {}),
            **({"o": list(self.order)} if self.order else {}),
            **({"r": {k: list(v) for k, v in self.ranges.items()}} if self.ranges else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Decision:
        return cls(
            version=int(data.get("v", 0)),
            shed={str(k): float(v) for k, v in dict(data.get("f", {})).items()},
            quotas={str(k): float(v) for k, v in dict(data.get("q", {})).items()},
            budget_s=float(data.get("B", 0.0)),
            costs_s={str(k): float(v) for k, v in dict(data.get("c", {})).items()},
            edge_costs_s={
                str(k): {str(p): float(c) for p, c in dict(v).items()}
                for k, v in dict(data.get("e", {})).items()
            },
            admit_all=bool(data.get("all", True)),
            config_version=int(data.get("cv", 0)),
            discard=bool(data.get("x", False)),
            stale_max={str(k): float(v) for k, v in dict(data.get("s", {})).items()},
            hold=bool(data.get("h", False)),
            after_us=int(data.get("a", 0)),
            pace_s=float(data.get("p", 0.0)),
            order=tuple(str(n) for n in data.get("o", ())),
            ranges={
                str(k): (_bound(a), _bound(b)) for k, (a, b) in dict(data.get("r", {})).items()
            },
        )

    def range_s(self, class_name: str, margin_s: float = 0.0) -> tuple[float, float] | None:
        """The event time ``[from, until)`` the sources keep of class ``class_name``,
        widened by ``margin_s`` on both sides; None: all of it."""
        if class_name not in self.ranges:
            return None
        low, high = self.ranges[class_name]
        return (
            -math.inf if low is None else low - margin_s,
            math.inf if high is None else high + margin_s,
        )


def _bound(value: Any) -> float | None:
    return None if value is None else float(value)


def _rounded(values: Mapping[str, float], digits: int) -> dict[str, float]:
    return {k: round(v, digits) for k, v in values.items()}


def _significant(values: Mapping[str, float]) -> dict[str, float]:
    return {k: float(f"{v:.6g}") for k, v in values.items()}


ADMIT_ALL = Decision()
"""Before the controller's first decision: take everything, shed nothing."""


@dataclass(frozen=True, slots=True)
class PointState:
    """Cumulative counters of one point since the run started.

    Attributes:
        arrived: tuples that arrived in the log.
        taken: tuples taken from the log (``kept + shed``); ``arrived − taken`` wait.
        kept: tuples processed.
        shed: tuples dropped by the shedder (``stale`` included).
        carry: fractional shed remainder.
        head_s: arrival instant (epoch s) of the oldest waiting tuple, or of the end of
            the window when none waits.
        cursor: broker streams only: id of the last entry taken.
        base: broker streams only: entries the stream held before the run.
        stale: tuples shed as stale (the oldest beyond ``Decision.stale_max``), taken
            from the log in a batch of their own at that point.
    """

    arrived: int = 0
    taken: int = 0
    kept: int = 0
    shed: int = 0
    carry: float = 0.0
    head_s: float = 0.0
    cursor: str | None = None
    base: int = 0
    stale: int = 0

    @property
    def waiting(self) -> int:
        return self.arrived - self.taken

    def to_json(self) -> list[Any]:
        row: list[Any] = [
            self.arrived,
            self.taken,
            self.kept,
            self.shed,
            round(self.carry, 9),
            round(self.head_s, 6),
        ]
        if self.cursor is not None or self.stale:
            row += [self.cursor, self.base]
        if self.stale:
            row.append(self.stale)
        return row

    @classmethod
    def from_json(cls, row: Sequence[Any]) -> PointState:
        cursor = str(row[6]) if len(row) > 6 and row[6] is not None else None
        base = int(row[7]) if len(row) > 7 else 0
        stale = int(row[8]) if len(row) > 8 else 0
        return cls(
            int(row[0]),
            int(row[1]),
            int(row[2]),
            int(row[3]),
            float(row[4]),
            float(row[5]),
            cursor,
            base,
            stale,
        )


@dataclass(frozen=True)
class SourceOffset:
    """One offset of the headroom source.

    Attributes:
        origin_us: the run's origin (epoch µs): scenario time 0.
        t_us: the instant the offset was taken (epoch µs); tuples arrived before it.
        points: per point (in ``NetworkPlan.points`` order), its counters.
        decision: the decision applied to the batch that ends here (``None`` for the
            initial offset).
        edge_keep: per class that sheds on an edge, the share of its edge tuples the
            batch keeps after its shed fraction, where its budget allocation does not
            cover them all (:mod:`admission`); absent: 1.
    """

    origin_us: int
    t_us: int
    points: tuple[PointState, ...]
    decision: Decision | None = None
    edge_keep: Mapping[str, float] = field(default_factory=dict)

    def run_start(self) -> SourceOffset:
        """The start of the run's first batch: its origin, nothing arrived yet (the first
        batch's window reaches back to it, over any backlog the streams began with)."""
        return SourceOffset(
            self.origin_us, self.origin_us, tuple(PointState() for _ in self.points)
        )

    def edge_shed(self, class_name: str) -> float:
        """The fraction of its edge tuples ``class_name`` sheds in the batch ending here."""
        shed = self.decision.shed.get(class_name, 0.0) if self.decision else 0.0
        return 1.0 - (1.0 - shed) * self.edge_keep.get(class_name, 1.0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "origin_us": self.origin_us,
            "t_us": self.t_us,
            "p": [p.to_json() for p in self.points],
        }
        if self.decision is not None:
            out["d"] = self.decision.to_json()
        if self.edge_keep:
            out["k"] = _rounded(self.edge_keep, 9)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SourceOffset:
        decision = data.get("d")
        return cls(
            origin_us=int(data["origin_us"]),
            t_us=int(data["t_us"]),
            points=tuple(PointState.from_json(r) for r in data["p"]),
            decision=Decision.from_json(decision) if decision is not None else None,
            edge_keep={str(k): float(v) for k, v in dict(data.get("k", {})).items()},
        )


@dataclass(frozen=True)
class BatchRecord:
    """One micro-batch as the offset log records it: its start and end offsets.

    ``delta(i)`` gives the batch's counts at point ``i``: arrived during the window,
    taken, kept and shed.
    """

    batch_id: int
    start: SourceOffset
    end: SourceOffset

    @property
    def decision(self) -> Decision:
        return self.end.decision or ADMIT_ALL

    @property
    def window_s(self) -> tuple[float, float]:
        return self.start.t_us / 1e6, self.end.t_us / 1e6

    def delta(self, i: int) -> PointState:
        a, b = self.start.points[i], self.end.points[i]
        return PointState(
            arrived=b.arrived - a.arrived,
            taken=b.taken - a.taken,
            kept=b.kept - a.kept,
            shed=b.shed - a.shed,
            carry=b.carry,
            head_s=b.head_s,
            stale=b.stale - a.stale,
        )


def read_offset_log(checkpoint_dir: str | Path, batch_id: int) -> SourceOffset:
    """The headroom source's offset in Spark's offset log entry ``batch_id``.

    An entry is ``v1``, a metadata line, then one JSON line per source; the query reads
    one source per point, and every one holds the same joint offset (see ``source``). An
    entry whose sources disagree is read by its first source, with a warning: the batch's
    counts (read by every source) then disagree with its offsets.
    """
    path = Path(checkpoint_dir) / "offsets" / str(batch_id)
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < 3 or not lines[0].startswith("v"):
        raise ValueError(f"{path}: not a Spark offset log entry ({len(lines)} lines)")
    offsets = [json.loads(line) for line in lines[2:]]
    differ = sum(offset != offsets[0] for offset in offsets)
    if differ:
        log.warning(
            "batch %d: %d of its %d sources hold another offset than the first in %s; "
            "its counts are read against the first",
            batch_id,
            differ,
            len(offsets),
            path,
        )
    return SourceOffset.from_json(offsets[0])


def write_decision(path: str | Path, decision: Decision) -> None:
    """Replace the decision file atomically (readers never see half a file)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".decision-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(decision.to_json(), f, separators=(",", ":"))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_decision(path: str | Path) -> Decision:
    """The newest decision, or :data:`ADMIT_ALL` when none was written yet."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ADMIT_ALL
    return Decision.from_json(json.loads(text))

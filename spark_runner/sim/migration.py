"""Moving a windowed query between two simulated jobs, tuple by tuple in simulated time:
window recreation (UniMiCo's hand-off, 001 §7.2, no state moved:
:class:`~spark_runner.core.migration.HandOff` decides who reads and emits what) against
state transfer (StreamCloud's state recreation, 002 §V: the origin stops at the switch
instant and ships the open windows' state; the target buffers until it is installed).

A query is one window grid (``length``, ``slide``, ms) over tuples with a key and an
integer value: ``aggregate`` sums stream S per (window, key); ``join`` pairs S and T per
(window, key), Spark's window join; ``join_aggregate`` sums S's values over those pairs.
A result is determined by its (window, key)'s *content*: the S and T tuples it holds
(their count, a multiset hash of their ids, S's value sum). Comparing contents with an
uninterrupted run's finds a missing, duplicated (emitted by both jobs) or wrong result;
equal contents give equal results for every kind.

Each job is one FIFO server with a cost per tuple read and a batch cycle: a window's
result leaves at the first batch end after its end and after the job finished the last
of its tuples. Its response time is that instant minus the window's end.

Pure: no Spark, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from spark_runner.core.errors import ParameterError
from spark_runner.core.migration import HandOff

Kind = Literal["aggregate", "join", "join_aggregate"]
Mode = Literal["window_recreation", "state_transfer"]
_HASH = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class Query:
    kind: Kind
    length_ms: int
    slide_ms: int

    def __post_init__(self) -> None:
        if self.slide_ms <= 0 or self.length_ms % self.slide_ms:
            raise ParameterError("length_ms", self.length_ms, "must be a multiple of slide_ms > 0")


@dataclass(frozen=True)
class Workload:
    """Streams (S, and T for a join) of ``rate_per_s`` tuples a second at uniformly random
    instants, with uniform keys, from t = 0."""

    rate_per_s: float
    keys: int
    duration_s: float
    seed: int = 1


@dataclass(frozen=True)
class Jobs:
    """Both jobs' speed, and what state transfer costs."""

    cost_per_tuple_s: float = 0.0002
    batch_s: float = 0.5
    batch_offset_s: float = 0.2  # batches end at offset + k × batch_s, off the window grid
    bandwidth_bytes_per_s: float = 50e6
    entry_bytes: int = 48  # an aggregate's (window, key, sum, count) in Spark's state store
    tuple_bytes: int = 64  # a join's buffered row
    # a query started with an initial state pays a first batch: 4.5-4.9 s on this
    # machine's Spark (spark-facts.md, the start-up batch)
    install_s: float = 4.5


@dataclass(frozen=True)
class Tuples:
    """A run's input, one row per tuple, in event-time (= arrival) order."""

    ts_ms: np.ndarray  # sorted
    key: np.ndarray
    value: np.ndarray
    side: np.ndarray  # 0: S, 1: T
    ident: np.ndarray


@dataclass(frozen=True)
class Outcome:
    """One migration against the uninterrupted run of the same input."""

    mode: Mode
    results: int
    missing: int
    duplicated: int
    wrong: int
    bytes_moved: int
    read_twice: int
    completion_s: float
    rt_s: np.ndarray  # the results' response times, in window-end order
    rt_uninterrupted_s: np.ndarray
    ends_s: np.ndarray  # the results' window ends, the same order
    ends_uninterrupted_s: np.ndarray
    span_s: tuple[float, float]  # the hand-off: from the command to its completion

    def near_handoff(self, margin_s: float) -> tuple[np.ndarray, np.ndarray]:
        """Masks of the results (migrated, uninterrupted) whose window ends within
        ``margin_s`` of the hand-off's span."""
        lo, hi = self.span_s[0] - margin_s, self.span_s[1] + margin_s
        return (
            (self.ends_s >= lo) & (self.ends_s <= hi),
            (self.ends_uninterrupted_s >= lo) & (self.ends_uninterrupted_s <= hi),
        )


def generate(workload: Workload, query: Query) -> Tuples:
    """``workload``'s tuples for ``query`` (a join reads two streams)."""
    rng = np.random.default_rng(workload.seed)
    sides = 2 if query.kind != "aggregate" else 1
    n = int(workload.rate_per_s * workload.duration_s)
    ts = np.concatenate(
        [np.sort(rng.integers(0, int(workload.duration_s * 1000), n)) for _ in range(sides)]
    )
    side = np.repeat(np.arange(sides), n)
    order = np.argsort(ts, kind="stable")
    return Tuples(
        ts_ms=ts[order],
        key=rng.integers(0, workload.keys, ts.size)[order],
        value=rng.integers(0, 100, ts.size)[order],
        side=side[order],
        ident=np.arange(ts.size, dtype=np.uint64)[order],
    )


def _assign(t: Tuples, query: Query, lo_start: int, hi_start: int, rows: np.ndarray) -> np.ndarray:
    """(tuple row, window start) pairs of ``rows`` for the windows starting in
    ``[lo_start, hi_start]``, as an (n, 2) array."""
    per = query.length_ms // query.slide_ms
    last = t.ts_ms[rows] // query.slide_ms * query.slide_ms
    starts = last[:, None] - np.arange(per)[None, :] * query.slide_ms
    mine = (starts >= lo_start) & (starts <= hi_start)
    r, c = np.nonzero(mine)
    return np.stack([rows[r], starts[r, c]], axis=1)


def contents(t: Tuples, query: Query, pairs: np.ndarray, keys: int) -> dict[str, np.ndarray]:
    """Per (window, key) code: the content digest, for the codes the query emits."""
    code = pairs[:, 1] // query.slide_ms * keys + t.key[pairs[:, 0]]
    codes, inverse = np.unique(code, return_inverse=True)
    rows = pairs[:, 0]
    s = t.side[rows] == 0
    digest = {"code": codes}
    for name, mask in (("s", s), ("t", ~s)):
        digest[f"n_{name}"] = np.bincount(inverse, mask, codes.size)
        hashed = (t.ident[rows] * _HASH) >> np.uint64(16)
        digest[f"h_{name}"] = np.bincount(inverse, np.where(mask, hashed, 0) % 2**40, codes.size)
    digest["sum_s"] = np.bincount(inverse, np.where(s, t.value[rows], 0), codes.size)
    emitted = digest["n_s"] > 0
    if query.kind != "aggregate":
        emitted &= digest["n_t"] > 0
    return {k: v[emitted] for k, v in digest.items()}


def _compare(
    reference: dict[str, np.ndarray], parts: list[dict[str, np.ndarray]]
) -> tuple[int, int, int]:
    """Missing, duplicated and wrong results of ``parts`` against ``reference``."""
    merged = {k: np.concatenate([p[k] for p in parts]) for k in reference}
    codes, counts = np.unique(merged["code"], return_counts=True)
    duplicated = int((counts > 1).sum())
    missing = int(np.setdiff1d(reference["code"], codes).size)
    _, ri, mi = np.intersect1d(reference["code"], merged["code"], return_indices=True)
    differs = np.zeros(ri.size, dtype=bool)
    for k in reference:
        differs |= reference[k][ri] != merged[k][mi]
    extra = int(np.setdiff1d(codes, reference["code"]).size)
    return missing, duplicated, int(differs.sum()) + extra


def finish_times(arrival_s: np.ndarray, cost_s: float, ready_s: float = 0.0) -> np.ndarray:
    """FIFO service of tuples arriving at ``arrival_s`` (sorted), none started before
    ``ready_s``: ``f_i = max(a_i, ready, f_{i-1}) + c`` in closed form."""
    b = np.maximum(arrival_s, ready_s)
    i = np.arange(b.size)
    return (i + 1) * cost_s + np.maximum.accumulate(b - i * cost_s)


def _window_rt(
    t: Tuples, rows: np.ndarray, starts: np.ndarray, query: Query, jobs: Jobs, ready_s: float = 0.0
) -> np.ndarray:
    """Response time of each window start in ``starts`` on a job that reads ``rows``."""
    ts = t.ts_ms[rows]
    finish = finish_times(ts / 1000.0, jobs.cost_per_tuple_s, ready_s)
    ends = starts + query.length_ms
    last = np.searchsorted(ts, ends) - 1
    done = np.maximum(ends / 1000.0, np.where(last >= 0, finish[np.maximum(last, 0)], 0.0))
    batches = np.ceil((done - jobs.batch_offset_s) / jobs.batch_s - 1e-9)
    return batches * jobs.batch_s + jobs.batch_offset_s - ends / 1000.0


def _last_emitted_start(t_ms: int, query: Query) -> int:
    """The start of the last window that ended by ``t_ms``."""
    return (t_ms - query.length_ms) // query.slide_ms * query.slide_ms


def migrate(
    workload: Workload,
    query: Query,
    jobs: Jobs,
    command_ms: int,
    mode: Mode,
    plan: HandOff | None = None,
) -> Outcome:
    """Move ``query`` at ``command_ms`` and compare with the uninterrupted run. ``plan``
    replaces the hand-off :meth:`HandOff.plan` makes (window recreation only)."""
    t = generate(workload, query)
    everyone = np.arange(t.ts_ms.size)
    last_start = int(workload.duration_s * 1000) - query.length_ms
    reference = contents(t, query, _assign(t, query, 0, last_start, everyone), workload.keys)
    ref_rt = _result_rt(
        reference, query, workload.keys, lambda w: _window_rt(t, everyone, w, query, jobs)
    )
    if mode == "window_recreation":
        hand = plan or HandOff.plan(
            query.length_ms, query.slide_ms, command_ms, _last_emitted_start(command_ms, query)
        )
        return _recreate(t, query, workload, jobs, command_ms, hand, reference, ref_rt)
    return _transfer(t, query, workload, jobs, command_ms, reference, ref_rt)


def _result_rt(
    digest: dict[str, np.ndarray],
    query: Query,
    keys: int,
    rt_of: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """Each result's response time, from ``rt_of`` its window's start."""
    starts, inverse = np.unique(digest["code"] // keys * query.slide_ms, return_inverse=True)
    return rt_of(starts)[inverse]


def _in_order(parts: list[tuple[dict[str, np.ndarray], np.ndarray]]) -> np.ndarray:
    codes = np.concatenate([d["code"] for d, _ in parts])
    return np.concatenate([rt for _, rt in parts])[np.argsort(codes, kind="stable")]


def _ends_s(query: Query, keys: int, *digests: dict[str, np.ndarray]) -> np.ndarray:
    """The window ends of ``digests``' results, in code order."""
    codes = np.sort(np.concatenate([d["code"] for d in digests]), kind="stable")
    return (codes // keys * query.slide_ms + query.length_ms) / 1000.0


def _recreate(
    t: Tuples,
    query: Query,
    workload: Workload,
    jobs: Jobs,
    command_ms: int,
    hand: HandOff,
    reference: dict[str, np.ndarray],
    ref_rt: np.ndarray,
) -> Outcome:
    """The origin reads up to its last window's end and emits the windows up to the
    migration timestamp; the target reads from the command and emits from activation."""
    keys, last_start = workload.keys, int(workload.duration_s * 1000) - query.length_ms
    origin = np.flatnonzero(t.ts_ms < hand.origin_until)
    target = np.flatnonzero(t.ts_ms >= command_ms)
    kept = target[t.ts_ms[target] >= hand.activation]  # the target drops what is older
    mine = contents(t, query, _assign(t, query, 0, hand.ts_mi, origin), keys)
    theirs = contents(t, query, _assign(t, query, hand.activation, last_start, kept), keys)
    origin_rt = _result_rt(mine, query, keys, lambda w: _window_rt(t, origin, w, query, jobs))
    target_rt = _result_rt(theirs, query, keys, lambda w: _window_rt(t, target, w, query, jobs))
    last = _window_rt(t, origin, np.array([hand.ts_mi]), query, jobs)[0]
    return _outcome(
        "window_recreation",
        query,
        keys,
        (reference, ref_rt),
        [(mine, origin_rt), (theirs, target_rt)],
        bytes_moved=0,
        read_twice=int(np.intersect1d(origin, target).size),
        span_s=(command_ms / 1000.0, hand.origin_until / 1000.0 + last),
    )


def _transfer(
    t: Tuples,
    query: Query,
    workload: Workload,
    jobs: Jobs,
    switch_ms: int,
    reference: dict[str, np.ndarray],
    ref_rt: np.ndarray,
) -> Outcome:
    """The origin stops at the switch and ships the open windows' state; the target
    buffers what arrives until the state is installed, then finishes those windows."""
    keys, last_start = workload.keys, int(workload.duration_s * 1000) - query.length_ms
    closed = _last_emitted_start(switch_ms, query)  # this window and earlier ones ended
    origin = np.flatnonzero(t.ts_ms < switch_ms)
    target = np.flatnonzero(t.ts_ms >= switch_ms)
    open_state = _assign(t, query, closed + query.slide_ms, last_start, origin)
    if query.kind == "aggregate":
        moved = np.unique(open_state[:, 1] // query.slide_ms * keys + t.key[open_state[:, 0]]).size
        state_bytes = int(moved) * jobs.entry_bytes
    else:
        state_bytes = int(open_state.shape[0]) * jobs.tuple_bytes
    ready_s = switch_ms / 1000.0 + state_bytes / jobs.bandwidth_bytes_per_s + jobs.install_s
    mine = contents(t, query, _assign(t, query, 0, closed, origin), keys)
    both = np.concatenate(
        [open_state, _assign(t, query, closed + query.slide_ms, last_start, target)]
    )
    theirs = contents(t, query, both, keys)
    origin_rt = _result_rt(mine, query, keys, lambda w: _window_rt(t, origin, w, query, jobs))
    target_rt = _result_rt(
        theirs, query, keys, lambda w: _window_rt(t, target, w, query, jobs, ready_s)
    )
    buffered = target[t.ts_ms[target] / 1000.0 < ready_s]
    drained = finish_times(t.ts_ms[target] / 1000.0, jobs.cost_per_tuple_s, ready_s)
    done_s = drained[buffered.size - 1] if buffered.size else ready_s
    return _outcome(
        "state_transfer",
        query,
        keys,
        (reference, ref_rt),
        [(mine, origin_rt), (theirs, target_rt)],
        bytes_moved=state_bytes,
        read_twice=0,
        span_s=(switch_ms / 1000.0, max(ready_s, done_s)),
    )


def _outcome(
    mode: Mode,
    query: Query,
    keys: int,
    reference: tuple[dict[str, np.ndarray], np.ndarray],
    parts: list[tuple[dict[str, np.ndarray], np.ndarray]],
    bytes_moved: int,
    read_twice: int,
    span_s: tuple[float, float],
) -> Outcome:
    """The migration's results (each side's digest and response times) against the
    uninterrupted run's."""
    digest, rt = reference
    missing, duplicated, wrong = _compare(digest, [d for d, _ in parts])
    return Outcome(
        mode=mode,
        results=int(digest["code"].size),
        missing=missing,
        duplicated=duplicated,
        wrong=wrong,
        bytes_moved=bytes_moved,
        read_twice=read_twice,
        completion_s=span_s[1] - span_s[0],
        rt_s=_in_order(parts),
        rt_uninterrupted_s=rt,
        ends_s=_ends_s(query, keys, *(d for d, _ in parts)),
        ends_uninterrupted_s=_ends_s(query, keys, digest),
        span_s=span_s,
    )

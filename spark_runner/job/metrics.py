"""Per-class metric samples of one micro-batch, from Spark-free inputs (no Spark import).

A micro-batch of the generated stream covers an arrival window [start, end): the offsets
of the batch (``source``), which Spark reports in the query progress after the batch has
committed. The batch's statistics come earlier, from ``foreachBatch``. The
``SampleAssembler`` joins the two by batch id and hands one ``MetricSample`` per class to
a sink.

Why the window and not the nominal control period: a batch that takes longer than the
trigger interval makes the next window longer too, so ``arrived / control_period_s``
would overstate the arrival rate exactly when the system is overloaded.

Response time of an output tuple = output instant − its (scheduled) arrival instant.
For a class with outputs in the batch: mean = t_out − mean(arrival), max = t_out −
min(arrival). All times are float seconds since the Unix epoch.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from spark_runner.job.generator import US_PER_S
from spark_runner.job.samples import MetricSample

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchWindow:
    """The arrival window [start_s, end_s) of a micro-batch."""

    start_s: float
    end_s: float

    @property
    def period_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class ClassOutputStats:
    """What one class produced in one micro-batch: count and arrival instants of outputs.

    ``score_sum`` digests the derived column, so the projection is really computed.
    """

    output_count: int
    arrival_min_s: float
    arrival_mean_s: float
    score_sum: float = 0.0


@dataclass(frozen=True)
class BatchStats:
    """Everything ``foreachBatch`` measured for one micro-batch, keyed by class index."""

    arrived: Mapping[int, int]
    outputs: Mapping[int, ClassOutputStats]
    t_out_s: float


def window_from_offsets(start_offset: str | None, end_offset: str) -> BatchWindow:
    """The arrival window between two source offsets as Spark reports them (JSON text).

    The first batch of a query has no start offset in its progress; it starts at the
    origin, which every offset carries.
    """
    end = json.loads(end_offset)
    end_us = int(end["t_us"])
    start_us = int(end["origin_us"])
    if start_offset:
        try:
            start = json.loads(start_offset)
        except json.JSONDecodeError:
            start = None  # Spark renders a missing start offset as "None" or "null".
        if isinstance(start, dict):
            start_us = int(start["t_us"])
    return BatchWindow(start_s=start_us / US_PER_S, end_s=end_us / US_PER_S)


def build_samples(
    batch_id: int,
    class_names: Sequence[str],
    stats: BatchStats,
    window: BatchWindow,
) -> list[MetricSample]:
    """One sample per class, in class order; classes absent from ``stats`` count zero.

    Response times are clamped at 0: an output cannot precede its arrival, and a
    negative value would only come from clock steps between processes.
    """
    period_s = window.period_s
    samples = []
    for class_id, name in enumerate(class_names):
        arrived = stats.arrived.get(class_id, 0)
        out = stats.outputs.get(class_id)
        rt_mean_s = rt_max_s = None
        output_count = 0
        if out is not None and out.output_count > 0:
            output_count = out.output_count
            rt_mean_s = max(0.0, stats.t_out_s - out.arrival_mean_s)
            rt_max_s = max(0.0, stats.t_out_s - out.arrival_min_s)
        samples.append(
            MetricSample(
                class_name=name,
                seq=batch_id,
                t=window.end_s,
                period_s=period_s,
                arrived_count=arrived,
                output_count=output_count,
                arrival_rate=arrived / period_s,
                response_time_mean_s=rt_mean_s,
                response_time_max_s=rt_max_s,
            )
        )
    return samples


SampleSink = Callable[[list[MetricSample]], None]


class SampleAssembler:
    """Joins batch statistics and batch windows by batch id; thread-safe.

    ``add_stats`` is called from ``foreachBatch``, ``add_window`` from the progress
    listener; whichever comes second emits the batch's samples to ``sink``.

    Spark reports progress only for a committed batch. Statistics still waiting when the
    query has stopped belong to a batch that was not committed, which a restart from the
    checkpoint replays with the same batch id; ``discard_pending`` drops them rather than
    send samples with a made-up window that the control plane would then keep in place
    of the replayed ones. At most ``max_pending`` batches wait; beyond that the oldest is
    emitted with a window of ``fallback_period_s`` ending at its output instant, so a
    silent listener cannot make the job hoard statistics.
    """

    def __init__(
        self,
        class_names: Sequence[str],
        sink: SampleSink,
        fallback_period_s: float,
        max_pending: int = 64,
    ) -> None:
        if fallback_period_s <= 0:
            raise ValueError(f"fallback_period_s is {fallback_period_s}; it must be > 0")
        if max_pending <= 0:
            raise ValueError(f"max_pending is {max_pending}; it must be > 0")
        self._class_names = tuple(class_names)
        self._sink = sink
        self._fallback_period_s = fallback_period_s
        self._max_pending = max_pending
        self._stats: dict[int, BatchStats] = {}
        self._windows: dict[int, BatchWindow] = {}
        self._lock = threading.Lock()

    def add_stats(self, batch_id: int, stats: BatchStats) -> None:
        ready: list[tuple[int, BatchStats, BatchWindow]] = []
        with self._lock:
            window = self._windows.pop(batch_id, None)
            if window is not None:
                ready.append((batch_id, stats, window))
            else:
                self._stats[batch_id] = stats
                while len(self._stats) > self._max_pending:
                    oldest = min(self._stats)
                    log.warning("no progress reported for batch %d; using nominal window", oldest)
                    old = self._stats.pop(oldest)
                    ready.append((oldest, old, self._fallback_window(old)))
        self._emit(ready)

    def add_window(self, batch_id: int, window: BatchWindow) -> None:
        ready: list[tuple[int, BatchStats, BatchWindow]] = []
        with self._lock:
            stats = self._stats.pop(batch_id, None)
            if stats is not None:
                ready.append((batch_id, stats, window))
            else:
                self._windows[batch_id] = window
                while len(self._windows) > self._max_pending:
                    del self._windows[min(self._windows)]
        self._emit(ready)

    def pending_batches(self) -> list[int]:
        with self._lock:
            return sorted(self._stats)

    def discard_pending(self) -> list[int]:
        """Forget statistics still waiting for their window; returns their batch ids."""
        with self._lock:
            pending = sorted(self._stats)
            self._stats.clear()
        return pending

    def _fallback_window(self, stats: BatchStats) -> BatchWindow:
        return BatchWindow(stats.t_out_s - self._fallback_period_s, stats.t_out_s)

    def _emit(self, ready: list[tuple[int, BatchStats, BatchWindow]]) -> None:
        for batch_id, stats, window in ready:
            usable = window if window.period_s > 0 else self._fallback_window(stats)
            self._sink(build_samples(batch_id, self._class_names, stats, usable))

"""The calibrated CPU cost of ``map`` operators (no Spark).

A map with ``cpu_cost_per_tuple_s: c`` costs exactly ``c`` seconds of CPU per tuple it
processes: the Python worker spins on its own thread's CPU clock for the sum of the costs
of the live rows in each Arrow batch (``mapInArrow`` in :mod:`pipeline`). Measuring the
thread's CPU time, not the wall clock, keeps the cost exact when the worker shares its
core with other processes: a busier machine takes longer, as a real operator would.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from spark_runner.engine.network import ACTIVE


def spin(cpu_s: float, clock: Callable[[], float] = time.thread_time) -> None:
    """Use ``cpu_s`` seconds of this thread's CPU time."""
    if cpu_s <= 0:
        return
    end = clock() + cpu_s
    while clock() < end:
        pass


def batch_cost_s(batch: pa.RecordBatch, costs: np.ndarray) -> float:
    """CPU seconds the live rows of ``batch`` cost, by their node."""
    node = batch.column("node").to_numpy(zero_copy_only=False)
    status = batch.column("status").to_numpy(zero_copy_only=False)
    live = node[status == ACTIVE]
    return float(costs[live].sum()) if len(live) else 0.0


def burn_batches(
    batches: Iterator[pa.RecordBatch], costs: Sequence[float]
) -> Iterator[pa.RecordBatch]:
    """Pass ``batches`` through, spending each one's cost first (``mapInArrow``)."""
    table = np.asarray(costs, dtype=np.float64)
    for batch in batches:
        spin(batch_cost_s(batch, table))
        yield batch

"""Running the engine in the test process on a shared local SparkSession."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql import SparkSession

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.samples import MetricSample
from spark_runner.engine.control.background import hog
from spark_runner.engine.control.controller import ControllerOptions
from spark_runner.engine.dataflow.network import NetworkPlan, compile_network
from spark_runner.engine.runner import EngineRun, RunSettings
from spark_runner.engine.sources.replay import admitted_tuples
from spark_runner.job.lifecycle import BatchGate, close_gate_when_quiet
from spark_runner.scenario import Scenario
from tests.waiting import wait_until


class Run:
    """One engine run; ``samples`` collects what the controller reports."""

    def __init__(
        self,
        spark: SparkSession,
        scenario: Scenario,
        tmp_path: Path,
        *,
        options: ControllerOptions | None = None,
        live: LiveConfig | None = None,
        **settings: Any,
    ) -> None:
        self.spark = spark
        self.samples: list[MetricSample] = []
        self.gate = BatchGate()
        self.engine = EngineRun(
            compile_network(scenario),
            RunSettings(
                name=f"test_{tmp_path.name}"[:60],
                checkpoint_dir=str(tmp_path / "checkpoint"),
                period_s=scenario.control.period_s,
                options=options or ControllerOptions(),
                **settings,
            ),
            live,
            samples=self.samples.extend,
        )

    def start(self) -> Run:
        self.engine.start(self.spark, self.gate.batch)
        return self

    def of(self, name: str) -> list[MetricSample]:
        return [s for s in list(self.samples) if s.class_name == name]

    def measured_periods(self) -> int:
        return len({s.seq for s in list(self.samples)})

    def failed(self) -> str | None:
        query = self.engine.query
        if query is not None and not query.isActive:
            return str(query.exception())
        return None

    def until(self, predicate: Callable[[], bool], timeout_s: float) -> None:
        def check() -> bool:
            failure = self.failed()
            assert failure is None, failure
            return predicate()

        assert wait_until(check, timeout_s), f"not reached within {timeout_s} s"

    def stop(self) -> None:
        query = self.engine.query
        if query is not None and query.isActive:
            close_gate_when_quiet(
                self.gate,
                trigger_active=lambda: bool(query.status["isTriggerActive"]),
                unreported_batches=self.engine.unreported_batches,
                quiet_wait_s=3.0,
                timeout_s=20.0,
            )
        self.engine.close()


def admitted(
    checkpoint: str | Path, plan: NetworkPlan, last_batch: int
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per (class, stream), the tuples batches 0..``last_batch`` admitted (the reference
    the outputs are checked against)."""
    tuples = admitted_tuples(checkpoint, last_batch)
    return {(p.class_name, p.stream): tuples[p.index] for p in plan.points}


@contextmanager
def cpu_hog(share: float) -> Iterator[None]:
    """A background job taking ``share`` of every core while the block runs (the engine's
    own hog, :func:`spark_runner.engine.control.background.hog`, started by the test)."""
    ctx = multiprocessing.get_context("spawn")
    processes = [
        ctx.Process(target=hog, args=(0.0, (0.0,), (share,), float("inf")), daemon=True)
        for _ in range(os.cpu_count() or 1)
    ]
    for p in processes:
        p.start()
    try:
        yield
    finally:
        for p in processes:
            p.terminate()
        for p in processes:
            p.join(5)

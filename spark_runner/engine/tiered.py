"""A job's streaming queries driven as one run: every class in one query, or a query per
priority tier (:mod:`tiers`), each an :class:`EngineRun` on the same SparkSession.

The job talks to this one object: it starts the queries (each tier in its FAIR pool),
hands a live configuration to every tier's controller (its classes' part), holds them
all for a stop, and writes one results document.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.snapshot import QueryLayout
from spark_runner.control.run import ClassTotals
from spark_runner.engine.dataflow.network import NetworkPlan, compile_network
from spark_runner.engine.dataflow.tiers import (
    POOL_PREFIX,
    check_tiers,
    merge_results,
    pool_shares,
    tier_classes,
    tier_live,
    tier_scenario,
    tier_sink_path,
)
from spark_runner.engine.runner import ActionSink, EngineRun, HandlerError, RunSettings, SampleSink

log = logging.getLogger(__name__)

POOL_PROPERTY = "spark.scheduler.pool"


class JobRuns:
    """The runs of a job's queries (one, or one per tier; see module docstring)."""

    def __init__(
        self,
        plan: NetworkPlan,
        settings: RunSettings,
        live: LiveConfig | None = None,
        samples: SampleSink | None = None,
        actions: ActionSink | None = None,
        queries: QueryLayout = "one",
    ) -> None:
        scenario = plan.scenario
        if queries == "tier":
            check_tiers(scenario)
        groups = tier_classes(scenario) if queries == "tier" else [list(plan.class_names)]
        if len(groups) == 1:
            plans = [plan]
        else:
            plans = [
                compile_network(tier_scenario(scenario, names, top=i == 0))
                for i, names in enumerate(groups)
            ]
        self.runs = [
            EngineRun(
                p,
                _tier_settings(settings, i, len(plans)),
                tier_live(live, p.class_names) if live is not None and len(plans) > 1 else live,
                samples=samples,
                actions=actions,
            )
            for i, p in enumerate(plans)
        ]

    @property
    def tiered(self) -> bool:
        return len(self.runs) > 1

    def start(self, spark: SparkSession, gate_batch: Callable[[], Any]) -> list[StreamingQuery]:
        """Start every query, a tier's in its FAIR pool (the query's thread inherits the
        pool from the thread that starts it)."""
        context = spark.sparkContext
        pools = self.tiered and _add_pools(spark, len(self.runs))
        queries = []
        try:
            for i, run in enumerate(self.runs):
                if pools:
                    context.setLocalProperty(POOL_PROPERTY, f"{POOL_PREFIX}{i}")
                queries.append(run.start(spark, gate_batch))
        finally:
            if pools:
                context.setLocalProperty(POOL_PROPERTY, None)  # type: ignore[arg-type]
        return queries

    @property
    def failure(self) -> HandlerError | None:
        return next((r.failure for r in self.runs if r.failure is not None), None)

    @property
    def config_version(self) -> int:
        return self.runs[0].controller.config_version

    def offer(self, config: LiveConfig) -> int | None:
        """Put a newer live configuration in force in every query's controller (each
        takes its classes' part); its version once every one took it, else None."""
        taken = [r.controller.offer(tier_live(config, r.plan.class_names)) for r in self.runs]
        return config.version if all(v is not None for v in taken) else None

    def hold(self) -> None:
        for run in self.runs:
            run.hold()

    def unreported_batches(self) -> list[int]:
        return [b for run in self.runs for b in run.unreported_batches()]

    def stop_threads(self) -> None:
        for run in self.runs:
            run.stop_threads()

    def class_summaries(self) -> dict[str, ClassTotals]:
        return {k: v for r in self.runs for k, v in r.controller.class_summaries().items()}

    def results(self, wall_s: float, master: str) -> dict[str, Any]:
        return merge_results([r.results(wall_s, master) for r in self.runs])


def _tier_settings(settings: RunSettings, tier: int, tiers: int) -> RunSettings:
    """Tier ``tier``'s run settings: its query name, checkpoint and sink (one query: the
    job's own)."""
    if tiers == 1:
        return settings
    return replace(
        settings,
        options=replace(settings.options, numbering=(tier, tiers)),
        name=f"{settings.name}_{POOL_PREFIX}{tier}",
        checkpoint_dir=f"{settings.checkpoint_dir}/{POOL_PREFIX}{tier}",
        sink_path=tier_sink_path(settings.sink, settings.sink_path, tier),
    )


def _add_pools(spark: SparkSession, tiers: int) -> bool:
    """Add the tiers' pools (:func:`tiers.pool_shares`) to Spark's FAIR scheduler; False
    when the application does not schedule FAIR (its queries then share Spark's FIFO)."""
    context = spark.sparkContext
    jsc = context._jsc.sc()
    if jsc.getSchedulingMode().toString() != "FAIR":
        log.warning("spark.scheduler.mode is not FAIR: the tiers' queries share Spark's FIFO")
        return False
    jvm = context._jvm
    assert jvm is not None
    root = jsc.taskScheduler().rootPool()
    fifo = jvm.org.apache.spark.scheduler.SchedulingMode.FIFO()
    shares = pool_shares(tiers, context.defaultParallelism)
    for name, min_share, weight in shares:
        if root.getSchedulableByName(name) is None:
            root.addSchedulable(jvm.org.apache.spark.scheduler.Pool(name, fifo, min_share, weight))
    log.info(
        "FAIR pools: %s",
        ", ".join(f"{n} (min share {m}, weight {w})" for n, m, w in shares),
    )
    return True

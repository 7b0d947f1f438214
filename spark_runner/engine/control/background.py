"""A CPU hog following a scenario's ``background`` schedule (no Spark).

The simulator models a background job as a share of the processor taken away; here it is
real: one process per core, each busy for ``share`` of every 10 ms slice while the
schedule says so (:func:`spark_runner.control.background.background_schedule`, the simulator's
schedule). Overlapping jobs add up (capped at 0.99), as in the simulator.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from multiprocessing.process import BaseProcess

from spark_runner.control.background import background_schedule
from spark_runner.scenario.arrivals import RateSchedule
from spark_runner.scenario.models import Scenario

SLICE_S = 0.01


def hog(
    origin_s: float, starts: tuple[float, ...], shares: tuple[float, ...], end_s: float
) -> None:
    """Burn ``share`` of one core per slice until scenario time ``end_s``."""
    schedule = RateSchedule(starts, shares)
    while True:
        now = time.time() - origin_s
        if now >= end_s:
            return
        share = schedule.rate_at(now)
        if share <= 0:
            time.sleep(SLICE_S)
            continue
        busy_until = time.perf_counter() + share * SLICE_S
        while time.perf_counter() < busy_until:
            pass
        time.sleep((1.0 - share) * SLICE_S)


class BackgroundLoad:
    """Starts the hog processes of a scenario (none when it has no ``background``)."""

    def __init__(self, scenario: Scenario, cores: int | None = None) -> None:
        self.schedule = background_schedule(scenario)
        self.active = bool(scenario.background)
        self.cores = cores or os.cpu_count() or 1
        self._processes: list[BaseProcess] = []

    def start(self, origin_s: float, end_s: float) -> None:
        if not self.active:
            return
        ctx = multiprocessing.get_context("spawn")
        for _ in range(self.cores):
            process = ctx.Process(
                target=hog,
                args=(origin_s, self.schedule.starts, self.schedule.rates, end_s),
                daemon=True,
                name="headroom-background",
            )
            process.start()
            self._processes.append(process)

    def stop(self) -> None:
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            process.join(5)
        self._processes.clear()

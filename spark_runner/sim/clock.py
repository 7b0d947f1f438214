"""The processor's speed over simulated time: background load, executors, stalls.

Executors are processors of speed 1 each (spec §5); a background job takes a share of
every one, so operator turns take longer in wall time. Stalls are Poisson interruptions
of exponential length that nobody measures (interrupts, other processes; 001 §5.2.1).
"""

from __future__ import annotations

import math
import random

from spark_runner.scenario.arrivals import RateSchedule
from spark_runner.scenario.models import Engine


class Clock:
    """What the processor can do at time ``t``: ``speed`` = executors × (1 − share)."""

    def __init__(self, background: RateSchedule, executors: int, engine: Engine, seed: int) -> None:
        self.bg_starts, self.bg_rates = background.starts, background.rates
        self.bg_i = 0
        self.share = self.bg_rates[0]
        self.executors = executors
        self.ready_at = math.inf
        """When the executors asked for serve (inf: none asked for)."""
        self.speed = executors * (1.0 - self.share)
        self.next_bg = self.bg_starts[1] if len(self.bg_starts) > 1 else math.inf
        self.stall_rng = random.Random(f"{seed}:stalls")
        self.stall_rate = engine.stall_rate_per_s
        self.stall_mean = engine.stall_mean_s
        self.next_stall = (
            self.stall_rng.expovariate(self.stall_rate) if self.stall_rate > 0 else math.inf
        )

    def stall(self, t: float) -> float:
        """The time after the stalls due by ``t`` (the processor is taken away: time
        passes, nobody measures it)."""
        while self.next_stall <= t:
            stall = self.stall_rng.expovariate(1.0 / self.stall_mean)
            t += stall
            self.next_stall += stall + self.stall_rng.expovariate(self.stall_rate)
        return t

    def follow_background(self, t: float) -> None:
        """Apply the background shares that started by ``t``."""
        while self.next_bg <= t:
            self.bg_i += 1
            self.share = self.bg_rates[self.bg_i]
            self.speed = self.executors * (1.0 - self.share)
            starts = self.bg_starts
            self.next_bg = starts[self.bg_i + 1] if self.bg_i + 1 < len(starts) else math.inf

    def resize(self, executors: int) -> None:
        """Serve on ``executors`` from now (none is on order any more)."""
        self.executors, self.ready_at = executors, math.inf
        self.speed = executors * (1.0 - self.share)

"""What a run produced, in the vocabulary both engines share.

The simulator and the Spark engine each fill one :class:`ClassTotals` per class and end
with one :class:`RunOutput`; :func:`spark_runner.control.results.build_results` shapes it
into the results document, whichever engine ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spark_runner.contract.actions import ControlAction
from spark_runner.control.network import Network
from spark_runner.core.oracle import MachineOracle
from spark_runner.scenario.models import Scenario

# the response-time histogram: log-binned, 20 bins per decade from 1 µs up to 1e5 s
HIST_BINS_PER_DECADE = 20
HIST_MIN_EXP = -6
HIST_BINS = HIST_BINS_PER_DECADE * 11


@dataclass
class ClassTotals:
    """Run-long accumulators of one class (see :mod:`spark_runner.control.results`)."""

    outputs: int = 0
    response_sum_s: float = 0.0
    response_max_s: float = 0.0
    violation_sum_s: float = 0.0
    violation_max_s: float = 0.0
    arrived: int = 0
    shed: int = 0
    offered_outputs: float = 0.0
    lost_outputs: float = 0.0
    oracle_loss: float = 0.0  # OracleMeter.loss_fraction (spark_runner.core.oracle)
    histogram: list[float] = field(default_factory=lambda: [0.0] * HIST_BINS)
    timed_outputs: int | None = None
    """Of ``outputs``, those whose response times are in the sums and the histogram
    (None: all; the Spark engine leaves out a warm-up batch's, which time Spark's start)."""

    @property
    def timed(self) -> int:
        """The outputs the response-time sums are over."""
        return self.outputs if self.timed_outputs is None else self.timed_outputs


@dataclass
class RunOutput:
    """Everything a run produced; :func:`spark_runner.control.results.build_results`
    shapes it."""

    scenario: Scenario
    network: Network
    class_order: tuple[str, ...]
    totals: dict[str, ClassTotals]
    series: list[dict[str, Any]]
    redistributions: list[dict[str, Any]]
    backlog: dict[str, int]
    backlog_age_s: dict[str, float]
    idle_s: float
    end_s: float
    turns: int
    actions: Sequence[ControlAction] = ()
    scaling: dict[str, Any] | None = None
    oracle: MachineOracle | None = None
    """The run's oracle (the totals' ``oracle_loss`` is its loss under the policy)."""

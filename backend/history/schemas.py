from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, Field, model_validator

from backend.history.summary import ClassSummary
from backend.jobs.schemas import JobRead
from backend.metrics.schemas import EpochRange
from spark_runner.contract.samples import INT32_MAX
from spark_runner.core.errors import ParameterError

MAX_OFFSET_S = 10 * 365 * 86_400.0


def _offset(rule: str) -> Any:
    """An optional offset from the run's first sample, in seconds."""
    return Field(
        default=None,
        ge=0,
        le=MAX_OFFSET_S,
        allow_inf_nan=False,
        description=f"Seconds after the run's first sample: only samples with {rule}.",
    )


class RunRange(EpochRange):
    """Part of a run: absolute times (``since``/``until``, epoch seconds) or offsets from
    the run's first sample (``since_s``/``until_s``), not both; nothing: the whole run."""

    since_s: float | None = _offset("t − t_first >= since_s (0 includes the first sample)")
    until_s: float | None = _offset("t − t_first <= until_s")

    @model_validator(mode="after")
    def _one_kind_and_ordered(self) -> Self:
        absolute = self.since is not None or self.until is not None
        if absolute and (self.since_s is not None or self.until_s is not None):
            field, value = (
                ("since_s", self.since_s) if self.since_s is not None else ("until_s", self.until_s)
            )
            raise ParameterError(
                field,
                value,
                "give the range either in epoch seconds (since/until) or in seconds into "
                "the run (since_s/until_s), not both",
            )
        if self.since is not None and self.until is not None and not self.until > self.since:
            raise ParameterError("until", self.until, f"must be > since={self.since}")
        if self.since_s is not None and self.until_s is not None and self.until_s < self.since_s:
            raise ParameterError("until_s", self.until_s, f"must be >= since_s={self.since_s}")
        return self

    @property
    def relative(self) -> bool:
        return self.since_s is not None or self.until_s is not None


class CompareQuery(RunRange):
    """Two runs and one range, applied to each run (relative offsets from each run's own
    first sample, so runs that started at different times line up)."""

    a: int = Field(ge=1, le=INT32_MAX, description="The first run (job id).")
    b: int = Field(ge=1, le=INT32_MAX, description="The second run (job id).")


class RunSummary(BaseModel):
    job: JobRead
    first_sample_t: float | None = Field(
        description="The run's first sample time, epoch s: the origin of since_s/until_s "
        "(None: no samples yet)."
    )
    classes: list[ClassSummary]


class RunComparison(BaseModel):
    a: RunSummary
    b: RunSummary

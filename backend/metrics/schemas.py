from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from spark_runner.job.samples import MetricSample


class SeriesQuery(BaseModel):
    """A time window over a job's samples."""

    model_config = ConfigDict(extra="forbid")

    since: float | None = Field(
        default=None, allow_inf_nan=False, description="Only samples with t > since (epoch s)."
    )
    until: float | None = Field(
        default=None, allow_inf_nan=False, description="Only samples with t <= until (epoch s)."
    )
    last_s: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Only the newest last_s seconds of the job's samples.",
    )
    class_name: str | None = Field(default=None, max_length=100)
    step_s: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Downsample into buckets of this many seconds.",
    )
    limit: int = Field(default=10_000, ge=1, le=100_000)


class MetricSeries(BaseModel):
    job_id: int
    samples: list[MetricSample]


class IngestResult(BaseModel):
    job_id: int
    received: int

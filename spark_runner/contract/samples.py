"""The wire format of per-class metric samples a job pushes to the control plane.

``POST {api_url}/api/v1/jobs/{job_id}/metrics`` with body ``{"samples": [MetricSample...]}``.
Each sample covers one class over one control period. ``seq`` is the job's period
counter; together with (job, class) it makes delivery idempotent, so a retried batch
is never stored twice.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from spark_runner.core.elastic import MAX_EXECUTORS

INT32_MAX = 2**31 - 1
"""Counters are stored as 32-bit integers; larger values are rejected, not overflowed."""
MAX_BATCH_SAMPLES = 10_000
"""Most samples one post carries."""


class MetricSample(BaseModel):
    """Per-class statistics of one control period."""

    model_config = ConfigDict(
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "class_name": "fraud",
                    "seq": 12,
                    "t": 1763700000.5,
                    "period_s": 1.0,
                    "arrived_count": 200,
                    "output_count": 98,
                    "arrival_rate": 200.0,
                    "response_time_mean_s": 0.41,
                    "response_time_max_s": 0.93,
                }
            ]
        },
    )

    class_name: str = Field(min_length=1, max_length=100)
    seq: int = Field(
        ge=0, le=INT32_MAX, description="Control-period number within the job, from 0."
    )
    t: float = Field(gt=0, description="End of the period, Unix epoch seconds.")
    period_s: float = Field(gt=0, description="Length of the period, seconds.")
    arrived_count: int = Field(ge=0, le=INT32_MAX, description="Tuples of the class that arrived.")
    output_count: int = Field(
        ge=0, le=INT32_MAX, description="Output tuples produced for the class."
    )
    arrival_rate: float = Field(ge=0, description="Arrivals per second over the period.")
    response_time_mean_s: float | None = Field(
        default=None, ge=0, description="Mean of output instant minus arrival instant."
    )
    response_time_max_s: float | None = Field(
        default=None, ge=0, description="Largest response time of any output tuple."
    )
    # Everything below is optional: the controller fills what it knows.
    response_time_p50_s: float | None = Field(default=None, ge=0)
    response_time_p95_s: float | None = Field(default=None, ge=0)
    response_time_p99_s: float | None = Field(default=None, ge=0)
    violation_mean_s: float | None = Field(
        default=None, ge=0, description="Mean of max(0, response time − delay target)."
    )
    violation_max_s: float | None = Field(default=None, ge=0)
    admitted_count: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Tuples let in."
    )
    shed_count: int | None = Field(default=None, ge=0, le=INT32_MAX, description="Tuples dropped.")
    waiting_count: int | None = Field(
        default=None, ge=0, description="Tuples queued at the end of the period."
    )
    load: float | None = Field(
        default=None, ge=0, description="Incoming load L before shedding, s/s (Eq. 3.1)."
    )
    capacity_share: float | None = Field(
        default=None, ge=0, le=1, description="Share of the processor the class scheduler gave."
    )
    headroom: float | None = Field(
        default=None, ge=0, description="The manager's capacity estimate L_C (headroom H)."
    )
    capacity_usage: float | None = Field(
        default=None, ge=0, description="u = L / L_C: above 1 the class is overloaded."
    )
    shed_fraction: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="The manager's shed fraction (its decision; a queue rule that drops the "
        "oldest tuples a class cannot answer in time counts in shed_count only).",
    )
    oracle_shed_fraction: float | None = Field(
        default=None, ge=0, le=1, description="Least shedding that would fit the capacity."
    )
    floor_s: float | None = Field(
        default=None,
        ge=0,
        description="The least mean response time the class's tuples get fully admitted, "
        "with no other class's work in their batches, s: a delay target below it cannot be "
        "met on average (the class is infeasible).",
    )
    manager: str | None = Field(default=None, max_length=20)
    manager_state: str | None = Field(
        default=None, max_length=20, description="normal, UT, OT, overloaded or infeasible."
    )
    redistributed: bool = Field(
        default=False, description="A DILoS capacity redistribution happened this period."
    )
    config_version: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Live configuration version in force."
    )
    warmup: bool = Field(
        default=False,
        description="A warm-up period: its tuples waited through the job's first batch, "
        "which pays for Spark's start (JIT compilation, Python workers), so its response "
        "times say nothing of the class's target.",
    )
    # The job's pool (elastic jobs only; the same on every class's sample of a period).
    executors: int | None = Field(
        default=None, ge=0, le=MAX_EXECUTORS, description="The job's executors serving."
    )
    executors_requested: int | None = Field(
        default=None, ge=0, le=MAX_EXECUTORS, description="The size the elastic policy asks."
    )
    job_usage: float | None = Field(
        default=None, ge=0, description="The job's u: its classes' load over its capacity."
    )


class MetricBatch(BaseModel):
    """A batch of samples, as posted by a job."""

    samples: list[MetricSample] = Field(min_length=1, max_length=MAX_BATCH_SAMPLES)

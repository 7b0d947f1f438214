from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from spark_runner.job.samples import MetricSample


class StoredSample(MetricSample):
    model_config = ConfigDict(from_attributes=True, frozen=True)


class MetricSeries(BaseModel):
    job_id: int
    samples: list[StoredSample]


class IngestResult(BaseModel):
    job_id: int
    received: int

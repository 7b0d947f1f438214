from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.jobs.states import JobStatus
from spark_runner.job.samples import INT32_MAX


class JobCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"class_ids": [1, 2], "duration_s": 120, "rate_per_s": 200}]
        },
    )

    scenario_id: int | None = Field(
        default=None,
        ge=1,
        le=2_147_483_647,
        description="Run this stored scenario (its classes, queries and workload); "
        "class_ids and rate_per_s are then ignored.",
    )
    class_ids: list[Annotated[int, Field(ge=1, le=INT32_MAX)]] | None = Field(
        default=None, max_length=1000, description="Classes to run; default: all classes."
    )
    duration_s: float | None = Field(default=None, gt=0, le=7 * 86_400)
    rate_per_s: float = Field(
        default=200.0, ge=0, le=1_000_000, description="Generated arrival rate per class."
    )
    control_period_s: float | None = Field(default=None, gt=0, le=3600)
    spark_master: str | None = Field(default=None, min_length=1, max_length=200)
    manager: str | None = Field(
        default=None, max_length=20, description="Use this load manager for every class."
    )
    recommend_only: bool = Field(
        default=False, description="Compute and report decisions but shed nothing."
    )
    policy: str = Field(default="relative", max_length=20, description="DILoS policy.")
    redistribution_every: int = Field(default=10, ge=1, le=10_000, description="CRC periods.")
    redistribution_enabled: bool = True


class JobClass(BaseModel):
    name: str
    priority: float
    delay_target_s: float


class JobRead(BaseModel):
    id: int
    status: JobStatus
    spark_master: str
    restart_of: int | None
    created_by: str | None
    pid: int | None
    exit_code: int | None
    failure_reason: str | None
    created_at: datetime
    started_at: datetime | None
    stop_requested_at: datetime | None
    stopped_at: datetime | None
    control_period_s: float
    classes: list[JobClass]

    @model_validator(mode="before")
    @classmethod
    def _from_job(cls, value: Any) -> Any:
        config = getattr(value, "config", None)
        if config is None:
            return value
        return {
            "id": value.id,
            "status": value.status,
            "spark_master": value.spark_master,
            "restart_of": value.restart_of,
            "created_by": value.created_by,
            "pid": value.pid,
            "exit_code": value.exit_code,
            "failure_reason": value.failure_reason,
            "created_at": value.created_at,
            "started_at": value.started_at,
            "stop_requested_at": value.stop_requested_at,
            "stopped_at": value.stopped_at,
            "control_period_s": config["control_period_s"],
            "classes": config["classes"],
        }


class JobLog(BaseModel):
    job_id: int
    lines: list[str]

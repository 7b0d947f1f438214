from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from backend.api.body_limits import ENVELOPE_BYTES
from backend.api.schemas import request_config
from backend.classes.schemas import MAX_CLASS_CHANGE_JSON_BYTES, ClassChange
from backend.jobs.schemas import MAX_JOB_CLASSES
from spark_runner.contract.control import LIVE_ELASTIC, LiveConfig
from spark_runner.contract.samples import INT32_MAX

CONFIG_BODY_BYTES = MAX_JOB_CLASSES * MAX_CLASS_CHANGE_JSON_BYTES + ENVELOPE_BYTES
"""The body limit of ``PATCH /jobs/{job_id}/config`` and ``POST …/config/preview``: a
change of every class of the largest job, each at its widest."""


class ConfigChange(BaseModel):
    """A PATCH of a running job's live configuration (same shape as the config, partial)."""

    max_body_bytes: ClassVar[int] = CONFIG_BODY_BYTES

    model_config = request_config(
        {"classes": {"ads": {"delay_target_s": 3.0, "tau2": 0.7}}}, {"recommend_only": True}
    )

    recommend_only: bool | None = None
    policy: str | None = Field(default=None, max_length=20)
    redistribution_every: int | None = Field(default=None, ge=1, le=10_000)
    redistribution_enabled: bool | None = None
    classes: dict[str, ClassChange] | None = Field(default=None, max_length=MAX_JOB_CLASSES)
    elastic: dict[str, float | int | str] | None = Field(
        default=None,
        max_length=len(LIVE_ELASTIC),
        description="An elastic job's settings that change live: "
        f"{', '.join(LIVE_ELASTIC)} (rules: GET /elastic).",
    )

    def as_changes(self) -> dict[str, Any]:
        data = self.model_dump(exclude_none=True)
        if "classes" in data:
            data["classes"] = {n: c for n, c in data["classes"].items() if c}
        return data


class VersionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    version: int
    changes: list[dict[str, Any]]
    created_by: str | None
    created_at: datetime
    applied_at: datetime | None

    @property
    def pending(self) -> bool:
        return self.applied_at is None


class ConfigAtVersion(BaseModel):
    """One version's whole configuration, who stored it and when the job applied it."""

    version: int
    config: LiveConfig
    created_by: str | None
    created_at: datetime
    applied_at: datetime | None = Field(
        description="When the job acknowledged this version (or a later one, which "
        "supersedes it); None: not applied yet."
    )


class JobConfigRead(BaseModel):
    """The newest configuration, what the job has applied, and the history of versions."""

    job_id: int
    latest_version: int
    applied_version: int | None
    pending_versions: list[int]
    config: LiveConfig = Field(description="The newest configuration (= ``latest.config``).")
    latest: ConfigAtVersion = Field(
        description="The newest version: what the job runs once it applies it."
    )
    applied: ConfigAtVersion | None = Field(
        description="The newest version the job has acknowledged; None until it "
        "acknowledges its launch configuration (version 0)."
    )
    thresholds: dict[str, float] = Field(
        description="The job's usage thresholds tau0..tau3 in force: the lowest of its "
        "classes' in ``in_force``."
    )
    in_force: ConfigAtVersion = Field(
        description="What the job runs now: the newest version it acknowledged, or its "
        "launch configuration (version 0) until it acknowledges one."
    )
    versions: list[VersionRead]


class ControlMessage(BaseModel):
    """What a job receives when a newer configuration exists."""

    job_id: int
    config: LiveConfig


class Ack(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=0, le=INT32_MAX)


class ClassPrediction(BaseModel):
    """One class over the replayed window (``None``: no output, or nothing arrived)."""

    mean_violation_s: float | None = Field(description="Mean of max(0, rt − target), s.")
    loss_fraction: float | None = Field(description="Share of the tuples lost.")
    mean_response_time_s: float | None


class ClassWhatIf(BaseModel):
    measured: ClassPrediction = Field(description="What the job measured in the window.")
    current: ClassPrediction = Field(description="Replayed under the configuration in force.")
    proposed: ClassPrediction = Field(description="Replayed under the proposed change.")


class TrackRecord(BaseModel):
    """How far off the predictions of one kind of change were, checked against what the
    changes then did (``backend.tuning.predictions``), over every job."""

    kind: str = Field(description="The settings the changes touched, class names left out.")
    changes: int = Field(description="Applied changes of this kind whose prediction was checked.")
    violation_error_s: float | None = Field(
        description="Mean of |predicted − measured| mean violation per class, s."
    )
    loss_error: float | None = Field(
        description="Mean of |predicted − measured| loss per class (share of tuples)."
    )
    figures: int = Field(description="Class figures the two means are over.")


class WhatIfRead(BaseModel):
    """The job's last minutes replayed through the simulator (``spark_runner.sim.whatif``)
    under the newest configuration and under the proposed change, beside what the job
    measured. The prediction is kept, to be checked against what the change does if it is
    applied as previewed."""

    job_id: int
    window_s: float = Field(description="Length of the replayed window, s.")
    classes: dict[str, ClassWhatIf]
    kind: str = Field(
        description="The settings the change touches, class names left out (empty: it "
        "changes nothing)."
    )
    track_record: TrackRecord | None = Field(
        description="How far off earlier predictions of this kind were; None before one is checked."
    )

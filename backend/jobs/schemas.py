from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.api.schemas import request_config
from backend.jobs.states import JobStatus
from spark_runner.contract.control import LiveConfig
from spark_runner.contract.samples import INT32_MAX
from spark_runner.contract.snapshot import QUERY_LAYOUT_HELP, JobSnapshot, QueryLayout
from spark_runner.core.redistribution import DEFAULT_POLICY
from spark_runner.scenario.models import (
    MAX_DURATION_S,
    MAX_PERIOD_S,
    MAX_RATE_PER_S,
    MAX_REDISTRIBUTION_EVERY,
    MIN_PERIOD_S,
    NAME_MAX_LENGTH,
    Control,
)

MAX_JOB_CLASSES = 1_000
"""Most classes one job runs."""


class JobCreate(BaseModel):
    model_config = request_config({"class_ids": [1, 2], "duration_s": 120, "rate_per_s": 200})

    scenario_id: int | None = Field(
        default=None,
        ge=1,
        le=2_147_483_647,
        description="Run this stored scenario (its classes, queries and workload); "
        "class_ids and rate_per_s are then ignored.",
    )
    class_ids: list[Annotated[int, Field(ge=1, le=INT32_MAX)]] | None = Field(
        default=None,
        max_length=MAX_JOB_CLASSES,
        description="Classes to run; default: all classes.",
    )
    duration_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S)
    rate_per_s: float = Field(
        default=200.0, ge=0, le=MAX_RATE_PER_S, description="Generated arrival rate per class."
    )
    control_period_s: float | None = Field(default=None, ge=MIN_PERIOD_S, le=MAX_PERIOD_S)
    spark_master: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="local[*], local[N] (N up to the cores of the worker that launches the "
        "job), or a master an admin listed in HEADROOM_ALLOWED_SPARK_MASTERS; default: the "
        "API's SPARK_MASTER.",
    )
    manager: str | None = Field(
        default=None, max_length=20, description="Use this load manager for every class."
    )
    recommend_only: bool = Field(
        default=False, description="Compute and report decisions but shed nothing."
    )
    policy: str = Field(default=DEFAULT_POLICY, max_length=20, description="DILoS policy.")
    redistribution_every: int = Field(
        default=10, ge=1, le=MAX_REDISTRIBUTION_EVERY, description="CRC periods."
    )
    redistribution_enabled: bool = True
    elastic: dict[str, float | int | str] | None = Field(
        default=None,
        max_length=16,
        description="Resize the job's executors on a standalone master: control.elastic's "
        'params (GET /elastic), e.g. {"max_executors": 4}, the per-job maximum; over a '
        "stored scenario's, setting by setting. On a local master the job runs without "
        "it and its results say why.",
    )
    source: Literal["generator", "redis"] = Field(
        default="generator",
        description="generator: tuples generated at rate_per_s (or the scenario's "
        "arrivals); redis: every stream is read from the Redis stream <prefix>:<stream> "
        "(HEADROOM_STREAMS_REDIS_URL, HEADROOM_STREAMS_PREFIX), fed by any producer.",
    )
    sink: Literal["none", "parquet", "json", "redis"] = Field(
        default="none",
        description="Where output rows go: nowhere; Parquet or JSON-lines files, one "
        "directory per batch under the job's directory (output/); or the Redis stream "
        "<prefix>:job:<id>:output.",
    )
    queries: QueryLayout = Field(default="one", description=QUERY_LAYOUT_HELP)
    standby: list[Annotated[str, Field(min_length=1, max_length=NAME_MAX_LENGTH)]] = Field(
        default_factory=list,
        max_length=MAX_JOB_CLASSES,
        description="Classes of the job held in standby: their queries run on the Redis "
        "streams but compute nothing until a hand-off (POST /handoffs) moves the class "
        "here. Needs source redis.",
    )

    def scenario_control(self, control: Control) -> dict[str, Any]:
        """A stored scenario's DILoS settings, each overridden where this request sets it:
        ``policy``, ``redistribution_every`` and ``redistribution_enabled``."""
        chosen = self.model_fields_set
        return {
            "policy": self.policy if "policy" in chosen else control.policy,
            "redistribution_every": self.redistribution_every
            if "redistribution_every" in chosen
            else control.redistribution_every,
            "redistribution_enabled": self.redistribution_enabled
            if "redistribution_enabled" in chosen
            else control.mode == "dilos",
        }


class JobClass(BaseModel):
    name: str
    priority: float
    delay_target_s: float
    rate_per_s: float | None = Field(
        default=None,
        description="Generated arrival rate of the class's stream, tuples/s (0 when a "
        "stored scenario's workload feeds it).",
    )
    manager: str | None = Field(
        default=None, description="The load manager the class was launched with."
    )


class EngineRead(BaseModel):
    """How the Spark engine ran the job: the snapshot's engine settings as stored (a
    setting a newer engine adds is passed through; one an older snapshot lacks is None)."""

    model_config = ConfigDict(extra="allow")

    source: str | None = Field(default=None, description="generator or redis.")
    files_dir: str | None = None
    redis_url: str | None = Field(default=None, description="Without its password.")
    redis_prefix: str | None = None
    sink: str | None = None
    sink_path: str | None = None
    target_utilization: float | None = None
    warmup_s: float | None = None
    watermark_s: float | None = None
    plain: bool | None = None
    fixed_pace: bool | None = None
    queries: str | None = Field(default=None, description="one, or tier (a query per tier).")
    burn: bool | None = None
    burn_repetition_ns: float | None = None
    partitions: int | None = None


class JobLaunch(BaseModel):
    """The options the job was started with, read from its immutable snapshot (and, for
    what the snapshot does not keep, from the accepted launch request)."""

    scenario_id: int | None = Field(
        description="The stored scenario the job ran (as it was at launch: the snapshot "
        "holds its document); None: the registered classes, one generated stream each."
    )
    scenario_name: str | None = Field(description="That scenario's name.")
    rate_per_s: float | None = Field(
        description="Generated arrival rate per class; None when a scenario's workload ran."
    )
    duration_s: float | None = Field(description="Stop after this long; None: until stopped.")
    manager: str | None = Field(
        description="The one load manager requested for every class; None: each class's own "
        "(see ``classes[].manager``)."
    )
    mode: Literal["dilos", "per_class"] = Field(
        description="dilos: per-class managers plus capacity redistribution; per_class: "
        "per-class managers on fixed quotas."
    )
    recommend_only: bool = Field(description="Decisions computed and reported, nothing shed.")
    policy: str = Field(description="DILoS redistribution policy.")
    redistribution_every: int = Field(description="Control periods between redistributions.")
    engine: EngineRead


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
    launch: JobLaunch

    @model_validator(mode="before")
    @classmethod
    def _from_job(cls, value: Any) -> Any:
        config = getattr(value, "config", None)
        if config is None:
            return value
        snapshot = JobSnapshot.model_validate(config)
        control = snapshot.control
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
            "control_period_s": snapshot.control_period_s,
            "classes": [
                JobClass(
                    name=c.name,
                    priority=control.classes[c.name].priority,
                    delay_target_s=control.classes[c.name].delay_target_s,
                    rate_per_s=c.rate_per_s,
                    manager=control.classes[c.name].manager,
                )
                for c in snapshot.classes
            ],
            "launch": _launch(snapshot, control, value.launch_request),
        }


def _launch(
    snapshot: JobSnapshot, control: LiveConfig, request: dict[str, Any] | None
) -> JobLaunch:
    """The launch options of a job from its snapshot and its accepted request (``None``
    for jobs older than the stored request: what only the request knew is then inferred
    from the snapshot)."""
    scenario_id = request.get("scenario_id") if request else None
    from_scenario = scenario_id is not None
    if request is not None:
        rate_per_s = None if from_scenario else float(request["rate_per_s"])
        manager = request.get("manager")
    else:
        rates = {c.rate_per_s for c in snapshot.classes}
        rate_per_s = rates.pop() if len(rates) == 1 else None
        manager = None
    engine = snapshot.engine.model_dump(mode="json")
    if isinstance(engine.get("redis_url"), str):
        engine["redis_url"] = _without_password(engine["redis_url"])
    return JobLaunch(
        scenario_id=scenario_id,
        scenario_name=(snapshot.scenario or {}).get("name") if from_scenario else None,
        rate_per_s=rate_per_s,
        duration_s=snapshot.duration_s,
        manager=manager,
        mode="dilos" if control.redistribution_enabled else "per_class",
        recommend_only=control.recommend_only,
        policy=control.policy,
        redistribution_every=control.redistribution_every,
        engine=EngineRead.model_validate(engine),
    )


def _without_password(url: str) -> str:
    """``redis://user:secret@host:6379/0`` → ``redis://user:***@host:6379/0``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    _credentials, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


class JobLog(BaseModel):
    job_id: int
    lines: list[str]

"""The frozen configuration snapshot a job receives at launch (a JSON file).

The backend writes it; the job process reads it. It imports no Spark so the backend can
build it without starting a JVM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spark_runner.contract.control import LiveConfig
from spark_runner.contract.masters import DEFAULT_MASTER
from spark_runner.core.errors import ParameterError


class BurnJar(BaseModel):
    """A built burn jar (``spark_runner.engine.dataflow.jvm_burn``) and the SHA-256 of its bytes
    when it was built (hex)."""

    model_config = ConfigDict(frozen=True)

    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ClassSnapshot(BaseModel):
    """One query class of the job and the stream generated for it when the snapshot
    carries no scenario. Its settings (priority, delay target, manager, …) are in
    ``JobSnapshot.control``, once."""

    model_config = ConfigDict(frozen=True)

    name: str
    rate_per_s: float = Field(
        default=200.0, ge=0, description="Generated arrival rate of the class's stream, tuples/s."
    )
    selectivity: float = Field(
        default=0.5, ge=0, le=1, description="Fraction of tuples the class's filter keeps."
    )


DEFAULT_WATERMARK_S = 30.0
"""How far a window's event time (a tuple's arrival instant) may lag behind the newest."""

DEFAULT_TARGET_UTILIZATION = 0.9
"""The share of a control period a batch may take: the rest is kept for the batch cycle's
variation."""

PRIVATE_UMASK = 0o077
"""The umask of every service process and job (``backend.files``), and the one a job's
Hadoop file system writes with (``spark_runner.job.sparkconf``): no bits for group or
others."""


QueryLayout = Literal["one", "tier"]
"""How a job's classes map to streaming queries: ``one`` query for every class, or a query
per priority tier (``spark_runner/engine/dataflow/tiers.py``)."""
QUERY_LAYOUT_HELP = (
    "one: every class in one streaming query; tier: a streaming query per priority tier "
    "(levels sharing a segment together), Spark's FAIR scheduler giving a free task slot "
    "to the top tier first."
)


def one_query_reason(scenario: dict[str, Any] | None, *, elastic: bool = False) -> str | None:
    """Why a job of ``scenario`` (a document) must run every class in one query; None when
    it may run a query per tier. ``elastic``: the job resizes its executors."""
    control = (scenario or {}).get("control") or {}
    if elastic or control.get("elastic") is not None:
        return "an elastic job runs one query: its executor pool has one controller"
    if control.get("mode") == "common":
        return "control.mode common has one manager for every class: it runs one query"
    return None


class EngineSettings(BaseModel):
    """How the Spark engine runs the job's scenario (defaults: the control plane's jobs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Literal["generator", "redis", "files"] = Field(
        default="generator",
        description="generator: the scenario's arrival patterns; redis: Redis streams fed "
        "by ``headroom produce``; files: a directory per stream that files of rows are "
        "added to (JSON lines, CSV, Parquet).",
    )
    files_dir: str = Field(
        default="", max_length=4096, description="The files source's directory: <dir>/<stream>/."
    )
    redis_url: str = Field(default="", description="Redis URL of the redis source and sink.")
    redis_prefix: str = Field(default="headroom", description="Stream keys: <prefix>:<stream>.")
    sink: Literal["none", "memory", "console", "parquet", "json", "redis"] = Field(
        default="none",
        description="Where output rows go: nowhere (none), Spark's memory or console sink, "
        "one directory per batch (parquet, json), or a Redis stream (redis).",
    )
    sink_path: str | None = Field(
        default=None,
        max_length=4096,
        description="Directory of the parquet and json sinks; stream key of the redis sink.",
    )
    target_utilization: float = Field(
        default=DEFAULT_TARGET_UTILIZATION,
        gt=0,
        le=1,
        description="Share of a control period a batch may take.",
    )
    watermark_s: float = Field(
        default=DEFAULT_WATERMARK_S,
        gt=0,
        le=3600,
        description="Window and join state older than this behind the newest arrival is "
        "dropped; a tuple that waited longer in the log is late for a window.",
    )
    warmup_s: float = Field(
        default=0.0, ge=0, description="Seconds at the start left out of the results document."
    )
    plain: bool = Field(
        default=False,
        description="No controller: every waiting tuple enters every batch (a baseline).",
    )
    fixed_pace: bool = Field(
        default=False,
        description="Batches start one control period apart whatever the targets (a "
        "baseline); default: the tightest target among the loaded classes sets the pace.",
    )
    declared_costs: bool = Field(
        default=False,
        description="Operator costs stay their declared weights (a baseline); default: "
        "they follow the executor time Spark measures per query branch.",
    )
    queries: QueryLayout = Field(default="one", description=QUERY_LAYOUT_HELP)
    burn: bool = Field(default=True, description="Maps burn their calibrated CPU cost.")
    burn_repetition_ns: float | None = Field(
        default=None,
        gt=0,
        description="CPU cost of one burn repetition on the executors, ns (None: measured at "
        "start-up). Runs meant to be compared should share one value.",
    )
    partitions: int | None = Field(
        default=None, gt=0, description="Tasks per batch (default: Spark's parallelism)."
    )
    master_ui_url: str | None = Field(
        default=None,
        max_length=2048,
        pattern=r"^https?://[^\s/]+(/[^\s]*)?$",
        description="The standalone master's web UI, http://HOST:PORT: an elastic job reads "
        "the cluster's free cores there (unset: it may grow to its maximum).",
    )


EXIT_CODE_FILE = "exit_code"
"""Beside the config file, the job writes its exit code here on its way out (a watcher that
is not the job's parent cannot read the code otherwise)."""


class JobSnapshot(BaseModel):
    """Everything a job needs; it reads nothing else (no environment, no database)."""

    model_config = ConfigDict(frozen=True)

    job_id: int
    api_url: str = Field(
        description="Control-plane base URL, e.g. http://127.0.0.1:8000; empty: a local run "
        "(no metrics pushed, no live configuration)."
    )
    spark_master: str = DEFAULT_MASTER
    control_period_s: float = Field(default=1.0, gt=0)
    checkpoint_dir: str
    duration_s: float | None = Field(default=None, gt=0, description="Stop after this long.")
    ingest_token: str = Field(
        default="", repr=False, description="Bearer token for the job's own API calls."
    )
    metrics_buffer_max: int = Field(
        default=10_000, gt=0, description="Samples kept while the control plane is unreachable."
    )
    classes: tuple[ClassSnapshot, ...] = Field(min_length=1)
    scenario: dict[str, Any] | None = Field(
        default=None,
        description="A scenario document (docs/scenario-format.md) giving the classes' "
        "queries and workload, without the settings ``control`` holds (its classes' and "
        "its policy, redistribution and elasticity); None: one generated stream per class "
        "from ``classes``.",
    )
    control: LiveConfig = Field(
        description="QoS configuration version 0, the one place the snapshot carries each "
        "class setting; newer versions come from the control plane."
    )
    engine: EngineSettings = Field(default_factory=EngineSettings)
    results_path: str | None = Field(
        default=None,
        description="Write the results document (docs/scenario-format.md) here at the end.",
    )
    burn_jar: BurnJar | None = Field(
        default=None,
        description="The burn UDF's jar built by the launcher and its SHA-256; the job puts "
        "it on the class path only while the hash matches. None: a local run builds its "
        "own in the user's cache (~/.cache/headroom).",
    )

    @model_validator(mode="after")
    def _classes_configured(self) -> JobSnapshot:
        names = sorted(c.name for c in self.classes)
        if names != sorted(self.control.classes):
            raise ValueError(
                f"control.classes {sorted(self.control.classes)} must name the classes {names}"
            )
        try:
            self.control.validate_rules()
        except ParameterError as error:
            raise ValueError(f"control.{error}") from None
        return self

    @classmethod
    def load(cls, path: Path) -> JobSnapshot:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))

    def dump(self, path: Path) -> None:
        path.write_text(self.model_dump_json(indent=2), encoding="utf-8")

"""The one place that reads the environment.

Every other module receives a ``Settings`` instance (or values taken from it); nothing
else calls ``os.environ``. Defaults are the embedded ones: a SQLite file, a file-system
Celery broker and local Spark, all under ``data_dir``, so the product runs with no server.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, AliasGenerator, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from spark_runner.contract.masters import DEFAULT_MASTER, local_threads
from spark_runner.core.coordinator import CoordinatorParams
from spark_runner.core.elastic import MAX_EXECUTORS
from spark_runner.core.errors import ParameterError


def _env(name: str) -> AliasChoices:
    """The environment variable ``name``; also accepted in lower case as a keyword."""
    return AliasChoices(name, name.lower())


def _headroom_env(field: str) -> AliasChoices:
    """The variable a setting reads unless it names another: ``HEADROOM_<FIELD>``, so
    that a field's name and its variable's cannot drift apart."""
    return _env(f"HEADROOM_{field.upper()}")


def _pyspark_spark_submit() -> str:
    """``bin/spark-submit`` of the installed pyspark wheel (found, not imported)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return "spark-submit"
    return str(Path(next(iter(spec.submodule_search_locations))) / "bin" / "spark-submit")


class Settings(BaseSettings):
    """Runtime configuration. Each field reads the environment variable
    ``HEADROOM_<FIELD NAME>`` (``data_dir``: ``HEADROOM_DATA_DIR``); the few that keep a
    conventional name (``DATABASE_URL``, ``CELERY_BROKER_URL``, ``SPARK_MASTER``) or a
    shorter one (``HEADROOM_TOKEN``) name it in ``validation_alias``."""

    model_config = SettingsConfigDict(
        extra="ignore",
        populate_by_name=True,
        alias_generator=AliasGenerator(validation_alias=_headroom_env),
    )

    data_dir: Path = Field(
        default=Path("var"),
        description="Directory for the SQLite file, the embedded broker, job logs and checkpoints.",
    )
    database_url: str = Field(
        default="",
        validation_alias=_env("DATABASE_URL"),
        description="SQLAlchemy URL; empty means sqlite:///<data_dir>/headroom.db. "
        "PostgreSQL: postgresql+psycopg://user@host:5432/db",
    )
    celery_broker_url: str = Field(
        default="filesystem://",
        validation_alias=_env("CELERY_BROKER_URL"),
        description="Celery broker; 'filesystem://' is the embedded one (no server). "
        "Redis: redis://127.0.0.1:6379/0",
    )
    spark_master: str = Field(
        default=DEFAULT_MASTER,
        validation_alias=_env("SPARK_MASTER"),
        description="Spark master of a job whose request names none: local[*], local[N], or "
        "one of allowed_spark_masters.",
    )
    allowed_spark_masters: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Spark masters a job may run on besides local[*] and local[N] (N up to "
        "the cores of the process that launches it), comma-separated and compared exactly, "
        "e.g. spark://spark-master:7077. A job's JVM connects to its master and trusts it "
        "(Spark's RPC uses Java serialization): list only clusters you run.",
    )
    cluster_executors: Annotated[dict[str, int], NoDecode] = Field(
        default_factory=dict,
        description="Standalone masters whose elastic jobs the cluster coordinator divides "
        "by priority, each with the executors its cluster holds: MASTER=N, comma-separated "
        "(e.g. spark://spark-master:7077=8). Each master must be one of "
        "allowed_spark_masters; on it, a job's max_executors is the coordinator's.",
    )
    coordinate_interval_s: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="How often the cluster coordinator runs a round per master, seconds.",
    )
    coordinator_hold_s: float = Field(
        default=CoordinatorParams.hold_s,
        description="How long a job must be short of executors before the coordinator "
        "moves some to it, seconds.",
    )
    coordinator_min_interval_s: float = Field(
        default=CoordinatorParams.min_interval_s,
        description="The least time between two moves a shortage makes, seconds.",
    )
    api_host: str = Field(default="127.0.0.1")
    api_port: int = Field(default=8000)
    api_url: str = Field(
        default="",
        description="Address at which jobs and the dashboard reach the API; "
        "empty means http://<api_host>:<api_port>.",
    )
    dashboard_host: str = Field(default="127.0.0.1")
    dashboard_port: int = Field(default=8050)
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["http://127.0.0.1:8050", "http://localhost:8050"],
        description="Browser origins allowed to call the API, comma-separated.",
    )
    job_python: str = Field(
        default=sys.executable,
        description="Python interpreter that runs Spark jobs (driver and Python workers).",
    )
    launch_mode: Literal["python", "spark-submit"] = Field(
        default="python",
        description="How jobs are started: 'python' runs `<job_python> -m spark_runner.job`, "
        "whose session launches its own JVM; 'spark-submit' runs `spark-submit --master "
        "<job's master> --deploy-mode client` with the job's Spark properties.",
    )
    spark_submit: str = Field(
        default_factory=_pyspark_spark_submit,
        description="The spark-submit used in the 'spark-submit' launch mode; default: the "
        "one shipped in the pyspark package (<pyspark>/bin/spark-submit).",
    )
    streams_redis_url: str = Field(
        default="",
        description="Redis that jobs launched with source or sink 'redis' read their "
        "streams from and write their output to; empty: those jobs are refused.",
    )
    streams_prefix: str = Field(
        default="headroom",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$",
        description="Redis keys of the streams: <prefix>:<stream>; a job's output stream: "
        "<prefix>:job:<id>:output.",
    )
    control_period_s: float = Field(
        default=1.0,
        gt=0,
        description="Default control period of launched jobs, in seconds.",
    )
    watch_interval_s: float = Field(
        default=1.0,
        gt=0,
        description="How often a running job's process is checked for liveness.",
    )

    beat_lock_wait_s: float = Field(
        default=15.0,
        ge=0,
        description="How long a starting Celery beat waits for the beat lock (held by "
        "another beat, e.g. one still shutting down) before it refuses to run, seconds.",
    )

    metrics_retention_days: float = Field(
        default=30,
        gt=0,
        description="Metric samples older than this are deleted.",
    )
    metrics_compact_after_s: float = Field(
        default=24 * 3600,
        gt=0,
        description="Samples older than this are merged into coarser buckets.",
    )
    metrics_compact_step_s: float = Field(
        default=60,
        gt=0,
        description="Bucket length of compacted (old) samples, seconds.",
    )
    metrics_poll_s: float = Field(
        default=0.2,
        gt=0,
        description="How often an API process with waiting live readers (metric streams, "
        "wait_s long polls) asks the database, in one query for all of them, whether "
        "another process stored samples of their jobs or a job ended, seconds; samples this "
        "process stores wake them at once.",
    )
    metrics_token_recheck_s: float = Field(
        default=5.0,
        gt=0,
        description="How often a metric stream checks its login token again, seconds; it "
        "ends once the token is revoked or expired (at once when this process revokes it).",
    )
    metrics_streams_per_user: int = Field(
        default=4,
        ge=1,
        description="Metric streams one user may hold open on one API process; more are "
        "answered 429.",
    )
    metrics_streams_total: int = Field(
        default=64,
        ge=1,
        description="Metric streams one API process holds open at most; more are answered 429.",
    )
    token_ttl_s: float = Field(
        default=12 * 3600,
        gt=0,
        description="Lifetime of a login token, seconds.",
    )
    api_token: str = Field(
        default="",
        repr=False,
        validation_alias=_env("HEADROOM_TOKEN"),
        description="Bearer token the CLI sends (from `headroom auth login`).",
    )
    secret_key: str = Field(
        default="",
        repr=False,
        description="Signs dashboard session cookies; empty means one generated and kept "
        "in <data_dir>/secret_key.",
    )
    dashboard_secure_cookies: bool = Field(
        default=False,
        description="Send the dashboard's session cookie with Secure (only over HTTPS): set "
        "it when the dashboard is served over TLS (behind a TLS-terminating proxy).",
    )

    login_failures_per_user: int = Field(
        default=10,
        ge=1,
        description="Failed logins for one username (from any client) within "
        "login_failure_window_s before its logins are answered 429.",
    )
    login_failures_per_client: int = Field(
        default=50,
        ge=1,
        description="Failed logins from one client address (for any username) within "
        "login_failure_window_s before its logins are answered 429.",
    )
    login_failure_window_s: float = Field(
        default=300,
        gt=0,
        description="Sliding window, seconds, over which failed logins are counted.",
    )
    login_hash_concurrency: int = Field(
        default=2,
        ge=1,
        description="Password hashes (scrypt, ~50-100 ms of CPU each) computed at once by "
        "one API process; further logins wait without holding a thread.",
    )
    preview_concurrency: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Previews of a live change (each replays a job's last minutes through "
        "the simulator, up to seconds of CPU) one API process runs at once, each in a "
        "worker process of its own; a further one is answered 503 with Retry-After.",
    )
    previews_per_user: int = Field(
        default=10,
        ge=1,
        description="Previews one user may start on one API process within "
        "preview_window_s; beyond, 429 with Retry-After.",
    )
    preview_window_s: float = Field(
        default=60,
        gt=0,
        description="Sliding window, seconds, over which a user's previews are counted.",
    )
    metrics_token: str = Field(
        default="",
        repr=False,
        description="Bearer token a Prometheus scraper sends to GET /metrics; empty means "
        "/metrics answers 401 to everyone.",
    )

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value

    @field_validator("allowed_spark_masters", mode="before")
    @classmethod
    def _split_masters(cls, value: object) -> object:
        if isinstance(value, str):
            value = [master.strip() for master in value.split(",") if master.strip()]
        if isinstance(value, list):
            for master in value:
                if not isinstance(master, str) or not master or any(c.isspace() for c in master):
                    raise ValueError(f"{master!r} is not a master URL (one word, no spaces)")
        return value

    @field_validator("cluster_executors", mode="before")
    @classmethod
    def _split_clusters(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        clusters: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in value.split(","))):
            master, sep, count = item.rpartition("=")
            if not sep:
                raise ValueError(f"{item!r} is not MASTER=N (a master and its executors)")
            clusters[master.strip()] = count.strip()
        return clusters

    def coordinator_params(self) -> CoordinatorParams:
        """The cluster coordinator's settings (the core's defaults where unset)."""
        return CoordinatorParams(
            hold_s=self.coordinator_hold_s, min_interval_s=self.coordinator_min_interval_s
        )

    @model_validator(mode="after")
    def _coordinated_masters(self) -> Settings:
        """A coordinated master is a listed standalone master with 1..MAX_EXECUTORS; the
        coordinator's settings keep its rules."""
        try:
            self.coordinator_params()
        except ParameterError as error:
            raise ValueError(f"HEADROOM_COORDINATOR_{error.field.upper()}: {error}") from None
        for master, executors in self.cluster_executors.items():
            if master not in self.allowed_spark_masters:
                raise ValueError(
                    f"HEADROOM_CLUSTER_EXECUTORS: {master!r} must be one of "
                    "HEADROOM_ALLOWED_SPARK_MASTERS"
                )
            if not 1 <= executors <= MAX_EXECUTORS:
                raise ValueError(
                    f"HEADROOM_CLUSTER_EXECUTORS: {master}={executors} must be within "
                    f"[1, {MAX_EXECUTORS}] executors"
                )
        return self

    @model_validator(mode="after")
    def _default_master_allowed(self) -> Settings:
        """The default master obeys the rule a request's does (its cores are checked
        where a job is created and launched)."""
        master = self.spark_master
        if master not in self.allowed_spark_masters and local_threads(master) is None:
            raise ValueError(
                f"SPARK_MASTER={master!r} must be local[*], local[N] or one of "
                "HEADROOM_ALLOWED_SPARK_MASTERS"
            )
        return self

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'headroom.db'}"

    @property
    def public_api_url(self) -> str:
        return self.api_url or f"http://{self.api_host}:{self.api_port}"

    @property
    def broker_dir(self) -> Path:
        return self.data_dir / "broker"

    @property
    def jobs_dir(self) -> Path:
        return self.data_dir / "jobs"

    @property
    def cache_dir(self) -> Path:
        """Built artefacts the service hands to jobs (the burn UDF's jar), owner-only."""
        return self.data_dir / "cache"

    @property
    def beat_lock_path(self) -> Path:
        """The file whose ``flock`` the one running Celery beat holds."""
        return self.data_dir / "beat.lock"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings, read once."""
    return Settings()

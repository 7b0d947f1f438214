"""The JSON bodies of the headroom API as ``TypedDict``s. GENERATED: do not edit.

Written from the OpenAPI schema of ``backend.main``'s app by

    .venv/bin/python scripts/api_types.py

(that script says how the schema maps to these types); run it again after changing a
body of the API. ``frontend.api`` re-exports them under the dashboard's names.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

ClassSettingReadType = Literal["float", "bool", "str", "object"]
ControlActionKind = Literal["scale_out", "scale_in", "shed_more", "shed_less", "allocate", "move"]
ControlActionOrigin = Literal["job", "coordinator", "handoff"]
JobCreateQueries = Literal["one", "tier"]
JobCreateSink = Literal["none", "parquet", "json", "redis"]
JobCreateSource = Literal["generator", "redis"]
JobLaunchMode = Literal["dilos", "per_class"]
JobStatus = Literal["pending", "starting", "running", "stopping", "stopped", "failed"]
ManagerParamReadType = Literal["float", "int", "bool", "str"]
Role = Literal["viewer", "operator", "admin"]
StreamColumnType = Literal["long", "double", "string", "boolean", "timestamp"]
VerdictOutcome = Literal["improved", "unchanged", "worse"]


class Ack(TypedDict):
    version: int


class ActionBatch(TypedDict):
    """Actions as a job posts them: its own (origin ``job``, never ``allocate`` or ``move``)."""

    actions: list[ControlActionInput]


class ActionLogRead(TypedDict):
    job_id: int
    # The job's usage thresholds tau0..tau3 now (the lowest of its classes').
    thresholds: dict[str, float]
    # Oldest first.
    actions: list[ControlAction]
    # Older actions were left out (raise limit).
    truncated: bool


class ActionsReceived(TypedDict):
    job_id: int
    received: int


class ArrivalGen(TypedDict):
    kind: Literal["arrival"]
    lag_max_s: float


class ArrivalGenInput(TypedDict):
    kind: Literal["arrival"]
    lag_max_s: NotRequired[float]


class ChoiceGen(TypedDict):
    kind: Literal["choice"]
    values: list[str | bool | float]
    weights: list[float] | None


class ChoiceGenInput(TypedDict):
    kind: Literal["choice"]
    values: list[str | bool | float]
    weights: NotRequired[list[float] | None]


class ClassChange(TypedDict):
    """The live-tunable fields of a class, all optional: what is left out keeps its value. A field
    per class setting (``with_class_settings``).

    Used for class updates and, per class, for live changes of a running job.
    """

    # Larger means more important.
    priority: NotRequired[float | None]
    # Worst-case response time the class tolerates.
    delay_target_s: NotRequired[float | None]
    # An elastic job (scenario control.elastic) releases executors once its usage has stayed at
    # or below the lowest tau0 of its classes for its hold time.
    tau0: NotRequired[float | None]
    # An elastic job resizes its pool, in one step, to bring its usage to the lowest tau1 of its
    # classes.
    tau1: NotRequired[float | None]
    # The linear manager sheds above this usage; while an elastic job adds executors it sheds
    # only the load above the lowest tau2 of its classes.
    tau2: NotRequired[float | None]
    # An elastic job adds executors once its usage has stayed at or above the lowest tau3 of its
    # classes for its hold time.
    tau3: NotRequired[float | None]
    # The class's load manager: one of the kinds the manager catalogue lists.
    manager: NotRequired[str | None]
    # The manager's parameters; spec defaults for the rest.
    manager_params: NotRequired[dict[str, float | int | str | bool] | None]
    # Share of its original quota a lending class keeps spare.
    reserve_fraction: NotRequired[float | None]
    # Largest share of its original quota the class may lend.
    max_lend_fraction: NotRequired[float | None]
    # At start, serve the backlog already in the log (Redis, files) instead of shedding first
    # what is already past the target (a class whose every tuple matters more than its latency,
    # e.g. billing).
    catch_up: NotRequired[bool | None]
    # Largest share of its arrivals the class sheds in a control period, whatever its manager
    # decides (1: no cap). Below 1 it also keeps the tuples already past its target and answers
    # them late: for a class that would rather answer late than lose more (audit, billing), at
    # the cost of its latency and the classes below's capacity.
    max_shed_fraction: NotRequired[float | None]


class ClassControl(TypedDict):
    """Live-tunable parameters of one class (spec defaults where not given): a field per class
    setting (:func:`~spark_runner.contract.settings.with_class_settings`).
    """

    # Larger means more important.
    priority: float
    # Worst-case response time the class tolerates.
    delay_target_s: float
    # The class's load manager: one of the kinds the manager catalogue lists.
    manager: str
    # The manager's parameters; spec defaults for the rest.
    manager_params: dict[str, float | int | str | bool]
    # An elastic job (scenario control.elastic) releases executors once its usage has stayed at
    # or below the lowest tau0 of its classes for its hold time.
    tau0: float
    # An elastic job resizes its pool, in one step, to bring its usage to the lowest tau1 of its
    # classes.
    tau1: float
    # The linear manager sheds above this usage; while an elastic job adds executors it sheds
    # only the load above the lowest tau2 of its classes.
    tau2: float
    # An elastic job adds executors once its usage has stayed at or above the lowest tau3 of its
    # classes for its hold time.
    tau3: float
    # Share of its original quota a lending class keeps spare.
    reserve_fraction: float
    # Largest share of its original quota the class may lend.
    max_lend_fraction: float
    # At start, serve the backlog already in the log (Redis, files) instead of shedding first
    # what is already past the target (a class whose every tuple matters more than its latency,
    # e.g. billing).
    catch_up: bool
    # Largest share of its arrivals the class sheds in a control period, whatever its manager
    # decides (1: no cap). Below 1 it also keeps the tuples already past its target and answers
    # them late: for a class that would rather answer late than lose more (audit, billing), at
    # the cost of its latency and the classes below's capacity.
    max_shed_fraction: float


class ClassPrediction(TypedDict):
    """One class over the replayed window (``None``: no output, or nothing arrived)."""

    # Mean of max(0, rt − target), s.
    mean_violation_s: float | None
    # Share of the tuples lost.
    loss_fraction: float | None
    mean_response_time_s: float | None


class ClassSettingRead(TypedDict):
    """One setting of a query class, as it is declared once for every layer
    (``spark_runner.core.class_settings``).
    """

    name: str
    type: ClassSettingReadType
    label: str
    description: str
    # e.g. s; empty for a ratio or a name.
    unit: str
    # A new class must give it (no default).
    required: bool
    # What a new class gets when it gives none.
    default: Any
    # The bounds, worded as a 422 for a value outside states them.
    rule: str
    # Smallest allowed value (inclusive).
    minimum: float | None
    # Values must be greater than this.
    exclusive_minimum: float | None
    # Largest allowed value (inclusive).
    maximum: float | None
    # Values must be less than this.
    exclusive_maximum: float | None
    # Most characters of a string, or entries of an object (None: no limit).
    max_length: int | None
    # A running job takes a change to it (live tuning).
    live: bool


class ClassSummary(TypedDict):
    """One class over a run; ``periods`` counts every period, ``warmup_periods`` those of them left
    out of the response times and violations; ``delay_target_s`` is the target in force in the
    newest period (each period is judged against its own).
    """

    class_name: str
    delay_target_s: float | None
    periods: int
    warmup_periods: int
    arrived: int
    output: int
    shed: int | None
    mean_response_time_s: float | None
    p95_response_time_s: float | None
    max_response_time_s: float | None
    mean_violation_s: float | None
    max_violation_s: float | None
    late_period_fraction: float | None
    loss_fraction: float | None
    shed_fraction_mean: float | None
    oracle_loss_fraction: float | None
    oracle_gap: float | None


class ClassWhatIf(TypedDict):
    # What the job measured in the window.
    measured: ClassPrediction
    # Replayed under the configuration in force.
    current: ClassPrediction
    # Replayed under the proposed change.
    proposed: ClassPrediction


class ClusterRead(TypedDict):
    master: str
    # The executors its cluster holds (cluster_executors).
    executors: int
    # Executors each running elastic job may hold now, by job id (its live max_executors); empty
    # before the first round.
    allocation: dict[str, int]
    # When the last round ran, epoch s.
    round_at_s: float | None
    # Why the last round could not allocate.
    problem: str | None


class ClustersRead(TypedDict):
    clusters: list[ClusterRead]
    # A round per master every this many seconds.
    interval_s: float
    # The coordinator's settings.
    params: dict[str, float]


class ConfigAtVersion(TypedDict):
    """One version's whole configuration, who stored it and when the job applied it."""

    version: int
    config: LiveConfig
    created_by: str | None
    created_at: str
    # When the job acknowledged this version (or a later one, which supersedes it); None: not
    # applied yet.
    applied_at: str | None


class ConfigChange(TypedDict):
    """A PATCH of a running job's live configuration (same shape as the config, partial)."""

    recommend_only: NotRequired[bool | None]
    policy: NotRequired[str | None]
    redistribution_every: NotRequired[int | None]
    redistribution_enabled: NotRequired[bool | None]
    classes: NotRequired[dict[str, ClassChange] | None]
    # An elastic job's settings that change live: hold_out_s, hold_in_s, min_executors,
    # max_executors, sizing, startup_timeout_s, warmup_s (rules: GET /elastic).
    elastic: NotRequired[dict[str, float | int | str] | None]


class ControlAction(TypedDict):
    """One control action of a job, with its trigger, its effect and its verdict."""

    # The action's number within the job.
    seq: int
    # When it was taken: epoch s (simulated s).
    at_s: float
    kind: ControlActionKind
    # The class (shedding and moves only).
    class_name: str | None
    # u = L / L_C when taken.
    usage: float
    # The τ the job's u crossed (scaling only).
    threshold: float | None
    # How long u stayed past it, s.
    held_s: float | None
    # The class manager's state (shedding only).
    manager_state: str | None
    executors_before: int | None
    # The size asked (None: not elastic).
    executors_after: int | None
    shed_before: float
    shed_after: float
    # None until it is in.
    verdict: Verdict | None
    # Who took it: the job's own controller, or the cluster coordinator (whose actions are
    # numbered apart: seq is unique per job and origin).
    origin: ControlActionOrigin
    # Why the control plane acted (its actions only).
    trigger: str | None


class ControlActionInput(TypedDict):
    """One control action of a job, with its trigger, its effect and its verdict."""

    # The action's number within the job.
    seq: int
    # When it was taken: epoch s (simulated s).
    at_s: float
    kind: ControlActionKind
    # The class (shedding and moves only).
    class_name: NotRequired[str | None]
    # u = L / L_C when taken.
    usage: float
    # The τ the job's u crossed (scaling only).
    threshold: NotRequired[float | None]
    # How long u stayed past it, s.
    held_s: NotRequired[float | None]
    # The class manager's state (shedding only).
    manager_state: NotRequired[str | None]
    executors_before: NotRequired[int | None]
    # The size asked (None: not elastic).
    executors_after: NotRequired[int | None]
    shed_before: float
    shed_after: float
    # None until it is in.
    verdict: NotRequired[Verdict | None]
    # Who took it: the job's own controller, or the cluster coordinator (whose actions are
    # numbered apart: seq is unique per job and origin).
    origin: NotRequired[ControlActionOrigin]
    # Why the control plane acted (its actions only).
    trigger: NotRequired[str | None]


class ControlMessage(TypedDict):
    """What a job receives when a newer configuration exists."""

    job_id: int
    config: LiveConfig


class ElasticRead(TypedDict):
    # What a scenario's control.elastic.params accepts; defaults apply to what is left out. A
    # running job takes changes of hold_out_s, hold_in_s, min_executors, max_executors, sizing,
    # startup_timeout_s, warmup_s through PATCH /jobs/{id}/config ({"elastic": {...}});
    # executor_cores is fixed when it starts, and max_executors cannot rise above its value then.
    parameters: list[ManagerParamRead]
    # Where the thresholds come from.
    thresholds: str


class EngineRead(TypedDict):
    """How the Spark engine ran the job: the snapshot's engine settings as stored (a setting a newer
    engine adds is passed through; one an older snapshot lacks is None).
    """

    # Besides these keys, the API may send others (the schema allows any).

    # generator or redis.
    source: str | None
    files_dir: str | None
    # Without its password.
    redis_url: str | None
    redis_prefix: str | None
    sink: str | None
    sink_path: str | None
    target_utilization: float | None
    warmup_s: float | None
    watermark_s: float | None
    plain: bool | None
    fixed_pace: bool | None
    # one, or tier (a query per tier).
    queries: str | None
    burn: bool | None
    burn_repetition_ns: float | None
    partitions: int | None


class EventRange(TypedDict):
    """The stretch of event time a job computes for one class, its share of the class's hand-off
    between jobs (:class:`~spark_runner.core.migration.HandOff`): the origin keeps the tuples
    before ``until_s``, the target those from ``from_s`` on. A bound left None is open. Epoch
    seconds.
    """

    from_s: float | None
    until_s: float | None


class HandoffCreate(TypedDict):
    """Move ``class_name`` from the job computing it to a job holding it in standby."""

    class_name: str
    # The job computing it now.
    origin_job_id: int
    # A running job holding the class in standby.
    target_job_id: int


class HandoffRead(TypedDict):
    id: int
    class_name: str
    origin_job_id: int
    target_job_id: int
    # planned, switching, done or failed.
    state: str
    # Epoch s.
    requested_s: float
    # The switch instant, epoch s: the origin computes the tuples before it, the target those
    # from it on.
    switch_s: float
    # Both jobs must apply their ranges by then.
    deadline_s: float
    # The origin's watermark passes the switch then.
    done_after_s: float
    # The origin's configuration version with its range.
    origin_version: int
    target_version: int
    # Why it failed.
    reason: str | None
    created_by: str | None
    ended_at_s: float | None


class HandoffsRead(TypedDict):
    # Newest first.
    handoffs: list[HandoffRead]
    # The server's clock, epoch s (to read progress against).
    now_s: float


class Health(TypedDict):
    status: str
    database: str


class IngestBatch(TypedDict):
    """A batch of samples, as posted by a job (``MetricBatch`` with the ingest bounds)."""

    samples: list[IngestSample]


class IngestResult(TypedDict):
    job_id: int
    received: int


class IngestSample(TypedDict):
    """A sample as the ingest endpoint accepts it: every number finite and non-negative, every count
    and time within what a run can reach. (``t`` is further checked against the job's creation
    and the server's clock, see ``metrics.service.ingest``.)
    """

    class_name: str
    # Control-period number within the job, from 0.
    seq: int
    # End of the period, Unix epoch seconds.
    t: float
    # Length of the period, seconds.
    period_s: float
    # Tuples of the class that arrived.
    arrived_count: int
    # Output tuples produced for the class.
    output_count: int
    # Arrivals per second over the period.
    arrival_rate: float
    response_time_mean_s: NotRequired[float | None]
    response_time_max_s: NotRequired[float | None]
    response_time_p50_s: NotRequired[float | None]
    response_time_p95_s: NotRequired[float | None]
    response_time_p99_s: NotRequired[float | None]
    violation_mean_s: NotRequired[float | None]
    violation_max_s: NotRequired[float | None]
    # Tuples let in.
    admitted_count: NotRequired[int | None]
    # Tuples dropped.
    shed_count: NotRequired[int | None]
    waiting_count: NotRequired[int | None]
    load: NotRequired[float | None]
    capacity_share: NotRequired[float | None]
    headroom: NotRequired[float | None]
    capacity_usage: NotRequired[float | None]
    shed_fraction: NotRequired[float | None]
    oracle_shed_fraction: NotRequired[float | None]
    floor_s: NotRequired[float | None]
    manager: NotRequired[str | None]
    # normal, UT, OT, overloaded or infeasible.
    manager_state: NotRequired[str | None]
    # A DILoS capacity redistribution happened this period.
    redistributed: NotRequired[bool]
    # Live configuration version in force.
    config_version: NotRequired[int | None]
    # A warm-up period: its tuples waited through the job's first batch, which pays for Spark's
    # start (JIT compilation, Python workers), so its response times say nothing of the class's
    # target.
    warmup: NotRequired[bool]
    # The job's executors serving.
    executors: NotRequired[int | None]
    # The size the elastic policy asks.
    executors_requested: NotRequired[int | None]
    job_usage: NotRequired[float | None]


class JobClass(TypedDict):
    name: str
    priority: float
    delay_target_s: float
    # Generated arrival rate of the class's stream, tuples/s (0 when a stored scenario's workload
    # feeds it).
    rate_per_s: float | None
    # The load manager the class was launched with.
    manager: str | None


class JobConfigRead(TypedDict):
    """The newest configuration, what the job has applied, and the history of versions."""

    job_id: int
    latest_version: int
    applied_version: int | None
    pending_versions: list[int]
    # The newest configuration (= ``latest.config``).
    config: LiveConfig
    # The newest version: what the job runs once it applies it.
    latest: ConfigAtVersion
    # The newest version the job has acknowledged; None until it acknowledges its launch
    # configuration (version 0).
    applied: ConfigAtVersion | None
    # The job's usage thresholds tau0..tau3 in force: the lowest of its classes' in ``in_force``.
    thresholds: dict[str, float]
    # What the job runs now: the newest version it acknowledged, or its launch configuration
    # (version 0) until it acknowledges one.
    in_force: ConfigAtVersion
    versions: list[VersionRead]


class JobCreate(TypedDict):
    # Run this stored scenario (its classes, queries and workload); class_ids and rate_per_s are
    # then ignored.
    scenario_id: NotRequired[int | None]
    # Classes to run; default: all classes.
    class_ids: NotRequired[list[int] | None]
    duration_s: NotRequired[float | None]
    # Generated arrival rate per class.
    rate_per_s: NotRequired[float]
    control_period_s: NotRequired[float | None]
    # local[*], local[N] (N up to the cores of the worker that launches the job), or a master an
    # admin listed in HEADROOM_ALLOWED_SPARK_MASTERS; default: the API's SPARK_MASTER.
    spark_master: NotRequired[str | None]
    # Use this load manager for every class.
    manager: NotRequired[str | None]
    # Compute and report decisions but shed nothing.
    recommend_only: NotRequired[bool]
    # DILoS policy.
    policy: NotRequired[str]
    # CRC periods.
    redistribution_every: NotRequired[int]
    redistribution_enabled: NotRequired[bool]
    # Resize the job's executors on a standalone master: control.elastic's params (GET /elastic),
    # e.g. {"max_executors": 4}, the per-job maximum; over a stored scenario's, setting by
    # setting. On a local master the job runs without it and its results say why.
    elastic: NotRequired[dict[str, float | int | str] | None]
    # generator: tuples generated at rate_per_s (or the scenario's arrivals); redis: every stream
    # is read from the Redis stream <prefix>:<stream> (HEADROOM_STREAMS_REDIS_URL,
    # HEADROOM_STREAMS_PREFIX), fed by any producer.
    source: NotRequired[JobCreateSource]
    # Where output rows go: nowhere; Parquet or JSON-lines files, one directory per batch under
    # the job's directory (output/); or the Redis stream <prefix>:job:<id>:output.
    sink: NotRequired[JobCreateSink]
    # one: every class in one streaming query; tier: a streaming query per priority tier (levels
    # sharing a segment together), Spark's FAIR scheduler giving a free task slot to the top tier
    # first.
    queries: NotRequired[JobCreateQueries]
    # Classes of the job held in standby: their queries run on the Redis streams but compute
    # nothing until a hand-off (POST /handoffs) moves the class here. Needs source redis.
    standby: NotRequired[list[str]]


class JobLaunch(TypedDict):
    """The options the job was started with, read from its immutable snapshot (and, for what the
    snapshot does not keep, from the accepted launch request).
    """

    # The stored scenario the job ran (as it was at launch: the snapshot holds its document);
    # None: the registered classes, one generated stream each.
    scenario_id: int | None
    # That scenario's name.
    scenario_name: str | None
    # Generated arrival rate per class; None when a scenario's workload ran.
    rate_per_s: float | None
    # Stop after this long; None: until stopped.
    duration_s: float | None
    # The one load manager requested for every class; None: each class's own (see
    # ``classes[].manager``).
    manager: str | None
    # dilos: per-class managers plus capacity redistribution; per_class: per-class managers on
    # fixed quotas.
    mode: JobLaunchMode
    # Decisions computed and reported, nothing shed.
    recommend_only: bool
    # DILoS redistribution policy.
    policy: str
    # Control periods between redistributions.
    redistribution_every: int
    engine: EngineRead


class JobLog(TypedDict):
    job_id: int
    lines: list[str]


class JobRead(TypedDict):
    id: int
    status: JobStatus
    spark_master: str
    restart_of: int | None
    created_by: str | None
    pid: int | None
    exit_code: int | None
    failure_reason: str | None
    created_at: str
    started_at: str | None
    stop_requested_at: str | None
    stopped_at: str | None
    control_period_s: float
    classes: list[JobClass]
    launch: JobLaunch


class LiveConfig(TypedDict):
    """The whole live configuration of a job at one version."""

    version: int
    # Compute and report decisions, but shed nothing.
    recommend_only: bool
    # absolute, relative (thesis), strict.
    policy: str
    # CRC, in control periods.
    redistribution_every: int
    redistribution_enabled: bool
    classes: dict[str, ClassControl]
    # The job's elasticity settings (None: it does not scale its executors): hold_out_s,
    # hold_in_s, min_executors, max_executors, sizing, startup_timeout_s, warmup_s change live;
    # executor_cores is fixed at launch and max_executors cannot rise above the launch's; the
    # thresholds tau0..tau3 are the lowest of the classes'.
    elastic: dict[str, float | int | str | bool] | None
    # Per class moving between jobs, the event time this job computes for it; a class not named
    # here: all of it. Set by the control plane's hand-offs.
    ranges: dict[str, EventRange]


class LoginRequest(TypedDict):
    username: str
    password: str


class ManagerParamRead(TypedDict):
    """One parameter of a load manager, as the core defines and validates it."""

    name: str
    type: ManagerParamReadType
    default: float | int | str | bool
    # The core's own sentence for the parameter.
    description: str
    # e.g. s/s; None when the rules name none.
    unit: str | None
    # Every rule, worded as a 422 for a value that breaks it states it.
    rules: list[str]
    # Smallest allowed value (inclusive).
    minimum: float | None
    # Values must be greater than this.
    exclusive_minimum: float | None
    # Largest allowed value (inclusive).
    maximum: float | None
    # Values must be less than this.
    exclusive_maximum: float | None
    # The allowed values of a text parameter.
    choices: list[str] | None


class ManagerRead(TypedDict):
    # What a class's ``manager`` field takes.
    kind: str
    label: str
    summary: str
    # The manager a new class gets when it names none.
    default: bool
    # What ``manager_params`` accepts; defaults apply to what is left out. The delay target is
    # the class's own field, not a manager parameter.
    parameters: list[ManagerParamRead]


class MetricSample(TypedDict):
    """Per-class statistics of one control period."""

    class_name: str
    # Control-period number within the job, from 0.
    seq: int
    # End of the period, Unix epoch seconds.
    t: float
    # Length of the period, seconds.
    period_s: float
    # Tuples of the class that arrived.
    arrived_count: int
    # Output tuples produced for the class.
    output_count: int
    # Arrivals per second over the period.
    arrival_rate: float
    # Mean of output instant minus arrival instant.
    response_time_mean_s: float | None
    # Largest response time of any output tuple.
    response_time_max_s: float | None
    response_time_p50_s: float | None
    response_time_p95_s: float | None
    response_time_p99_s: float | None
    # Mean of max(0, response time − delay target).
    violation_mean_s: float | None
    violation_max_s: float | None
    # Tuples let in.
    admitted_count: int | None
    # Tuples dropped.
    shed_count: int | None
    # Tuples queued at the end of the period.
    waiting_count: int | None
    # Incoming load L before shedding, s/s (Eq. 3.1).
    load: float | None
    # Share of the processor the class scheduler gave.
    capacity_share: float | None
    # The manager's capacity estimate L_C (headroom H).
    headroom: float | None
    # u = L / L_C: above 1 the class is overloaded.
    capacity_usage: float | None
    # The manager's shed fraction (its decision; a queue rule that drops the oldest tuples a
    # class cannot answer in time counts in shed_count only).
    shed_fraction: float | None
    # Least shedding that would fit the capacity.
    oracle_shed_fraction: float | None
    # The least mean response time the class's tuples get fully admitted, with no other class's
    # work in their batches, s: a delay target below it cannot be met on average (the class is
    # infeasible).
    floor_s: float | None
    manager: str | None
    # normal, UT, OT, overloaded or infeasible.
    manager_state: str | None
    # A DILoS capacity redistribution happened this period.
    redistributed: bool
    # Live configuration version in force.
    config_version: int | None
    # A warm-up period: its tuples waited through the job's first batch, which pays for Spark's
    # start (JIT compilation, Python workers), so its response times say nothing of the class's
    # target.
    warmup: bool
    # The job's executors serving.
    executors: int | None
    # The size the elastic policy asks.
    executors_requested: int | None
    # The job's u: its classes' load over its capacity.
    job_usage: float | None


class MetricSeries(TypedDict):
    job_id: int
    samples: list[MetricSample]
    # More results matched than ``limit``: with last_s the oldest were left out, else the newest.
    # Narrow the window, raise limit (at most 100000), use step_s, or export the window as CSV
    # (which streams every sample).
    truncated: bool


class NormalGen(TypedDict):
    kind: Literal["normal"]
    mean: float
    sd: float


class NormalGenInput(TypedDict):
    kind: Literal["normal"]
    mean: NotRequired[float]
    sd: NotRequired[float]


class QueryClassCreate(TypedDict):
    name: str
    # Larger means more important.
    priority: float
    # Worst-case response time the class tolerates.
    delay_target_s: float
    # An elastic job (scenario control.elastic) releases executors once its usage has stayed at
    # or below the lowest tau0 of its classes for its hold time.
    tau0: NotRequired[float]
    # An elastic job resizes its pool, in one step, to bring its usage to the lowest tau1 of its
    # classes.
    tau1: NotRequired[float]
    # The linear manager sheds above this usage; while an elastic job adds executors it sheds
    # only the load above the lowest tau2 of its classes.
    tau2: NotRequired[float]
    # An elastic job adds executors once its usage has stayed at or above the lowest tau3 of its
    # classes for its hold time.
    tau3: NotRequired[float]
    # The class's load manager: one of the kinds the manager catalogue lists.
    manager: NotRequired[str]
    # The manager's parameters; spec defaults for the rest.
    manager_params: NotRequired[dict[str, float | int | str | bool]]
    # Share of its original quota a lending class keeps spare.
    reserve_fraction: NotRequired[float]
    # Largest share of its original quota the class may lend.
    max_lend_fraction: NotRequired[float]
    # At start, serve the backlog already in the log (Redis, files) instead of shedding first
    # what is already past the target (a class whose every tuple matters more than its latency,
    # e.g. billing).
    catch_up: NotRequired[bool]
    # Largest share of its arrivals the class sheds in a control period, whatever its manager
    # decides (1: no cap). Below 1 it also keeps the tuples already past its target and answers
    # them late: for a class that would rather answer late than lose more (audit, billing), at
    # the cost of its latency and the classes below's capacity.
    max_shed_fraction: NotRequired[float]


class QueryClassRead(TypedDict):
    """A stored class: its name, stamps and a field per class setting."""

    id: int
    name: str
    created_at: str
    updated_at: str
    # Larger means more important.
    priority: float
    # Worst-case response time the class tolerates.
    delay_target_s: float
    # An elastic job (scenario control.elastic) releases executors once its usage has stayed at
    # or below the lowest tau0 of its classes for its hold time.
    tau0: float
    # An elastic job resizes its pool, in one step, to bring its usage to the lowest tau1 of its
    # classes.
    tau1: float
    # The linear manager sheds above this usage; while an elastic job adds executors it sheds
    # only the load above the lowest tau2 of its classes.
    tau2: float
    # An elastic job adds executors once its usage has stayed at or above the lowest tau3 of its
    # classes for its hold time.
    tau3: float
    # The class's load manager: one of the kinds the manager catalogue lists.
    manager: str
    # The manager's parameters; spec defaults for the rest.
    manager_params: dict[str, float | int | str | bool]
    # Share of its original quota a lending class keeps spare.
    reserve_fraction: float
    # Largest share of its original quota the class may lend.
    max_lend_fraction: float
    # At start, serve the backlog already in the log (Redis, files) instead of shedding first
    # what is already past the target (a class whose every tuple matters more than its latency,
    # e.g. billing).
    catch_up: bool
    # Largest share of its arrivals the class sheds in a control period, whatever its manager
    # decides (1: no cap). Below 1 it also keeps the tuples already past its target and answers
    # them late: for a class that would rather answer late than lose more (audit, billing), at
    # the cost of its latency and the classes below's capacity.
    max_shed_fraction: float


class QueryClassUpdate(ClassChange):
    """Partial update; the merged result must still satisfy every rule."""

    name: NotRequired[str | None]


class QueryRead(TypedDict):
    name: str
    # A stream name, or query:<name> to read a shared query's output.
    source: str
    # Operators as in docs/scenario-format.md.
    operators: list[dict[str, Any]]
    # Other classes may read its output.
    shared: bool
    id: int
    class_id: int
    created_at: str
    updated_at: str


class QuerySpec(TypedDict):
    name: str
    # A stream name, or query:<name> to read a shared query's output.
    source: str
    # Operators as in docs/scenario-format.md.
    operators: list[dict[str, Any]]
    # Other classes may read its output.
    shared: NotRequired[bool]


class ReallocationRead(TypedDict):
    id: int
    # Epoch s.
    at_s: float
    executors: int
    # The short job (None: jobs came or went).
    trigger_job_id: int | None
    # The short job's use of its allocation then.
    usage: float
    # How long it had been short, s.
    held_s: float
    before: dict[str, int]
    after: dict[str, int]
    # Each job's classes as reported: [priority, load in executors].
    reports: dict[str, dict[str, list[float]]]
    # Why the allocation changed, in words.
    why: str


class ReallocationsRead(TypedDict):
    master: str
    # Oldest first.
    reallocations: list[ReallocationRead]
    # Older ones were left out (raise limit).
    truncated: bool


class RunComparison(TypedDict):
    a: RunSummary
    b: RunSummary


class RunSummary(TypedDict):
    job: JobRead
    # The run's first sample time, epoch s: the origin of since_s/until_s (None: no samples yet).
    first_sample_t: float | None
    classes: list[ClassSummary]


class ScenarioRead(TypedDict):
    id: int
    name: str
    description: str
    document: dict[str, Any]
    created_by: str | None
    created_at: str
    updated_at: str


class ScenarioSummary(TypedDict):
    id: int
    name: str
    description: str
    updated_at: str


class ScenarioUpload(TypedDict):
    # The scenario document.
    yaml: str


class SequenceGen(TypedDict):
    kind: Literal["sequence"]


class StreamColumn(TypedDict):
    """One column of a stream: its name, its type and how a generated stream draws it (without
    ``generator``: :data:`DEFAULT_GENERATORS` of its type).
    """

    name: str
    type: StreamColumnType
    generator: UniformGen | ZipfGen | NormalGen | ChoiceGen | SequenceGen | ArrivalGen


class StreamColumnInput(TypedDict):
    """One column of a stream: its name, its type and how a generated stream draws it (without
    ``generator``: :data:`DEFAULT_GENERATORS` of its type).
    """

    name: str
    type: NotRequired[StreamColumnType]
    generator: NotRequired[
        UniformGenInput
        | ZipfGenInput
        | NormalGenInput
        | ChoiceGenInput
        | SequenceGen
        | ArrivalGenInput
    ]


class StreamRead(TypedDict):
    name: str
    # The columns its tuples carry (docs/scenario-format.md, streams[].columns).
    columns: list[StreamColumn]
    # The timestamp column windows and joins use; default: arrival time.
    event_time: str | None
    description: str
    id: int
    created_at: str
    updated_at: str


class StreamSpec(TypedDict):
    name: str
    # The columns its tuples carry (docs/scenario-format.md, streams[].columns).
    columns: list[StreamColumnInput]
    # The timestamp column windows and joins use; default: arrival time.
    event_time: NotRequired[str | None]
    description: NotRequired[str]


class TokenResponse(TypedDict):
    access_token: str
    token_type: str
    expires_at: str | None
    username: str
    role: Role


class TrackRecord(TypedDict):
    """How far off the predictions of one kind of change were, checked against what the changes then
    did (``backend.tuning.predictions``), over every job.
    """

    # The settings the changes touched, class names left out.
    kind: str
    # Applied changes of this kind whose prediction was checked.
    changes: int
    # Mean of |predicted − measured| mean violation per class, s.
    violation_error_s: float | None
    # Mean of |predicted − measured| loss per class (share of tuples).
    loss_error: float | None
    # Class figures the two means are over.
    figures: int


class UniformGen(TypedDict):
    kind: Literal["uniform"]
    min: float
    max: float


class UniformGenInput(TypedDict):
    kind: Literal["uniform"]
    min: NotRequired[float]
    max: NotRequired[float]


class UserCreate(TypedDict):
    username: str
    # At least 8 characters, not one of the most common passwords.
    password: str
    role: NotRequired[Role]


class UserRead(TypedDict):
    id: int
    username: str
    role: Role
    active: bool
    created_at: str


class UserUpdate(TypedDict):
    password: NotRequired[str | None]
    role: NotRequired[Role | None]
    active: NotRequired[bool | None]


class Verdict(TypedDict):
    """Violation and loss over the periods before an action against those after it.

    ``violation_*_s`` is the mean over the periods of the worst response time's excess over the
    delay target (the job's: the sum over its classes; a class's own for a shedding action);
    ``loss_*`` the shed tuples over the arrived ones. ``outcome`` is ``worse`` when either grew
    beyond its tolerance, ``improved`` when either fell beyond it and neither grew, ``unchanged``
    otherwise.
    """

    outcome: VerdictOutcome
    # Periods in each window.
    periods: int
    violation_before_s: float
    violation_after_s: float
    loss_before: float
    loss_after: float


class VersionRead(TypedDict):
    version: int
    changes: list[dict[str, Any]]
    created_by: str | None
    created_at: str
    applied_at: str | None


class WhatIfRead(TypedDict):
    """The job's last minutes replayed through the simulator (``spark_runner.sim.whatif``) under the
    newest configuration and under the proposed change, beside what the job measured. The
    prediction is kept, to be checked against what the change does if it is applied as previewed.
    """

    job_id: int
    # Length of the replayed window, s.
    window_s: float
    classes: dict[str, ClassWhatIf]
    # The settings the change touches, class names left out (empty: it changes nothing).
    kind: str
    # How far off earlier predictions of this kind were; None before one is checked.
    track_record: TrackRecord | None


class ZipfGen(TypedDict):
    kind: Literal["zipf"]
    n: int
    s: float


class ZipfGenInput(TypedDict):
    kind: Literal["zipf"]
    n: int
    s: NotRequired[float]

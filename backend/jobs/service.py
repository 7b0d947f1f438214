"""Job use cases: create, launch, stop and watch.

Routes and Celery tasks call these; they flush, never commit. Enqueueing goes through
``backend.db.after_commit`` so a task never sees a job its creator rolled back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.classes import service as classes_service
from backend.classes.models import QueryClass
from backend.classes.repository import QueryClassRepository
from backend.db import after_commit, utcnow
from backend.errors import Conflict, FieldErrors
from backend.jobs import launcher
from backend.jobs.models import Job
from backend.jobs.repository import JobRepository
from backend.jobs.schemas import JobCreate
from backend.jobs.states import TERMINAL, JobStatus
from backend.queries import service as queries
from backend.scenarios.repository import ScenarioRepository
from backend.settings import Settings
from backend.users import security
from spark_runner.contract import masters
from spark_runner.contract.control import ClassControl, EventRange, LiveConfig, elastic_settings
from spark_runner.contract.snapshot import (
    EngineSettings,
    JobSnapshot,
    one_query_reason,
)
from spark_runner.core.errors import ParameterError
from spark_runner.scenario.compose import UNLIMITED_SCHEDULE_S, scenario_live_config
from spark_runner.scenario.handoff import movable_issue
from spark_runner.scenario.loader import scenario_from_dict
from spark_runner.scenario.snapshots import job_snapshot

# The job may take ~45 s to drain a batch, flush metrics and stop Spark (see its main).
STOP_GRACE = timedelta(seconds=60)
# A job still running this long after its stop request is signalled again (lost message).
STOP_RESEND = timedelta(seconds=15)
LOG_TAIL_LINES = 40

Enqueue = Callable[[int], None]


class LaunchConfigs(Protocol):
    """Where each run's live configuration is versioned: live tuning
    (``backend.tuning``), which reads jobs and so is handed in (``backend.hooks``) rather
    than imported. A new run records its launch configuration as version 0; a restart
    starts from the newest version of the run it repeats."""

    def record_initial(
        self, session: Session, job: Job, config: LiveConfig, created_by: str | None
    ) -> None: ...

    def latest_config(self, session: Session, job_id: int) -> LiveConfig: ...


def list_jobs(session: Session) -> Sequence[Job]:
    return JobRepository(session).list_all()


def stale_pending_ids(
    session: Session, older_than: timedelta, now: Callable[[], datetime] = utcnow
) -> list[int]:
    """Pending jobs whose launch message has not been acted on in time (lost enqueue)."""
    return JobRepository(session).pending_created_before(now() - older_than)


def job_dir(settings: Settings, job_id: int) -> Path:
    return settings.jobs_dir / str(job_id)


def create_job(
    session: Session,
    settings: Settings,
    data: JobCreate,
    enqueue_launch: Enqueue,
    configs: LaunchConfigs,
    *,
    created_by: str | None = None,
    idempotency_key: str | None = None,
) -> tuple[Job, bool]:
    """Record a pending job with a frozen snapshot; launch it once the record is committed.

    Returns ``(job, created)``. With an ``idempotency_key`` already used for the same
    request, the job created by the first request is returned and nothing new is
    launched; used for a different request, a 422 naming the header.
    """
    repo = JobRepository(session)
    if idempotency_key is not None:
        earlier = repo.by_idempotency_key(idempotency_key)
        if earlier is not None:
            return _same_request(earlier, data, idempotency_key), False
    master = data.spark_master or settings.spark_master
    check_master(settings, master)
    _check_streams_redis(settings, data)
    if data.scenario_id is not None:
        document = ScenarioRepository(session).require(data.scenario_id).document
        plan = _plan_from_scenario(document, data)
    else:
        plan = _plan_from_classes(session, settings, data)
    if data.standby:
        plan = _with_standby(plan, data)
    plan.control.validate_rules()  # ParameterError naming the class's field, before a row
    if data.queries == "tier":
        reason = one_query_reason(plan.scenario, elastic=plan.control.elastic is not None)
        if reason is not None:
            raise ParameterError("queries", data.queries, reason)
    try:
        with session.begin_nested():
            job = repo.add(
                Job(
                    spark_master=master,
                    config={},
                    launch_request=data.model_dump(mode="json"),
                    created_by=created_by,
                    idempotency_key=idempotency_key,
                )
            )
    except IntegrityError:
        # A concurrent request with the same key won the race: answer with its job.
        earlier = repo.by_idempotency_key(idempotency_key) if idempotency_key else None
        if earlier is None or idempotency_key is None:
            raise
        return _same_request(earlier, data, idempotency_key), False
    snapshot = job_snapshot(
        plan.scenario,
        control=plan.control,
        job_id=job.id,
        api_url=settings.public_api_url,
        checkpoint_dir=str(job_dir(settings, job.id) / "checkpoint"),
        rate_per_s=plan.rate_per_s,
        spark_master=job.spark_master,
        control_period_s=plan.control_period_s or settings.control_period_s,
        duration_s=data.duration_s or plan.duration_s,
        engine=_engine(settings, data, job.id),
    )
    control = plan.control
    job.config = snapshot.model_dump(mode="json", exclude={"ingest_token"})
    configs.record_initial(session, job, control, created_by)
    session.flush()
    job_id = job.id
    after_commit(session, lambda: enqueue_launch(job_id))
    return job, True


def check_master(settings: Settings, master: str) -> None:
    """Refuse a master a job may not run on from this process: local threads up to its
    cores, or a master an admin listed (``spark_runner.contract.masters``). Checked where
    a job is created and again where it is launched, which may be another machine."""
    listed = ", ".join(settings.allowed_spark_masters)
    masters.check_master(
        master,
        cores=masters.usable_cores(),
        allowed=settings.allowed_spark_masters,
        others="a master an admin listed in HEADROOM_ALLOWED_SPARK_MASTERS "
        + (f"({listed})" if listed else "(none is listed)"),
    )


def _check_streams_redis(settings: Settings, data: JobCreate) -> None:
    for field, value in (("source", data.source), ("sink", data.sink)):
        if value == "redis" and not settings.streams_redis_url:
            raise ParameterError(
                field,
                value,
                "no Redis for streams is configured on the control plane "
                "(set HEADROOM_STREAMS_REDIS_URL)",
            )


def _engine(settings: Settings, data: JobCreate, job_id: int) -> EngineSettings:
    """Where the job reads its streams and writes its output (paths and keys are the
    control plane's: a request names only the kinds)."""
    sink_path = None
    if data.sink == "redis":
        sink_path = f"{settings.streams_prefix}:job:{job_id}:output"
    elif data.sink != "none":
        sink_path = str(job_dir(settings, job_id) / "output")
    return EngineSettings(
        source=data.source,
        redis_url=settings.streams_redis_url if "redis" in (data.source, data.sink) else "",
        redis_prefix=settings.streams_prefix,
        sink=data.sink,
        sink_path=sink_path,
        queries=data.queries,
    )


def _same_request(earlier: Job, data: JobCreate, key: str) -> Job:
    """``earlier`` if it was created by this very request (the same body, defaults
    filled in); a key reused for another request is refused, as payment APIs do, rather
    than answered with a job the caller did not ask for."""
    if earlier.launch_request is not None and earlier.launch_request != data.model_dump(
        mode="json"
    ):
        rule = (
            f"{key!r} was used for another request (job {earlier.id}, with a different "
            "body): send a new key for a new request, or the same body to get that job"
        )
        raise FieldErrors([("Idempotency-Key", rule)], location="header")
    return earlier


@dataclass(frozen=True)
class _LaunchPlan:
    control: LiveConfig
    scenario: dict[str, Any]
    rate_per_s: float = 0.0
    """The rate the job generates each class's stream at (0: the scenario's workload)."""
    control_period_s: float | None = None
    duration_s: float | None = None


def _plan_from_classes(session: Session, settings: Settings, data: JobCreate) -> _LaunchPlan:
    """Registered classes with their queries (a class without one: a generated stream)."""
    classes_repo = QueryClassRepository(session)
    if data.class_ids is None:
        classes = classes_repo.list_all()
    else:
        wanted = list(dict.fromkeys(data.class_ids))
        classes = classes_repo.get_many(wanted)
        missing = sorted(set(wanted) - {c.id for c in classes})
        if missing:
            raise ParameterError("class_ids", missing, "every id must name an existing class")
    if not classes:
        raise ParameterError(
            "class_ids", data.class_ids, "a job needs at least one query class; create one first"
        )
    period_s = data.control_period_s or settings.control_period_s
    control = LiveConfig(
        recommend_only=data.recommend_only,
        policy=data.policy,
        redistribution_every=data.redistribution_every,
        redistribution_enabled=data.redistribution_enabled,
        classes={c.name: _control_of(c, data.manager) for c in classes},
        elastic=elastic_settings(data.elastic) if data.elastic is not None else None,
    )
    return _LaunchPlan(
        rate_per_s=data.rate_per_s,
        scenario=queries.scenario_for(
            session,
            classes,
            control,
            rate_per_s=data.rate_per_s,
            period_s=period_s,
            duration_s=data.duration_s or UNLIMITED_SCHEDULE_S,
        ),
        control=control,
        control_period_s=data.control_period_s,
    )


def _plan_from_scenario(document: dict[str, Any], data: JobCreate) -> _LaunchPlan:
    """A stored scenario: its classes, queries, workload and control settings."""
    scenario = scenario_from_dict(document)  # traces confined to the trace folder
    control_doc = scenario.control
    launch = scenario_live_config(scenario)
    elastic = launch.elastic
    if data.elastic is not None:  # the request's settings over the scenario's
        elastic = elastic_settings(
            {**(control_doc.elastic.params if control_doc.elastic else {}), **data.elastic}
        )
    controls = {
        name: c.model_copy(update={"manager": data.manager, "manager_params": {}})
        if data.manager is not None and data.manager != c.manager
        else c
        for name, c in launch.classes.items()
    }
    return _LaunchPlan(
        control=LiveConfig(
            recommend_only=data.recommend_only,
            **data.scenario_control(control_doc),
            classes=controls,
            elastic=elastic,
        ),
        scenario=document,
        control_period_s=data.control_period_s or control_doc.period_s,
        duration_s=scenario.duration_s,
    )


def _with_standby(plan: _LaunchPlan, data: JobCreate) -> _LaunchPlan:
    """``plan`` with the classes ``data.standby`` names held in standby (a range that
    computes nothing), each checked to be one a hand-off can move here."""
    if data.source != "redis":
        raise ParameterError(
            "standby", data.standby, "a class in standby takes over from a shared log: "
            "start the job with source redis",
        )  # fmt: skip
    scenario = scenario_from_dict(plan.scenario)
    for name in data.standby:
        if name not in plan.control.classes:
            raise ParameterError(
                "standby", name, f"must name a class of the job: {sorted(plan.control.classes)}"
            )
        why = movable_issue(scenario, name)
        if why is not None:
            raise ParameterError("standby", name, f"cannot move between jobs: {why}")
    ranges = {name: EventRange.nothing() for name in data.standby}
    return replace(plan, control=plan.control.model_copy(update={"ranges": ranges}))


def _control_of(query_class: QueryClass, manager: str | None) -> ClassControl:
    control = classes_service.class_control(query_class)
    if manager is not None and manager != control.manager:
        return control.model_copy(update={"manager": manager, "manager_params": {}})
    return control


def restart(
    session: Session,
    settings: Settings,
    job_id: int,
    enqueue_launch: Enqueue,
    configs: LaunchConfigs,
    *,
    created_by: str | None = None,
) -> Job:
    """A new run with the same frozen configuration; the old run and its history stay."""
    old = JobRepository(session).require(job_id)
    if old.state not in TERMINAL:
        raise Conflict(
            f"status={old.status!r}: only a stopped or failed job can be restarted; stop it first"
        )
    try:
        check_master(settings, old.spark_master)
    except ParameterError as error:
        raise Conflict(f"job {job_id} cannot run again: {error}") from None
    new = JobRepository(session).add(
        Job(
            spark_master=old.spark_master,
            config={},
            launch_request=old.launch_request,
            restart_of=old.id,
            created_by=created_by,
        )
    )
    control = configs.latest_config(session, old.id).model_copy(update={"version": 0})
    snapshot = JobSnapshot.model_validate(old.config).model_copy(
        update={
            "job_id": new.id,
            "checkpoint_dir": str(job_dir(settings, new.id) / "checkpoint"),
            "control": control,
        }
    )
    new.config = snapshot.model_dump(mode="json", exclude={"ingest_token"})
    configs.record_initial(session, new, control, created_by)
    session.flush()
    new_id = new.id
    after_commit(session, lambda: enqueue_launch(new_id))
    return new


def request_stop(session: Session, job_id: int, enqueue_stop: Enqueue) -> Job:
    """Mark the job stopping; the signal is sent by a task after commit."""
    job = JobRepository(session).require(job_id, for_update=True)
    if job.state in (JobStatus.STOPPING, *TERMINAL):
        return job  # Stopping twice is not an error: the first request is in flight.
    job.move_to(JobStatus.STOPPING)
    job.stop_requested_at = utcnow()
    session.flush()
    after_commit(session, lambda: enqueue_stop(job_id))
    return job


def launch(session: Session, settings: Settings, job_id: int) -> bool:
    """Start the job's process and record its handle. Returns whether to watch it.

    Idempotent: a job that is no longer pending (a redelivered task, or a stop that came
    first) is left alone.
    """
    job = JobRepository(session).require(job_id, for_update=True)
    if job.state is not JobStatus.PENDING:
        return job.state not in TERMINAL
    try:
        check_master(settings, job.spark_master)
    except ParameterError as error:
        _fail(job, f"refused at launch: {error}")
        return False
    directory = job_dir(settings, job.id)
    launcher.make_job_dir(directory)
    launcher.forget_previous_run(directory)
    config_path = directory / "config.json"
    log_path = directory / "job.log"
    job.log_path = str(log_path)
    # A fresh token per launch; only its digest is stored, the process gets it in its
    # snapshot file (readable by the owner only).
    token = security.new_token()
    job.ingest_token_digest = security.token_digest(token)
    snapshot = JobSnapshot.model_validate(job.config).model_copy(update={"ingest_token": token})
    try:
        command = launcher.prepare_launch(settings, snapshot, config_path)
        job.pid = launcher.start_job_process(command, log_path)
    except OSError as error:
        _fail(job, f"could not start the job process: {error}")
        return False
    job.move_to(JobStatus.STARTING)
    job.started_at = utcnow()
    session.flush()
    return True


def send_stop(session: Session, settings: Settings, job_id: int) -> None:
    job = JobRepository(session).require(job_id)
    if job.pid is not None and job.state is JobStatus.STOPPING:
        launcher.request_stop(job.pid, job_dir(settings, job.id))


def watch(
    session: Session, settings: Settings, job_id: int, now: Callable[[], datetime] = utcnow
) -> bool:
    """Reconcile the recorded status with the process. Returns whether to keep watching.

    ``now``: the wall clock the stop's grace periods are measured on (injectable)."""
    job = JobRepository(session).require(job_id, for_update=True)
    if job.state in TERMINAL:
        return False
    if job.pid is None:
        if job.state is JobStatus.STOPPING:
            job.move_to(JobStatus.STOPPED)
            session.flush()
            return False
        return job.state is JobStatus.PENDING
    state = launcher.process_state(job.pid, job_dir(settings, job.id))
    if state.alive:
        if job.state is JobStatus.STOPPING:
            # The stop task signals at once; if its message was lost with the broker, the
            # sweep signals again after a while; past the grace, it forces the stop.
            stopping_for = _stopping_for(job, now())
            if stopping_for > STOP_GRACE:
                launcher.kill_group(job.pid)
            elif stopping_for > STOP_RESEND:
                launcher.request_stop(job.pid, job_dir(settings, job.id))
        return True
    launcher.kill_group(job.pid)  # The driver is gone; its JVM must not outlive it.
    job.exit_code = state.exit_code
    if job.state is JobStatus.STOPPING or state.exit_code == 0:
        job.move_to(JobStatus.STOPPED)
    else:
        reason = (
            f"the job process exited with code {state.exit_code}"
            if state.exit_code is not None
            else "the job process disappeared without an exit code (killed by a signal?)"
        )
        _fail(job, reason)
    session.flush()
    return False


def mark_running(job: Job) -> None:
    """First metrics from a starting job prove Spark is up."""
    if job.state is JobStatus.STARTING:
        job.move_to(JobStatus.RUNNING)


def read_log(job: Job, lines: int = 200) -> list[str]:
    return launcher.log_tail(Path(job.log_path) if job.log_path else None, lines)


def _stopping_for(job: Job, at: datetime) -> timedelta:
    return at - job.stop_requested_at if job.stop_requested_at else timedelta(0)


def _fail(job: Job, reason: str) -> None:
    tail = read_log(job, LOG_TAIL_LINES)
    job.failure_reason = reason + ("\n--- log tail ---\n" + "\n".join(tail) if tail else "")
    job.move_to(JobStatus.FAILED)

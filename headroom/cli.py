"""``headroom``: run the product and its jobs from the command line."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import typer

from backend.cli import users_app
from headroom.api_cli import (
    auth_app,
    classes_app,
    coordinator_app,
    handoffs_app,
    jobs_app,
    queries_app,
    streams_app,
)
from headroom.cluster_cli import cluster_app
from spark_runner.contract.actions import ControlAction, action_line
from spark_runner.contract.snapshot import (
    DEFAULT_TARGET_UTILIZATION,
    DEFAULT_WATERMARK_S,
    QUERY_LAYOUT_HELP,
    EngineSettings,
    JobSnapshot,
)
from spark_runner.control.results import scaling_actions
from spark_runner.core.elastic import MAX_EXECUTORS
from spark_runner.scenario.models import Scenario

MAX_CLUSTER_JOBS = 16
"""Most jobs ``headroom simulate-cluster`` runs side by side."""
EXIT_TOO_FEW_PERIODS = 7
"""``headroom run`` measured too few control periods to judge (results still written)."""

app = typer.Typer(help="QoS control plane for Spark Structured Streaming.", no_args_is_help=True)
app.add_typer(users_app, name="users")
app.add_typer(auth_app, name="auth")
app.add_typer(classes_app, name="classes")
app.add_typer(jobs_app, name="jobs")
app.add_typer(queries_app, name="queries")
app.add_typer(streams_app, name="streams")
app.add_typer(cluster_app, name="cluster")
app.add_typer(coordinator_app, name="coordinator")
app.add_typer(handoffs_app, name="handoffs")


@app.command()
def migrate() -> None:
    """Bring the configured database to the newest schema (alembic upgrade head)."""
    from backend.files import private_dir, use_private_umask
    from backend.migrate import upgrade
    from backend.settings import get_settings

    use_private_umask()  # the SQLite file and its WAL are created owner-only
    settings = get_settings()
    private_dir(settings.data_dir)
    upgrade(settings.sqlalchemy_url)
    typer.echo(f"database at head: {_redact(settings.sqlalchemy_url)}")


@app.command()
def up(dashboard: bool = typer.Option(True, help="Also serve the dashboard.")) -> None:
    """Migrate the database, then run the API, a Celery worker and the dashboard; restart
    any of them that dies (after a back-off), leaving the others running."""
    from backend.cli import bootstrap_first_admin
    from backend.settings import get_settings
    from backend.stack import Stack

    migrate()
    settings = get_settings()
    password_file = bootstrap_first_admin(settings)
    stack = Stack.from_settings(settings)
    stack.announce = lambda message: typer.echo(message, err=True)
    stopping = _stop_on_signals()
    try:
        stack.start_api()
        stack.start_worker()
        if dashboard:
            stack.start_dashboard()
        stack.wait_healthy()
        typer.echo(f"API:       {settings.public_api_url}/docs")
        if dashboard:
            typer.echo(f"Dashboard: http://{settings.dashboard_host}:{settings.dashboard_port}/")
        typer.echo(f"Logs:      {settings.data_dir / 'logs'}   (Ctrl-C stops everything)")
        if password_file:
            typer.echo(f"First login: user 'admin', password in {password_file}")
        # A service that dies is restarted after a back-off; the others keep running.
        stack.supervise(stopping.is_set)
    finally:
        stack.stop()


@app.command()
def simulate(
    scenario: Path = typer.Argument(
        ..., help="Scenario YAML file (format: docs/scenario-format.md).", show_default=False
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write the results JSON (summary and per-period series) here."
    ),
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw response time vs target, headroom and shed rate (PNG)."
    ),
    overrides: list[str] | None = typer.Option(
        None,
        "--set",
        help="Override a scenario value before validation, path=value "
        "(e.g. control.mode=common); repeatable.",
    ),
) -> None:
    """Simulate SCENARIO and print the per-class table (response time, violation, loss)."""
    results = _run_simulated(_load(scenario, overrides), out)
    if plot is not None:
        from spark_runner.sim.plot import PlotUnavailable, plot_results

        try:
            plot.parent.mkdir(parents=True, exist_ok=True)
            plot_results(results, plot)
        except PlotUnavailable as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(code=3) from None
        typer.echo(f"plot: {plot}")


@app.command("simulate-cluster")
def simulate_cluster(
    jobs: list[Path] = typer.Argument(
        ..., help="One elastic scenario YAML per job (2 to 16).", show_default=False
    ),
    executors: int = typer.Option(
        ..., min=1, max=MAX_EXECUTORS, help="The cluster's executors (processors of speed 1)."
    ),
    static: bool = typer.Option(
        False, help="No coordinator: each job holds up to its own max_executors."
    ),
    standby: list[str] = typer.Option(
        None,
        help="Repeat: JOB/CLASS, a class JOB's scenario declares on the same stream as the "
        "job computing it, held ready for the coordinator to move there.",
    ),
) -> None:
    """Simulate JOBS side by side on one cluster under the coordinator (docs/spark-runner.md,
    Elastic capacity); print each job's table, the cluster oracle, the reallocations and
    the class moves."""
    from spark_runner.control.report import render_table, run_header
    from spark_runner.control.results import build_results
    from spark_runner.core.coordinator import Coordinator
    from spark_runner.core.errors import ParameterError
    from spark_runner.sim.cluster import cluster_classes, cluster_oracle
    from spark_runner.sim.cluster import simulate_cluster as simulate_jobs

    if not 2 <= len(jobs) <= MAX_CLUSTER_JOBS:
        typer.echo(f"error: JOBS names {len(jobs)} files; give 2 to {MAX_CLUSTER_JOBS}", err=True)
        raise typer.Exit(code=2)
    scenarios = {}
    for path in jobs:
        loaded = _load(path, None)
        if loaded.name in scenarios:
            typer.echo(f"error: {path}: a second job named {loaded.name!r}", err=True)
            raise typer.Exit(code=2)
        scenarios[loaded.name] = loaded
    try:
        held = _standby(standby or [])
        out = simulate_jobs(scenarios, executors, None if static else Coordinator(), held)
    except ParameterError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    for run in out.jobs.values():
        results = build_results(run)
        _echo_run(run_header(results), results)
    least = cluster_oracle(out, executors)
    rows = [
        [key, f"{100 * c.loss:.2f}", f"{100 * least[key]:.2f}"]
        for key, c in cluster_classes(out).items()
    ]
    typer.echo(render_table(["class", "loss %", "cluster oracle %"], rows))
    for change in out.reallocations:
        trigger = change.trigger or "jobs started"
        typer.echo(
            f"{change.at_s:8.1f} s  {trigger}: {dict(change.before)} -> {dict(change.after)}"
        )
    for moved in out.moves:
        m = moved.move
        typer.echo(
            f"{moved.at_s:8.1f} s  {m.class_name} moves from {m.origin} (u {m.origin_usage:.2f})"
            f" to {m.target} (u {m.target_usage:.2f} with it) at {moved.switch_s:g} s"
        )


def _standby(pairs: list[str]) -> dict[str, frozenset[str]]:
    """``--standby`` values (JOB/CLASS) by job."""
    from spark_runner.core.errors import ParameterError

    held: dict[str, frozenset[str]] = {}
    for pair in pairs:
        job, _, name = pair.partition("/")
        if not job or not name:
            raise ParameterError("--standby", pair, "must be JOB/CLASS")
        held[job] = held.get(job, frozenset()) | {name}
    return held


@app.command()
def run(
    scenario: Path = typer.Argument(
        ..., help="Scenario YAML file (format: docs/scenario-format.md).", show_default=False
    ),
    engine: str = typer.Option(
        "spark", help="spark: PySpark Structured Streaming; sim: simulator."
    ),
    master: str = typer.Option(
        "local[2]",
        help="Spark master: local[*], local[N] (N up to this machine's cores) or "
        "spark://HOST:PORT (a standalone cluster, e.g. headroom cluster up's).",
    ),
    master_ui: str | None = typer.Option(
        None,
        help="The standalone master's web UI, http://HOST:PORT (an elastic scenario reads "
        "the cluster's free cores there).",
    ),
    duration: float | None = typer.Option(
        None, help="Seconds to run (after the warm-up); default: the scenario's duration_s."
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Write the results JSON (summary and per-period series) here."
    ),
    overrides: list[str] | None = typer.Option(
        None, "--set", help="Override a scenario value before validation, path=value; repeatable."
    ),
    source: str = typer.Option(
        "generator",
        help="generator, redis (fed by headroom produce), or files (a directory per stream).",
    ),
    files_dir: Path | None = typer.Option(
        None, help="The files source's directory: files of rows go to <dir>/<stream>/."
    ),
    redis: str = typer.Option("", "--redis", help="Redis URL of the redis source and sink."),
    redis_prefix: str = typer.Option("headroom", help="Redis stream keys: <prefix>:<stream>."),
    sink: str = typer.Option(
        "none", help="Output tuples to: none, memory, console, parquet, json, redis."
    ),
    sink_path: str | None = typer.Option(
        None, help="Directory of the parquet and json sinks; stream key of the redis sink."
    ),
    checkpoint: Path | None = typer.Option(
        None, help="Spark checkpoint directory of this run (default: a fresh temporary one)."
    ),
    warmup: float = typer.Option(
        0.0, help="Seconds of warm-up before the measured run (waiting tuples discarded)."
    ),
    watermark: float = typer.Option(
        DEFAULT_WATERMARK_S,
        help="Seconds a window's event time (arrival) may lag behind the newest before its "
        "state is dropped (a tuple that waited longer is late).",
    ),
    plain: bool = typer.Option(
        False, help="No controller: admit every waiting tuple (the 'plain Spark' baseline)."
    ),
    fixed_pace: bool = typer.Option(
        False,
        help="Start batches one control period apart whatever the targets (a baseline; by "
        "default the tightest target among the loaded classes sets the pace).",
    ),
    declared_costs: bool = typer.Option(
        False,
        help="Keep the operators' declared costs (a baseline; by default they follow the "
        "executor time Spark measures per query branch).",
    ),
    utilization: float = typer.Option(
        DEFAULT_TARGET_UTILIZATION, help="Share of a control period a batch may take."
    ),
    queries: str = typer.Option("one", help=QUERY_LAYOUT_HELP),
    burn_ns: float | None = typer.Option(
        None,
        help="Hash burn only (no JDK to build the exact burn UDF): CPU cost of one repetition, "
        "ns (default: measured at start-up).",
    ),
    log_level: str = typer.Option("WARNING", help="Job log level: DEBUG, INFO, WARNING, ERROR."),
) -> None:
    """Run SCENARIO on Spark (or the simulator) and print the per-class table."""
    import tempfile

    loaded = _load(scenario, overrides)
    if engine == "sim":
        _run_simulated(loaded, out)
        return
    if engine != "spark":
        typer.echo(f"--engine must be spark or sim, got {engine!r}", err=True)
        raise typer.Exit(code=2)
    _check_run_master(master)
    from spark_runner.engine.results import measurement_problem
    from spark_runner.job.main import configure_logging, results_of
    from spark_runner.job.main import run as run_job

    with tempfile.TemporaryDirectory(prefix="headroom-run-") as tmp:
        results_path = out or Path(tmp) / "results.json"
        try:
            settings = EngineSettings(
                source=source,  # type: ignore[arg-type]
                redis_url=redis,
                redis_prefix=redis_prefix,
                files_dir=str(files_dir or ""),
                sink=sink,  # type: ignore[arg-type]
                sink_path=sink_path or None,
                target_utilization=utilization,
                warmup_s=warmup,
                watermark_s=watermark,
                plain=plain,
                fixed_pace=fixed_pace,
                declared_costs=declared_costs,
                queries=queries,  # type: ignore[arg-type]
                burn_repetition_ns=burn_ns,
                master_ui_url=master_ui,
            )
        except ValueError as exc:
            typer.echo(f"invalid option: {exc}", err=True)
            raise typer.Exit(code=2) from None
        snapshot = _run_snapshot(
            loaded,
            settings,
            master=master,
            checkpoint=checkpoint or Path(tmp) / "checkpoint",
            duration_s=(duration or loaded.duration_s) + warmup,
            results_path=results_path,
        )
        configure_logging(log_level)
        started = time.perf_counter()
        code = run_job(snapshot)
        wall_s = time.perf_counter() - started
        if code != 0:
            raise typer.Exit(code=code)
        results = results_of(results_path)
    _echo_run(spark_header(results), results)
    typer.echo(f"ran {wall_s:.1f} s of wall time on {master}")
    if out is not None:
        typer.echo(f"results: {out}")
    problem = measurement_problem(results)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(code=EXIT_TOO_FEW_PERIODS)


def _echo_run(header: str, results: dict[str, Any]) -> None:
    """A run's header, per-class table and control actions."""
    from spark_runner.control.report import class_table

    typer.echo(header)
    typer.echo(class_table(results))
    for line in action_lines(results):
        typer.echo(line)


def _load(scenario: Path, overrides: list[str] | None) -> Scenario:
    """The validated scenario; its problems on stderr and exit code 2."""
    from spark_runner.scenario import ScenarioError, load_scenario

    try:
        return load_scenario(scenario, overrides or ())
    except ScenarioError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2) from None


def _run_simulated(loaded: Scenario, out: Path | None) -> dict[str, Any]:
    """Simulate, print the table and the control actions, write the results."""
    from spark_runner.control.report import run_header
    from spark_runner.control.results import write_results
    from spark_runner.sim import run_scenario

    started = time.perf_counter()
    results = run_scenario(loaded)
    wall_s = time.perf_counter() - started
    _echo_run(run_header(results), results)
    typer.echo(f"simulated {loaded.duration_s:g} s in {wall_s:.2f} s of wall time")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_results(results, out)
        typer.echo(f"results: {out}")
    return results


def _run_snapshot(
    loaded: Scenario,
    settings: EngineSettings,
    *,
    master: str,
    checkpoint: Path,
    duration_s: float,
    results_path: Path,
) -> JobSnapshot:
    """The job snapshot of ``headroom run`` on Spark: the scenario, no API behind it."""
    from spark_runner.scenario.compose import scenario_live_config
    from spark_runner.scenario.snapshots import job_snapshot

    return job_snapshot(
        loaded.model_dump(mode="json"),
        control=scenario_live_config(loaded),
        job_id=0,
        api_url="",
        checkpoint_dir=str(checkpoint),
        spark_master=master,
        control_period_s=loaded.control.period_s,
        duration_s=duration_s,
        engine=settings,
        results_path=str(results_path),
    )


def _check_run_master(master: str) -> None:
    """``--master`` as the control plane would take it, except that a standalone master
    named here needs no admin's listing: this command runs Spark as its own user."""
    from spark_runner.contract.masters import STANDALONE_MASTER, check_master, usable_cores
    from spark_runner.core.errors import ParameterError

    try:
        check_master(
            master,
            cores=usable_cores(),
            allowed={master} if STANDALONE_MASTER.fullmatch(master) else set(),
            others="spark://HOST:PORT (a standalone cluster)",
        )
    except ParameterError as exc:
        typer.echo(f"invalid option: --master: {exc}", err=True)
        raise typer.Exit(code=2) from None


def spark_header(results: dict[str, Any]) -> str:
    """One line naming the scenario and the Spark run."""
    sc, eng = results["scenario"], results["engine"]
    return (
        f"scenario {sc['name']} (format v{sc['version']}), mode {sc['mode']}, engine spark "
        f"({eng.get('master')}, {eng.get('source')} source), {sc['duration_s']:.1f} s measured "
        f"after {eng.get('warmup_s', 0):g} s warm-up, control period {sc['control_period_s']:g} s, "
        f"{eng.get('batches')} batches, {len(results['redistributions'])} redistributions"
    )


ACTIONS_SHOWN = 30
"""The newest control actions a run prints (the results file has them all)."""


def action_lines(results: dict[str, Any]) -> list[str]:
    """A run's control actions, one line each with its verdict (and, for an elastic
    scenario that could not resize, why)."""
    lines: list[str] = []
    scaling = results.get("scaling")
    if scaling and not scaling["enabled"]:
        lines.append(f"elastic capacity off: {scaling['reason']}")
    start = results.get("engine", {}).get("measured_from_s", 0.0) or 0.0
    actions = [ControlAction.model_validate(a) for a in results.get("actions", [])]
    if actions:
        shown = actions[-ACTIONS_SHOWN:]
        left = (
            f", the {len(actions) - len(shown)} earlier in the results file"
            if len(shown) < len(actions)
            else ""
        )
        lines.append(f"control actions ({len(actions)}{left}):")
        lines += [action_line(a, start) for a in shown]
    if scaling and scaling["enabled"] and not scaling_actions(results):
        lines.append("elastic capacity: no resize")
    return lines


@app.command()
def produce(
    scenario: Path = typer.Argument(..., help="Scenario YAML file.", show_default=False),
    redis: str = typer.Option(..., "--redis", help="Redis URL, e.g. redis://127.0.0.1:6379/0."),
    prefix: str = typer.Option("headroom", help="Stream keys: <prefix>:<stream>."),
    payload: str = typer.Option(
        "fields", help="fields: one entry field per column; json: one field 'json' per entry."
    ),
    duration: float | None = typer.Option(
        None, help="Seconds to produce; default: the scenario's duration_s."
    ),
    overrides: list[str] | None = typer.Option(
        None, "--set", help="Override a scenario value before validation, path=value; repeatable."
    ),
) -> None:
    """Replay SCENARIO's streams into Redis Streams in real time (for --source redis)."""
    import redis as redis_lib

    from spark_runner.engine.dataflow.network import stream_specs
    from spark_runner.engine.sources.redis_log import Producer
    from spark_runner.scenario import ScenarioError, load_scenario

    try:
        loaded = load_scenario(scenario, overrides or ())
    except ScenarioError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2) from None
    client = redis_lib.Redis.from_url(redis)
    try:
        client.ping()
    except redis_lib.RedisError as exc:
        typer.echo(f"cannot reach Redis at {redis}: {exc}", err=True)
        raise typer.Exit(code=5) from None
    try:
        producer = Producer(
            client, stream_specs(loaded), prefix, payload=payload, origin_s=time.time()
        )
    except ValueError as exc:
        typer.echo(f"invalid option: {exc}", err=True)
        raise typer.Exit(code=2) from None
    stopping = _stop_on_signals()
    keys = ", ".join(producer.keys().values())
    typer.echo(f"producing {loaded.name} into {keys} for {duration or loaded.duration_s:g} s")
    stats = producer.run(duration or loaded.duration_s, should_stop=stopping.is_set)
    client.close()
    for name, count in stats.appended.items():
        typer.echo(f"{producer.keys()[name]}: {count} entries")


def _stop_on_signals() -> threading.Event:
    """An event set by the first SIGTERM or SIGINT (Ctrl-C): a loop that polls it stops
    cleanly instead of being interrupted."""
    stopping = threading.Event()

    def _stop(_signum: int, _frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    return stopping


def _redact(url: str) -> str:
    """Never print a password that may be part of a database URL."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    credentials, host = rest.rsplit("@", 1)
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in credentials else url


def main() -> None:
    app()

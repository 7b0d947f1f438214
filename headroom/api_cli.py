"""CLI commands over the API: login, classes, their queries, jobs, users."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import typer

from backend.cli import users_app
from headroom.api_client import Api, forget_credentials, save_credentials
from spark_runner.contract.actions import ControlAction, action_line
from spark_runner.contract.snapshot import QUERY_LAYOUT_HELP
from spark_runner.core.class_settings import SETTING_NAMES

auth_app = typer.Typer(help="Log in and out.", no_args_is_help=True)
classes_app = typer.Typer(help="Query classes.", no_args_is_help=True)
jobs_app = typer.Typer(help="Streaming jobs.", no_args_is_help=True)
queries_app = typer.Typer(help="A class's continuous queries.", no_args_is_help=True)
streams_app = typer.Typer(help="Declared streams: the columns queries read.", no_args_is_help=True)
coordinator_app = typer.Typer(
    help="The cluster coordinator: executors divided among a master's jobs by priority.",
    no_args_is_help=True,
)
handoffs_app = typer.Typer(
    help="Move a class between two running jobs, its state not moved.", no_args_is_help=True
)


def _table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    widths = {c: max([len(c)] + [len(_cell(r.get(c))) for r in rows]) for c in columns}
    typer.echo("  ".join(c.ljust(widths[c]) for c in columns))
    for row in rows:
        typer.echo("  ".join(_cell(row.get(c)).ljust(widths[c]) for c in columns))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ",".join(_cell(v.get("name") if isinstance(v, dict) else v) for v in value)
    return str(value)


def _epoch_s(iso: str) -> float:
    """Seconds since the epoch of an API timestamp (one without a zone is UTC)."""
    moment = datetime.fromisoformat(iso)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


@auth_app.command("login")
def login(
    username: str = typer.Option(..., prompt=True),
    password: str = typer.Option(..., prompt=True, hide_input=True),
) -> None:
    """Get a token and keep it (owner-only file) for the other commands."""
    api = Api(token="")
    token = api.call("POST", "/auth/login", json={"username": username, "password": password})
    path = save_credentials(api.settings.public_api_url, token["access_token"])
    typer.echo(f"logged in as {token['username']} ({token['role']}); token kept in {path}")


@auth_app.command("logout")
def logout() -> None:
    Api().call("POST", "/auth/logout")
    forget_credentials()
    typer.echo("logged out")


@classes_app.command("list")
def list_classes() -> None:
    rows = Api().call("GET", "/classes")
    _table(rows, ["id", "name", *(n for n in SETTING_NAMES if n != "manager_params")])


_SET_HELP = f"any other class setting, field=value: {', '.join(SETTING_NAMES)}"


@classes_app.command("create")
def create_class(
    name: str,
    priority: float = typer.Option(...),
    delay_target_s: float = typer.Option(..., "--delay-target-s"),
    manager: str = typer.Option("aloma"),
    tau: tuple[float, float, float, float] = typer.Option(
        (0.2, 0.4, 0.8, 0.95), help="tau0 tau1 tau2 tau3"
    ),
    catch_up: bool = typer.Option(
        False,
        "--catch-up/--no-catch-up",
        help="At start, serve the backlog already in the log instead of shedding first "
        "what is already past the target (a class whose every tuple matters, e.g. billing).",
    ),
    set_: list[str] = typer.Option([], "--set", help=_SET_HELP),
) -> None:
    body = {
        "name": name,
        "priority": priority,
        "delay_target_s": delay_target_s,
        "manager": manager,
        **dict(zip(("tau0", "tau1", "tau2", "tau3"), tau, strict=True)),
        "catch_up": catch_up,
        **_assignments(set_),
    }
    _json(Api().call("POST", "/classes", json=body))


@classes_app.command("update")
def update_class(
    class_id: int,
    set_: list[str] = typer.Option(
        ..., "--set", help="field=value, e.g. delay_target_s=2 or catch_up=true"
    ),
) -> None:
    """Change fields of a class (running jobs get a new configuration version)."""
    _json(Api().call("PATCH", f"/classes/{class_id}", json=_assignments(set_)))


@classes_app.command("delete")
def delete_class(class_id: int) -> None:
    Api().call("DELETE", f"/classes/{class_id}")
    typer.echo(f"class {class_id} deleted")


@queries_app.command("list")
def list_queries(class_id: int) -> None:
    rows = Api().call("GET", f"/classes/{class_id}/queries")
    _table(rows, ["id", "name", "source", "shared", "operators"])


@queries_app.command("add")
def add_query(
    class_id: int,
    name: str = typer.Option(...),
    source: str = typer.Option(..., help="The stream it reads (or query:<shared name>)."),
    sql: str | None = typer.Option(None, help="A Spark SQL SELECT over the source stream."),
    operators: str | None = typer.Option(
        None, help="The operators in the scenario vocabulary, as a JSON list."
    ),
    shared: bool = typer.Option(False, help="Other classes may read its output."),
) -> None:
    """Store a query of CLASS_ID: Spark SQL (--sql) or the scenario vocabulary
    (--operators); the API checks it and answers with what is wrong, and where."""
    if (sql is None) == (operators is None):
        raise typer.BadParameter("give exactly one of --sql and --operators")
    try:
        ops = (
            [{"kind": "sql", "statement": sql}] if sql is not None else json.loads(operators or "")
        )
    except ValueError as exc:
        raise typer.BadParameter(f"--operators is not JSON: {exc}") from None
    body = {"name": name, "source": source, "shared": shared, "operators": ops}
    _json(Api().call("POST", f"/classes/{class_id}/queries", json=body))


@queries_app.command("delete")
def delete_query(class_id: int, query_id: int) -> None:
    Api().call("DELETE", f"/classes/{class_id}/queries/{query_id}")
    typer.echo(f"query {query_id} deleted")


@streams_app.command("list")
def list_streams() -> None:
    rows = Api().call("GET", "/streams")
    _table(rows, ["id", "name", "event_time", "columns"])


@streams_app.command("add")
def add_stream(
    name: str = typer.Option(...),
    columns: str = typer.Option(
        ...,
        help='The columns as a JSON list, e.g. \'[{"name": "amount", "type": "double"}]\' '
        "(docs/scenario-format.md, streams[].columns).",
    ),
    event_time: str | None = typer.Option(None, help="Its timestamp column windows use."),
) -> None:
    """Declare stream NAME's columns; the API checks them and names what is wrong."""
    try:
        declared = json.loads(columns)
    except ValueError as exc:
        raise typer.BadParameter(f"--columns is not JSON: {exc}") from None
    body = {"name": name, "columns": declared, "event_time": event_time}
    _json(Api().call("POST", "/streams", json=body))


@streams_app.command("delete")
def delete_stream(stream_id: int) -> None:
    Api().call("DELETE", f"/streams/{stream_id}")
    typer.echo(f"stream {stream_id} deleted")


@jobs_app.command("list")
def list_jobs() -> None:
    rows = Api().call("GET", "/jobs")
    _table(
        rows, ["id", "status", "spark_master", "classes", "created_by", "started_at", "exit_code"]
    )


@jobs_app.command("start")
def start_job(
    class_id: list[int] = typer.Option(None, "--class-id", help="Repeat; default: all."),
    duration_s: float | None = typer.Option(None),
    rate_per_s: float = typer.Option(200.0),
    manager: str | None = typer.Option(None, help="Use this manager for every class."),
    recommend_only: bool = typer.Option(False),
    source: str = typer.Option(
        "generator", help="generator, or redis (the control plane's streams Redis)."
    ),
    sink: str = typer.Option("none", help="none, parquet, json, or redis."),
    queries: str = typer.Option("one", help=QUERY_LAYOUT_HELP),
    idempotency_key: str | None = typer.Option(None, help="Retry-safe launch key."),
    master: str | None = typer.Option(
        None, help="local[N], or a listed standalone master; default: the API's."
    ),
    elastic: list[str] = typer.Option(
        None, help="name=value of control.elastic's params (GET /elastic): max_executors=3"
    ),
    standby: list[str] = typer.Option(
        None, help="Repeat: a class held in standby, for a hand-off to move here (redis)."
    ),
) -> None:
    body = {
        "spark_master": master,
        "elastic": _assignments(elastic) if elastic else None,
        "class_ids": class_id or None,
        "duration_s": duration_s,
        "rate_per_s": rate_per_s,
        "manager": manager,
        "recommend_only": recommend_only,
        "source": source,
        "sink": sink,
        "queries": queries,
        "standby": standby or [],
    }
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    _json(Api().call("POST", "/jobs", json=body, headers=headers))


@jobs_app.command("stop")
def stop_job(job_id: int) -> None:
    typer.echo(Api().call("POST", f"/jobs/{job_id}/stop")["status"])


@jobs_app.command("restart")
def restart_job(job_id: int) -> None:
    job = Api().call("POST", f"/jobs/{job_id}/restart")
    typer.echo(f"job {job['id']} started as a restart of {job_id}")


@jobs_app.command("log")
def job_log(job_id: int, lines: int = typer.Option(100)) -> None:
    for line in Api().call("GET", f"/jobs/{job_id}/log", params={"lines": lines})["lines"]:
        typer.echo(line)


@jobs_app.command("actions")
def job_actions(
    job_id: int,
    kind: str | None = typer.Option(None, help="only this kind (scale_out, shed_more, ...)"),
    class_name: str | None = typer.Option(None, "--class", help="only this class's"),
    limit: int = typer.Option(200, help="the newest N"),
) -> None:
    """The job's control actions, oldest first: when (s after the job started, or was
    created while pending), what, its trigger, the capacity and shed fraction before and
    after, its verdict."""
    api = Api()
    params: dict[str, Any] = {"limit": limit}
    if kind is not None:
        params["kind"] = kind
    if class_name is not None:
        params["class_name"] = class_name
    log = api.call("GET", f"/jobs/{job_id}/actions", params=params)
    job = api.call("GET", f"/jobs/{job_id}")
    since_s = _epoch_s(job["started_at"] or job["created_at"])
    taus = ", ".join(f"{k} {v:g}" for k, v in log["thresholds"].items())
    typer.echo(f"job {job_id}: thresholds {taus or '-'}")
    actions = [ControlAction.model_validate(a) for a in log["actions"]]
    if log["truncated"]:
        typer.echo(f"(only the newest {limit}; raise --limit for older ones)")
    for action in actions:
        typer.echo(action_line(action, since_s))
    if not actions:
        typer.echo("no control actions yet")


@jobs_app.command("config")
def job_config(job_id: int) -> None:
    """The live configuration and its versions (pending / applied)."""
    _json(Api().call("GET", f"/jobs/{job_id}/config"))


_SET_HELP = "path=value: recommend_only=true, classes.ads.delay_target_s=3"


@jobs_app.command("tune")
def tune_job(job_id: int, set_: list[str] = typer.Option(..., "--set", help=_SET_HELP)) -> None:
    """Store a new configuration version; the running job applies it."""
    config = Api().call("PATCH", f"/jobs/{job_id}/config", json=parse_change(set_))
    typer.echo(f"version {config['latest_version']} stored; pending: {config['pending_versions']}")


@jobs_app.command("preview")
def preview_job(job_id: int, set_: list[str] = typer.Option(..., "--set", help=_SET_HELP)) -> None:
    """What a change would do, before it is stored: the job's last minutes replayed through
    the simulator (mean violation, loss per class), and how far off the checked
    predictions of this kind of change were."""
    what_if = Api().call("POST", f"/jobs/{job_id}/config/preview", json=parse_change(set_))
    typer.echo(f"the job's last {what_if['window_s']:g} s replayed")
    rows = [
        {"class_name": name, **{f"{k}_{f}": c[k][f] for k in c for f in c[k]}}
        for name, c in what_if["classes"].items()
    ]
    columns = [
        f"{k}_{f}"
        for k in ("measured", "current", "proposed")
        for f in ("mean_violation_s", "loss_fraction")
    ]
    _table(rows, ["class_name", *columns])
    record = what_if["track_record"]
    if not what_if["kind"]:
        typer.echo("the change changes nothing in force")
    elif record is None:
        typer.echo(f"no prediction of a change to {what_if['kind']} checked yet")
    else:
        typer.echo(
            f"checked predictions of changes to {record['kind']} ({record['changes']}): "
            f"mean |error| {_cell(record['violation_error_s'])} s of mean violation, "
            f"{_cell(record['loss_error'])} of loss"
        )


def parse_change(items: list[str]) -> dict[str, Any]:
    """``path=value`` assignments (values read as JSON where they are) as a nested change
    body."""
    return nested_change(_assignments(items))


def nested_change(values: Mapping[str, Any]) -> dict[str, Any]:
    """A change body from dotted paths and their values (``classes.ads.priority``)."""
    body: dict[str, Any] = {}
    for path, value in values.items():
        node = body
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return body


@jobs_app.command("summary")
def job_summary(job_id: int) -> None:
    """Per-class QoS and QoD of a run (its warm-up periods, counted apart, are left out
    of the response times and violations)."""
    summary = Api().call("GET", f"/jobs/{job_id}/summary")
    _table(
        summary["classes"],
        [
            "class_name",
            "delay_target_s",
            "mean_response_time_s",
            "p95_response_time_s",
            "max_response_time_s",
            "mean_violation_s",
            "loss_fraction",
            "oracle_gap",
            "periods",
            "warmup_periods",
        ],
    )


@users_app.command("list")
def list_users() -> None:
    """Accounts, through the API (admins only)."""
    _table(Api().call("GET", "/users"), ["id", "username", "role", "active", "created_at"])


@users_app.command("create")
def create_user(
    username: str,
    role: str = typer.Option("viewer", help="viewer, operator or admin"),
    password: str = typer.Option(..., prompt=True, hide_input=True, confirmation_prompt=True),
) -> None:
    """Create an account through the API (admins only)."""
    user = Api().call(
        "POST", "/users", json={"username": username, "password": password, "role": role}
    )
    typer.echo(f"user {user['username']} ({user['role']}) created")


def _assignments(items: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{item!r} is not field=value")
        try:
            values[key] = json.loads(raw)
        except ValueError:
            values[key] = raw
    return values


@coordinator_app.command("status")
def coordinator_status() -> None:
    """Each coordinated master: its executors, the allocation in force (executors each
    running elastic job may hold), its last round and what stopped it allocating."""
    read = Api().call("GET", "/clusters")
    if not read["clusters"]:
        typer.echo("no coordinated master (HEADROOM_CLUSTER_EXECUTORS)")
    for cluster in read["clusters"]:
        given = ", ".join(f"job {j}: {n}" for j, n in cluster["allocation"].items()) or "-"
        ran = cluster["round_at_s"]
        when = "never" if ran is None else datetime.fromtimestamp(ran, UTC).isoformat()
        typer.echo(f"{cluster['master']}  {cluster['executors']} executors  [{given}]")
        typer.echo(
            f"  last round {when}" + (f"; {cluster['problem']}" if cluster["problem"] else "")
        )


@coordinator_app.command("log")
def coordinator_log(
    master: str = typer.Option(..., help="the coordinated master (spark://HOST:PORT)"),
    limit: int = typer.Option(200, help="the newest N"),
) -> None:
    """A master's changes of allocation, oldest first: when, why, each job's executors
    before -> after."""
    read = Api().call("GET", "/clusters/reallocations", params={"master": master, "limit": limit})
    if read["truncated"]:
        typer.echo(f"(only the newest {limit}; raise --limit for older ones)")
    for change in read["reallocations"]:
        when = datetime.fromtimestamp(change["at_s"], UTC).strftime("%Y-%m-%d %H:%M:%S")
        jobs = sorted(set(change["before"]) | set(change["after"]), key=int)
        moves = ", ".join(
            f"job {j} {change['before'].get(j, '-')} -> {change['after'].get(j, '-')}" for j in jobs
        )
        typer.echo(f"{when}  {change['why']}: {moves}")
    if not read["reallocations"]:
        typer.echo("no reallocation yet")


@handoffs_app.command("move")
def handoff_move(
    class_name: str = typer.Argument(..., help="The class to move."),
    origin: int = typer.Option(..., "--from", help="The job computing it now."),
    target: int = typer.Option(..., "--to", help="A running job holding it in standby."),
) -> None:
    """Move CLASS at the next boundary of its windows that both jobs can make: the
    origin computes its tuples before the switch, the target those from it on."""
    body = {"class_name": class_name, "origin_job_id": origin, "target_job_id": target}
    made = Api().call("POST", "/handoffs", json=body)
    typer.echo(
        f"hand-off {made['id']}: {class_name} from job {origin} to job {target} at "
        f"{_clock(made['switch_s'])}; both jobs apply their ranges by "
        f"{_clock(made['deadline_s'])}, the origin is done after {_clock(made['done_after_s'])}"
    )


@handoffs_app.command("list")
def handoff_list(
    class_name: str | None = typer.Option(None, "--class", help="only this class's"),
    limit: int = typer.Option(50, help="the newest N"),
) -> None:
    """The hand-offs, newest first, with their state: planned (both jobs take their
    ranges), switching (past the switch; the origin finishes its late tuples), done or
    failed (and why)."""
    params: dict[str, Any] = {"limit": limit}
    if class_name is not None:
        params["class_name"] = class_name
    read = Api().call("GET", "/handoffs", params=params)
    rows = [
        {**h, "switch": _clock(h["switch_s"]), "in_s": round(h["switch_s"] - read["now_s"], 1)}
        for h in read["handoffs"]
    ]
    columns = ["id", "class_name", "origin_job_id", "target_job_id", "state", "switch", "in_s"]
    _table(rows, [*columns, "reason"])


def _clock(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).strftime("%Y-%m-%d %H:%M:%S")

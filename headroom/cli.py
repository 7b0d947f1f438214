"""``headroom``: run the product and its jobs from the command line."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType

import typer

from backend.cli import users_app
from headroom.api_cli import auth_app, classes_app, jobs_app

app = typer.Typer(help="QoS control plane for Spark Structured Streaming.", no_args_is_help=True)
app.add_typer(users_app, name="users")
app.add_typer(auth_app, name="auth")
app.add_typer(classes_app, name="classes")
app.add_typer(jobs_app, name="jobs")


@app.command()
def migrate() -> None:
    """Bring the configured database to the newest schema (alembic upgrade head)."""
    from backend.migrate import upgrade
    from backend.settings import get_settings

    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.sqlalchemy_url)
    typer.echo(f"database at head: {_redact(settings.sqlalchemy_url)}")


@app.command()
def up(dashboard: bool = typer.Option(True, help="Also serve the dashboard.")) -> None:
    """Migrate the database, then run the API, a Celery worker and the dashboard."""
    from backend.cli import bootstrap_first_admin
    from backend.settings import get_settings
    from backend.stack import Stack

    migrate()
    settings = get_settings()
    password_file = bootstrap_first_admin(settings)
    stack = Stack.from_settings(settings)
    stopping = False

    def _stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
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
        while not stopping:
            for service in stack.services:
                if service.process.poll() is not None:
                    typer.echo(f"{service.name} exited; see {service.log_path}", err=True)
                    stopping = True
            time.sleep(0.5)
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
    from spark_runner.scenario import ScenarioError, load_scenario
    from spark_runner.sim import run_scenario, write_results
    from spark_runner.sim.report import class_table, run_header

    try:
        loaded = load_scenario(scenario, overrides or ())
    except ScenarioError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2) from None
    started = time.perf_counter()
    results = run_scenario(loaded)
    wall_s = time.perf_counter() - started
    typer.echo(run_header(results))
    typer.echo(class_table(results))
    typer.echo(f"simulated {loaded.duration_s:g} s in {wall_s:.2f} s of wall time")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_results(results, out)
        typer.echo(f"results: {out}")
    if plot is not None:
        from spark_runner.sim.plot import PlotUnavailable, plot_results

        try:
            plot.parent.mkdir(parents=True, exist_ok=True)
            plot_results(results, plot)
        except PlotUnavailable as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(code=3) from None
        typer.echo(f"plot: {plot}")


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

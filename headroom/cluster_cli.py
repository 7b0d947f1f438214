"""``headroom cluster``: a Spark standalone cluster on this machine, for development.

``up`` starts a master and workers that keep running after the command returns (each
in its own session, logs under ``--dir``), ``status`` says whether they still run,
``down`` stops them. An elastic scenario then runs on it with
``headroom run --master <master_url> --master-ui <ui_url>``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from spark_runner.engine.cluster import (
    ClusterError,
    StandaloneCluster,
    saved_cluster,
    stop_saved,
)

cluster_app = typer.Typer(help="A Spark standalone cluster on this machine.", no_args_is_help=True)

DEFAULT_DIR = Path("~/.headroom/cluster")
STATE_FILE = "cluster.json"

DirOption = typer.Option(DEFAULT_DIR, "--dir", help="Where its logs, work dirs and state go.")


@cluster_app.command()
def up(
    workers: int = typer.Option(2, min=1, max=64, help="Workers to start."),
    cores: int = typer.Option(1, min=1, max=256, help="Cores each worker offers."),
    memory: str = typer.Option("1g", help="Memory each worker offers (Spark's syntax: 1g)."),
    directory: Path = DirOption,
) -> None:
    """Start a master and WORKERS workers; print the master's URL and its web UI."""
    work = directory.expanduser()
    state = work / STATE_FILE
    running = saved_cluster(state)
    if running is not None and running["alive"]:
        typer.echo(f"a cluster already runs: {running['master_url']} (headroom cluster down)")
        raise typer.Exit(code=1)
    cluster = StandaloneCluster(work, workers=workers, cores=cores, memory=memory)
    try:
        cluster.start()
    except ClusterError as exc:  # what it launched is stopped
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=3) from None
    cluster.save(state)
    typer.echo(f"master   {cluster.master_url}")
    typer.echo(f"web UI   {cluster.ui_url}")
    typer.echo(f"workers  {workers} x {cores} core(s), {memory}; logs in {work}")


@cluster_app.command()
def status(directory: Path = DirOption) -> None:
    """Whether the cluster ``up`` started still runs."""
    state = saved_cluster(directory.expanduser() / STATE_FILE)
    if state is None:
        typer.echo("no cluster")
        raise typer.Exit(code=1)
    alive, total = len(state["alive"]), len(state["pids"])
    typer.echo(f"{state['master_url']} ({state['ui_url']}): {alive} of {total} processes run")
    if alive < total:
        raise typer.Exit(code=1)


@cluster_app.command()
def down(directory: Path = DirOption) -> None:
    """Stop the cluster ``up`` started."""
    stopped = stop_saved(directory.expanduser() / STATE_FILE)
    typer.echo(f"stopped {stopped} processes" if stopped else "no cluster was running")

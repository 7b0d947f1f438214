"""``headroom coordinator`` against a real API process: a master the coordinator divides,
two jobs started on it from the CLI, a round on the same database, and what an operator
reads of it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.db import make_engine, make_session_factory, session_scope
from backend.stack import Stack
from tests.browser.harness import issue_ingest_token
from tests.e2e.conftest import ADMIN, ADMIN_PASSWORD, api_only
from tests.e2e.test_cli import cli, post_as_job

MASTER = "spark://127.0.0.1:7077"


@pytest.fixture
def coordinated(tmp_path: Path) -> Iterator[Stack]:
    env = {"HEADROOM_ALLOWED_SPARK_MASTERS": MASTER, "HEADROOM_CLUSTER_EXECUTORS": f"{MASTER}=3"}
    with api_only(tmp_path, env) as stack:
        yield stack


def _report(stack: Stack, job_id: int, token: str, loads: dict[str, float]) -> None:
    """One period of a running job on one executor: its classes' loads in executors."""
    now = time.time()
    samples = [
        {"class_name": name, "seq": 0, "t": now, "period_s": 1.0, "arrived_count": 10,
         "output_count": 10, "arrival_rate": 10.0, "load": load, "executors": 1,
         "job_usage": sum(loads.values())}
        for name, load in loads.items()
    ]  # fmt: skip
    post_as_job(stack, job_id, token, "metrics", {"samples": samples})


def test_an_operator_starts_jobs_on_a_coordinated_master_and_reads_the_allocation(
    coordinated: Stack,
) -> None:
    from backend.coordinator.service import run_round
    from backend.jobs.models import Job

    login = cli(coordinated, "auth", "login", "--username", ADMIN, "--password", ADMIN_PASSWORD)
    assert login.returncode == 0, login.stderr
    status = cli(coordinated, "coordinator", "status")
    assert status.returncode == 0, status.stderr
    assert f"{MASTER}  3 executors  [-]" in status.stdout and "last round never" in status.stdout
    for name, priority in (("gold", "6"), ("silver", "3")):
        made = cli(coordinated, "classes", "create", name, "--priority", priority,
                   "--delay-target-s", "2")  # fmt: skip
        assert made.returncode == 0, made.stderr
    for class_id in ("1", "2"):
        started = cli(coordinated, "jobs", "start", "--class-id", class_id, "--master", MASTER,
                      "--elastic", "max_executors=2")  # fmt: skip
        assert started.returncode == 0 and '"spark_master": "spark://' in started.stdout, (
            started.stderr
        )
    bad = cli(coordinated, "jobs", "start", "--master", MASTER, "--elastic", "max_executors=0")
    assert bad.returncode == 1 and "max_executors" in bad.stderr

    tokens = {job: issue_ingest_token(coordinated.settings, job) for job in (1, 2)}
    _report(coordinated, 1, tokens[1], {"gold": 1.5})
    _report(coordinated, 2, tokens[2], {"silver": 1.5})
    engine = make_engine(coordinated.settings.sqlalchemy_url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            for job_id in (1, 2):  # what the launch records once the process runs
                job = session.get(Job, job_id)
                assert job is not None
                job.status = "running"
        with session_scope(make_session_factory(engine)) as session:
            run_round(session, MASTER, 3, time.time())
    finally:
        engine.dispose()

    # gold (priority 6) is given the executor its load needs first; silver what is left
    status = cli(coordinated, "coordinator", "status")
    assert f"{MASTER}  3 executors  [job 1: 2, job 2: 1]" in status.stdout, status.stdout
    log = cli(coordinated, "coordinator", "log", "--master", MASTER)
    assert log.returncode == 0, log.stderr
    assert "the cluster's jobs changed: job 1 started, job 2 started" in log.stdout
    assert "job 1 - -> 2, job 2 - -> 1" in log.stdout
    actions = cli(coordinated, "jobs", "actions", "2")
    assert "allocate: the cluster's jobs changed" in actions.stdout, actions.stdout
    assert "may hold - -> 1 executors" in actions.stdout
    unknown = cli(coordinated, "coordinator", "log", "--master", "spark://elsewhere:7077")
    assert unknown.returncode == 1 and "must be a coordinated master" in unknown.stderr
